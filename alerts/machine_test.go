package alerts

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

// step is one sample of a scenario and the kinds it must tell.
type step struct {
	at    time.Duration // after t0; 0 means 30 s after the previous step
	s     Sample
	tells string // the kinds told, space-separated
}

func on(players ...string) Sample {
	return Sample{State: StateOnline, Name: "Srv", Map: "map01", Players: players, PlayersComplete: true, NumPlayers: len(players), MaxPlayers: 4}
}
func st(state string) Sample             { return Sample{State: state, Err: "no answer"} }
func withMap(s Sample, m string) Sample  { s.Map = m; return s }
func withName(s Sample, n string) Sample { s.Name = n; return s }
func partial(s Sample) Sample            { s.PlayersComplete = false; return s }
func count(s Sample, n, max int) Sample  { s.NumPlayers, s.MaxPlayers = n, max; return s }

var updown = Watch{ID: "w", Server: Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}, Down: true, Up: true, Malformed: true}

func run(t *testing.T, w Watch, steps []step) (State, [][]Event) {
	t.Helper()
	var s State
	var all [][]Event
	at := time.Duration(0)
	for i, sp := range steps {
		if sp.at != 0 {
			at = sp.at
		} else if i > 0 {
			at += 30 * time.Second
		}
		sp.s.Time = t0.Add(at)
		// Every state goes through JSON, as it would through a database.
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(back), normal(s)) {
			t.Fatalf("step %d: state does not survive JSON:\n%+v\n%+v", i, s, back)
		}
		var ev []Event
		s, ev = Next(w, back, sp.s)
		var kinds []string
		for _, e := range ev {
			kinds = append(kinds, string(e.Kind))
		}
		if got := strings.Join(kinds, " "); got != sp.tells {
			t.Errorf("step %d (%s at %v): told %q, want %q", i, sp.s.State, at, got, sp.tells)
		}
		all = append(all, ev)
	}
	return s, all
}

// normal makes nil and empty slices and time zones compare equal.
func normal(s State) State {
	if len(s.Players) == 0 {
		s.Players = nil
	}
	for _, p := range []*time.Time{&s.Last, &s.RunSince, &s.CondSince, &s.ToldAt, &s.ToldSince, &s.BlindSince, &s.CapStart} {
		*p = p.UTC()
	}
	return s
}

func rep(n int, sp step) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = sp
	}
	return out
}

func seq(parts ...[]step) []step        { return slices.Concat(parts...) }
func one(s Sample, tells string) []step { return []step{{s: s, tells: tells}} }

