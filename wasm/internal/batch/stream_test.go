package batch

import (
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/internal/toyproto"
)

// TestBatchStream: a stream protocol's conversation says so on OPEN, and
// its STEPs take the relay's CHUNKs as they come, done with the reply.
func TestBatchStream(t *testing.T) {
	h := tb.next + 1
	got := runJS(t, reqOpenBytes(toyproto.TCPProtocol, "players", "false"))
	if !strings.HasPrefix(got, `[{"handle":`+strconv.Itoa(h)+`,"stream":true,"send":[`) {
		t.Fatalf("OPEN = %s", got)
	}
	reply := string(toyproto.TCPMessage("R"+toyproto.ServerName)) + string(toyproto.TCPMessage("E"))
	got = runJS(t, reqStepBytes(h, reply[:5]), reqStepBytes(h, reply[5:]))
	if !strings.HasPrefix(got, `[{"send":[],"done":false},{"send":[],"done":true,"summary":{`) || !strings.Contains(got, toyproto.ServerName) {
		t.Fatalf("STEPs = %s", got)
	}
}
