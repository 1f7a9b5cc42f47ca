package server

import (
	"strconv"

	"github.com/querylens/querylens/history"
)

// State is what one ask of a server found. It is the one vocabulary of the
// status page, the badge, the card, the sampler and the browser page
// (whose scripts read the names from the generated static/model.js).
//
// The first five are the server's doing and are recorded as history
// samples; the last three are the relay's or the network's, say nothing
// about the server, and are never recorded.
type State uint8

const (
	Online      State = 1 // the server answered with data
	RateLimited State = 2 // the server refused: asked too recently
	Banned      State = 3 // the server refuses this asker
	Offline     State = 4 // timed out: no answer in time
	Malformed   State = 5 // an answer came that does not decode
	Refused     State = 6 // the relay's policy does not allow the address (or the name resolves to one it refuses)
	Limited     State = 7 // the relay's own limits, or it is busy (upstream-cap, upstream-share, shutting-down)
	Unreachable State = 8 // the name does not resolve, or the query could not be sent
	stateEnd    State = 9
)

// stateInfo is each state's name (the browser page's too), label, the
// browser row's short word, and history state (0: never recorded).
var stateInfo = [...]struct {
	name, label, word string
	history           history.State
}{
	Online:      {"online", "Online", "online", history.StateOnline},
	RateLimited: {"rate-limited", "Rate-limited", "rate-limited", history.StateRateLimited},
	Banned:      {"banned", "Banned", "banned", history.StateBanned},
	Offline:     {"offline", "Offline", "timed out", history.StateOffline},
	Malformed:   {"malformed", "Malformed reply", "malformed", history.StateMalformed},
	Refused:     {"refused", "Refused by the relay", "refused", 0},
	Limited:     {"relay-limited", "Limited by the relay", "relay busy", 0},
	Unreachable: {"unreachable", "Unreachable", "unreachable", 0},
}

// States lists every state in order.
func States() []State {
	out := make([]State, 0, stateEnd-1)
	for s := State(1); s < stateEnd; s++ {
		out = append(out, s)
	}
	return out
}

// Valid reports whether s is one of the states above.
func (s State) Valid() bool { return s > 0 && s < stateEnd }

// String is the state's name ("online", "relay-limited").
func (s State) String() string {
	if s.Valid() {
		return stateInfo[s].name
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Label is the state for people ("Limited by the relay").
func (s State) Label() string {
	if s.Valid() {
		return stateInfo[s].label
	}
	return s.String()
}

// Word is the state in a few words for a row of the browser page
// ("timed out").
func (s State) Word() string {
	if s.Valid() {
		return stateInfo[s].word
	}
	return s.String()
}

// ParseState is String's inverse.
func ParseState(name string) (State, bool) {
	for s := State(1); s < stateEnd; s++ {
		if stateInfo[s].name == name {
			return s, true
		}
	}
	return 0, false
}

// Recorded reports whether a sample of s is recorded in the history: the
// server's doing, not the relay's nor the network's.
func (s State) Recorded() bool { return s.Valid() && stateInfo[s].history != 0 }

// Answered reports whether s comes from a reply of the server itself. Only
// such a reply makes a new server trackable: the relay refusing or
// limiting a made-up address says nothing of a server there.
func (s State) Answered() bool {
	switch s {
	case Online, RateLimited, Banned, Malformed:
		return true
	}
	return false
}

// History is s as a history sample's state, and false for the states that
// are never recorded.
func (s State) History() (history.State, bool) {
	if !s.Recorded() {
		return 0, false
	}
	return stateInfo[s].history, true
}
