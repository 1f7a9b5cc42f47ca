package relay

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind: a
// connection's reader or writer, an upstream socket's reader, a WebSocket
// library goroutine, or anything else.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
