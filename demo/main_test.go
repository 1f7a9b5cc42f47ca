package demo

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestCloseWithoutCancel: Close alone stops everything Start started, even
// when the caller's context is never cancelled (serve's context lives as
// long as the process).
func TestCloseWithoutCancel(t *testing.T) {
	d, err := Start(context.Background(), Config{Servers: 2})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	goleak.VerifyNone(t)
}
