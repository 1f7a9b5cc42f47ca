package alerts

import (
	"testing"

	"github.com/querylens/querylens/server"
)

// TestStateNames checks that the state names this package reads are
// package server's, and that every server state has a class here or is
// one of querylens's own (blind).
func TestStateNames(t *testing.T) {
	blind := map[string]bool{StateRefused: true, StateLimited: true}
	for _, name := range []string{StateOnline, StateRateLimited, StateBanned, StateOffline, StateMalformed, StateRefused, StateLimited, StateUnreachable} {
		if _, ok := server.ParseState(name); !ok {
			t.Errorf("package server has no state %q", name)
		}
	}
	for _, s := range server.States() {
		if class(s.String()) == "" && !blind[s.String()] {
			t.Errorf("state %q has no class", s)
		}
		if s.Answered() != (class(s.String()) == condUp || class(s.String()) == condMalformed) {
			t.Errorf("state %q: answered %v, class %q", s, s.Answered(), class(s.String()))
		}
	}
}