func TestNextRules(t *testing.T) {
	quiet := func(s Sample) []step { return one(s, "") }
	cases := []struct {
		name  string
		w     Watch
		steps []step
	}{
		{"first answer tells nothing", updown, quiet(on())},
		{"down after three samples", updown, seq(quiet(on()), quiet(st(StateOffline)), quiet(st(StateOffline)), one(st(StateOffline), "down"), quiet(st(StateOffline)))},
		{"unreachable is down", updown, seq(quiet(on()), rep(2, step{s: st(StateUnreachable)}), one(st(StateUnreachable), "down"))},
		{"down from the start", updown, seq(quiet(st(StateOffline)), quiet(st(StateOffline)), one(st(StateOffline), "down"))},
		{"a single lost sample", updown, seq(quiet(on()), quiet(st(StateOffline)), quiet(on()), quiet(st(StateOffline)), quiet(on()))},
		{"flapping under the threshold", updown, seq(quiet(on()),
			quiet(st(StateOffline)), quiet(st(StateOffline)), quiet(on()),
			quiet(st(StateOffline)), quiet(st(StateOffline)), quiet(on()),
			quiet(st(StateUnreachable)), quiet(st(StateOffline)), quiet(on()))},
		{"flapping over the threshold tells each way", updown, seq(quiet(on()),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"), one(on(), "up"),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"), one(on(), "up"))},
		{"up only after a down was told", Watch{ID: "w", Server: updown.Server, Up: true, Malformed: true}, seq(quiet(on()),
			rep(4, step{s: st(StateOffline)}), quiet(on()))},
		{"down without up", Watch{ID: "w", Server: updown.Server, Down: true}, seq(quiet(on()),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"), quiet(on()),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"))},
		{"rate-limited and banned are answers", updown, seq(quiet(on()),
			rep(5, step{s: st(StateRateLimited)}), rep(5, step{s: st(StateBanned)}), quiet(on()))},
		{"rate-limited breaks a down run", updown, seq(quiet(on()),
			rep(2, step{s: st(StateOffline)}), quiet(st(StateRateLimited)), rep(2, step{s: st(StateOffline)}), quiet(on()))},
		{"malformed is its own event", updown, seq(quiet(on()),
			rep(2, step{s: st(StateMalformed)}), one(st(StateMalformed), "malformed"), quiet(st(StateMalformed)), one(on(), "up"))},
		{"down then malformed then up", updown, seq(quiet(on()),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"),
			rep(2, step{s: st(StateMalformed)}), one(st(StateMalformed), "malformed"), one(on(), "up"))},
		{"down after a time", Watch{ID: "w", Server: updown.Server, Down: true, Up: true, DownAfter: 90 * time.Second}, seq(quiet(on()),
			rep(3, step{s: st(StateOffline)}), one(st(StateOffline), "down"), one(on(), "up"))},
		{"refused and limited are never down", updown, seq(quiet(on()),
			rep(10, step{s: st(StateRefused)}), one(st(StateLimited), "cannot-check"), quiet(st(StateRefused)), one(on(), "checking"))},
		{"refused neither counts nor breaks a run", updown, seq(quiet(on()),
			quiet(st(StateOffline)), quiet(st(StateRefused)), quiet(st(StateOffline)), quiet(st(StateLimited)), one(st(StateOffline), "down"))},
		{"an unknown state is blind", updown, seq(quiet(on()), quiet(st("sideways")), quiet(on()))},
		{"resend while down", Watch{ID: "w", Server: updown.Server, Down: true, Up: true, Resend: 2 * time.Minute}, seq(quiet(on()),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"),
			rep(3, step{s: st(StateOffline)}), one(st(StateOffline), "still-down"),
			rep(3, step{s: st(StateOffline)}), one(st(StateOffline), "still-down"), one(on(), "up"))},
		{"map and name", Watch{ID: "w", Server: updown.Server, MapChange: true, NameChange: true}, seq(quiet(on()),
			one(withMap(on(), "map02"), "map"), one(withName(withMap(on(), "map03"), "New"), "name map"), quiet(withName(withMap(on(), "map03"), "New")),
			quiet(st(StateRateLimited)), quiet(withName(withMap(on(), "map03"), "New")))},
		{"a colour change is no name change", Watch{ID: "w", Server: updown.Server, NameChange: true}, seq(quiet(withName(on(), "\x1cRSrv")), quiet(withName(on(), "\x1cGSrv\n")))},
		{"at least, full, empty", Watch{ID: "w", Server: updown.Server, AtLeast: 2, Full: true, Empty: true}, seq(quiet(on()),
			quiet(on("a")), one(on("a", "b"), "at-least"), quiet(on("a", "b", "c")), one(on("a", "b", "c", "d"), "full"),
			quiet(on("a", "b", "c")), one(on("a", "b", "c", "d"), "full"), one(on(), "empty"), quiet(on()), one(on("a", "b", "c", "d"), "at-least full"))},
		{"full needs a maximum", Watch{ID: "w", Server: updown.Server, Full: true}, seq(quiet(count(on(), 0, 0)), quiet(count(on(), 3, 0)))},
		{"joins and leaves merged", Watch{ID: "w", Server: updown.Server, Joins: true, Leaves: true}, seq(quiet(on("a", "b")),
			one(on("a", "c"), "players"), one(on("a", "c", "c"), "players"), quiet(on("c", "a", "c")), one(on(), "players"))},
		{"joins only", Watch{ID: "w", Server: updown.Server, Joins: true}, seq(quiet(on("a", "b")), one(on("a", "c"), "players"), quiet(on("a")))},
		{"name filter", Watch{ID: "w", Server: updown.Server, Joins: true, Leaves: true, Players: []string{"Boss*", "[EU]*"}}, seq(quiet(on("a")),
			quiet(on("a", "b")), one(on("a", "b", "bossman"), "players"), quiet(on("bossman")), one(on(), "players"), one(on("[eu]x", "e"), "players"))},
		{"checking comes first", Watch{ID: "w", Server: updown.Server, MapChange: true}, seq(quiet(on()), rep(10, step{s: st(StateRefused)}), one(st(StateRefused), "cannot-check"), one(withMap(on(), "map02"), "checking map"))},
		{"partial lists are a new baseline", Watch{ID: "w", Server: updown.Server, Joins: true, Leaves: true}, seq(quiet(on("a")),
			quiet(partial(on("x"))), quiet(on("a", "b")), one(on("a"), "players"))},
		{"a down forgets the players", Watch{ID: "w", Server: updown.Server, Down: true, Up: true, Joins: true, Leaves: true}, seq(quiet(on("a", "b")),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"), one(on("c"), "up"), one(on("c", "d"), "players"))},
		{"mute hides everything inside", Watch{ID: "w", Server: updown.Server, Down: true, Up: true, MapChange: true,
			Mute: []Window{{Start: t0.Add(time.Minute), End: t0.Add(10 * time.Minute)}}}, seq(quiet(on()),
			rep(4, step{s: st(StateOffline)}), quiet(withMap(on(), "map09")), quiet(on()),
			step{at: 11 * time.Minute, s: on()}.list())},
		{"a down begun inside a mute is told once after", Watch{ID: "w", Server: updown.Server, Down: true, Up: true, Resend: time.Hour,
			Mute: []Window{{Start: t0.Add(time.Minute), End: t0.Add(10 * time.Minute)}}}, seq(quiet(on()),
			rep(10, step{s: st(StateOffline)}),
			step{at: 10 * time.Minute, s: st(StateOffline), tells: "down"}.list(), quiet(st(StateOffline)), one(on(), "up"))},
		{"an up inside a mute is told after", Watch{ID: "w", Server: updown.Server, Down: true, Up: true,
			Mute: []Window{{Start: t0.Add(2 * time.Minute), End: t0.Add(10 * time.Minute)}}}, seq(quiet(on()),
			rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"), quiet(on()), quiet(on()),
			step{at: 10 * time.Minute, s: on(), tells: "up"}.list(), quiet(on()))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.w.Validate(nil); err != nil {
				t.Fatal(err)
			}
			run(t, tc.w, tc.steps)
		})
	}
}

