package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind (a probe's
// losing conversations, serve's listeners, the demo's servers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
