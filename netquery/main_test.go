package netquery

import (
	"testing"

	"github.com/querylens/querylens/internal/toyproto"
	"go.uber.org/goleak"
)

// TestMain registers the TCP toy (a stream protocol) and fails the run
// when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	toyproto.RegisterTCP()
	goleak.VerifyTestMain(m)
}