func (s step) list() []step { return []step{s} }

func TestNextEventFields(t *testing.T) {
	w := updown
	w.Resend = time.Minute
	_, evs := run(t, w, seq(one(on("p1"), ""), rep(2, step{s: st(StateOffline)}), one(st(StateOffline), "down"), one(on("p2"), "up")))
	down := evs[3][0]
	if down.Watch != "w" || !reflect.DeepEqual(down.Server, w.Server) || !down.Time.Equal(t0.Add(90*time.Second)) || !down.Since.Equal(t0.Add(30*time.Second)) ||
		down.State != StateOffline || down.Err != "no answer" || down.Name != "Srv" || down.Map != "map01" || down.Players != nil {
		t.Errorf("down: %+v", down)
	}
	up := evs[4][0]
	if up.Previous != "down" || !up.Since.Equal(t0.Add(30*time.Second)) || up.State != StateOnline || !slices.Equal(up.Players, []string{"p2"}) {
		t.Errorf("up: %+v", up)
	}
}

func TestNextReplayTellsNothing(t *testing.T) {
	var s State
	samples := []Sample{on(), st(StateOffline), st(StateOffline), st(StateOffline)}
	for i := range samples {
		samples[i].Time = t0.Add(time.Duration(i) * time.Minute)
	}
	var told int
	for _, smp := range samples {
		var ev []Event
		s, ev = Next(updown, s, smp)
		told += len(ev)
	}
	if told != 1 {
		t.Fatalf("told %d events, want 1", told)
	}
	// A restart replays the last samples: nothing again, state unchanged.
	for _, smp := range samples {
		s2, ev := Next(updown, s, smp)
		if len(ev) != 0 || !reflect.DeepEqual(s2, s) {
			t.Fatalf("replay of %v told %v", smp.Time, ev)
		}
	}
}

