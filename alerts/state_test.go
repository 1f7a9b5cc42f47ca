package alerts

import (
	"testing"

	"github.com/querylens/querylens/server"
)

// TestStateNames checks that the state names this package reads are
// package server's, and that every server state has a class here or is
// one of querylens's own (blind). It uses only server.States and
// server.ParseState, so that server's refactoring touches it little.
func TestStateNames(t *testing.T) {
	blind := map[string]bool{StateRefused: true, StateLimited: true}
	for _, name := range []string{StateOnline, StateRateLimited, StateBanned, StateOffline, StateMalformed, StateRefused, StateLimited, StateUnreachable} {
		if _, ok := server.ParseState(name); !ok {
			t.Errorf("package server has no state %q", name)
		}
	}
	for _, s := range server.States() {
		if class(s.String()) == "" && !blind[s.String()] {
			t.Errorf("state %q is new: give it a class (up, down, malformed) or call it blind", s)
		}
	}
}
