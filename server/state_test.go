package server

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/relay/wire"
)

// TestStates: names are unique and parse back; the server's states map to
// the history states stored on disk, the relay's and the network's to
// none.
func TestStates(t *testing.T) {
	want := map[State]history.State{Online: history.StateOnline, RateLimited: history.StateRateLimited,
		Banned: history.StateBanned, Offline: history.StateOffline, Malformed: history.StateMalformed}
	seen := map[string]bool{}
	for _, s := range States() {
		if seen[s.String()] {
			t.Errorf("name %q twice", s)
		}
		seen[s.String()] = true
		if p, ok := ParseState(s.String()); !ok || p != s {
			t.Errorf("ParseState(%q) = %v, %v", s, p, ok)
		}
		hs, ok := s.History()
		if hs != want[s] || ok != (want[s] != 0) {
			t.Errorf("%v.History() = %v, %v; want %v", s, hs, ok, want[s])
		}
		if s.Answered() && !s.Recorded() {
			t.Errorf("%v answered but not recorded", s)
		}
	}
	if len(seen) != 8 {
		t.Errorf("%d states, want 8", len(seen))
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want State
	}{
		{"no answer", nil, Offline},
		{"deadline", context.DeadlineExceeded, Offline},
		{"relay timeout", &wire.RefusedError{Code: wire.CodeTimeout, Message: "silent: x"}, Offline},
		{"policy", &wire.RefusedError{Code: wire.CodeDenied, Message: "private: 10.0.0.1:5"}, Refused},
		{"name resolves to a refused address", &wire.RefusedError{Code: wire.CodeResolve, Message: "loopback: h resolves to 127.0.0.1"}, Refused},
		{"name does not resolve", &wire.RefusedError{Code: wire.CodeResolve, Message: "resolve: could not resolve h"}, Unreachable},
		{"relay rate limit", &wire.RefusedError{Code: wire.CodeRateLimited, Message: "target-host: 1.2.3.4"}, Limited},
		{"upstream-cap", &wire.RefusedError{Code: wire.CodeBusy, Message: "upstream-cap: full"}, Limited},
		{"upstream-share", &wire.RefusedError{Code: wire.CodeBusy, Message: "upstream-share: full"}, Limited},
		{"shutting-down", &wire.RefusedError{Code: wire.CodeBusy, Message: "shutting-down: bye"}, Limited},
		{"socket", &wire.RefusedError{Code: wire.CodeInternal, Message: "send: x"}, Unreachable},
		{"dns", &net.DNSError{Err: "no such host", Name: "h"}, Unreachable},
		{"send", errors.New("sendto: network unreachable"), Unreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, detail := Classify(tc.err, time.Second)
			if got != tc.want || detail == "" {
				t.Errorf("Classify = %v %q, want %v", got, detail, tc.want)
			}
			if _, ok := Sample(Report{State: got}); ok != got.Recorded() {
				t.Errorf("Sample recorded %v for %v", ok, got)
			}
		})
	}
}

// TestEchoOptions: the options that only echo or carry a challenge are
// marked so, and only they.
func TestEchoOptions(t *testing.T) {
	want := map[string]bool{"zandronum/time": true, "bloodmasters/token": true, "gamespy2/id": true,
		"ogp/request_id": true, "ogp/challenge": true, "gamespy1/echo": true, "quake3/challenge": true, "doom3/challenge": true,
		"mumble/ident": true, "bedrock/time": true, "fivem/challenge": true,
		"samp/ip": true, "samp/port": true, "vcmp/ip": true, "vcmp/port": true}
	for _, c := range codecs.Protocols() {
		for _, o := range c.Options() {
			if k := c.Name() + "/" + o.Name; o.Echo != want[k] {
				t.Errorf("%s: Echo %v, want %v", k, o.Echo, want[k])
			}
		}
	}
}