func TestNextPlayerCap(t *testing.T) {
	w := Watch{ID: "w", Server: updown.Server, Joins: true, Leaves: true, PlayerCap: 3}
	steps := one(on("a"), "")
	for i := range 6 {
		tells := "players"
		switch {
		case i == 3:
			tells = "players-more"
		case i > 3:
			tells = ""
		}
		steps = append(steps, step{s: on("a", "p"+strconv.Itoa(i)), tells: tells})
	}
	// An hour after the first counted event, the count starts again.
	steps = append(steps, step{at: 61*time.Minute + 30*time.Second, s: on("b"), tells: "players"})
	_, evs := run(t, w, steps)
	if more := evs[4][0]; more.Limit != 3 {
		t.Errorf("players-more: %+v", more)
	}
	if e := evs[1][0]; !slices.Equal(e.Joined, []string{"p0"}) || e.Left != nil {
		t.Errorf("first players event: %+v", e)
	}
	if e := evs[2][0]; !slices.Equal(e.Joined, []string{"p1"}) || !slices.Equal(e.Left, []string{"p0"}) {
		t.Errorf("second players event: %+v", e)
	}
}

func TestDiff(t *testing.T) {
	j, l := diff([]string{"a", "a", "b"}, []string{"a", "c", "c"})
	if !slices.Equal(j, []string{"c", "c"}) || !slices.Equal(l, []string{"a", "b"}) {
		t.Fatalf("joined %v left %v", j, l)
	}
}

func TestValidate(t *testing.T) {
	ok := Watch{ID: "w", Server: updown.Server, Down: true}
	partialProto := func(p string) bool { return p != "minecraft" }
	cases := []struct {
		name string
		edit func(*Watch)
		want error
	}{
		{"ok", func(*Watch) {}, nil},
		{"no id", func(w *Watch) { w.ID = " " }, ErrNoID},
		{"no server", func(w *Watch) { w.Server.Addr = "" }, ErrNoServer},
		{"nothing", func(w *Watch) { w.Down = false }, ErrNothingToTell},
		{"negative", func(w *Watch) { w.AtLeast = -1 }, ErrNegative},
		{"resend without down", func(w *Watch) { w.Down, w.Full, w.Resend = false, true, time.Minute }, ErrResendWithout},
		{"up without down", func(w *Watch) { w.Down, w.Up = false, true }, ErrUpWithoutDown},
		{"joins of a sampled list", func(w *Watch) { w.Server.Protocol, w.Joins = "minecraft", true }, ErrPartialPlayers},
		{"joins of a full list", func(w *Watch) { w.Joins = true }, nil},
		{"bad pattern", func(w *Watch) { w.Joins, w.Players = true, []string{"**"} }, ErrBadPattern},
		{"clan tag pattern", func(w *Watch) { w.Joins, w.Players = true, []string{"[x"} }, nil},
		{"names without joins", func(w *Watch) { w.Players = []string{"x"} }, ErrPlayersWithout},
		{"bad window", func(w *Watch) { w.Mute = []Window{{Start: t0, End: t0}} }, ErrBadWindow},
		{"down after too low", func(w *Watch) { w.DownAfter = time.Millisecond }, ErrDownAfterTooLow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := ok
			tc.edit(&w)
			err := w.Validate(partialProto)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errorsIs(err, tc.want)) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		ok            bool
	}{
		{"boss", "boss", true}, {"boss", "bossman", false}, {"boss*", "bossman", true}, {"*man", "bossman", true},
		{"[clan]*", "[clan]alice", true}, {"[clan]*", "c", false}, {"*[eu]*", "x [eu] y", true}, {"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false}, {"*", "", true}, {"", "", true}, {"a**", "a", true}, {"é*", "été", true},
	} {
		if got := glob(tc.pattern, tc.name); got != tc.ok {
			t.Errorf("glob(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}

// The state keeps the last event told, and not one a mute window held.
func TestNextLastTold(t *testing.T) {
	w := updown
	w.Mute = []Window{{Start: t0.Add(10 * time.Minute), End: t0.Add(20 * time.Minute)}}
	var s State
	for i, state := range []string{StateOnline, StateOffline, StateOffline, StateOffline, StateOnline} {
		s, _ = Next(w, s, Sample{Time: t0.Add(time.Duration(i) * time.Minute), State: state})
	}
	if s.LastKind != KindUp || !s.LastAt.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("after down and up: last %q at %v", s.LastKind, s.LastAt)
	}
	for i := range 3 { // down inside the window: held
		s, _ = Next(w, s, Sample{Time: t0.Add(time.Duration(11+i) * time.Minute), State: StateOffline})
	}
	if s.LastKind != KindUp {
		t.Fatalf("a muted down is the last told: %q", s.LastKind)
	}
}
