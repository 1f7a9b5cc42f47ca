// Package historytest is the conformance suite every history.Store passes.
// An implementation's test calls Run with a function that opens a new,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		historytest.Run(t, func(t *testing.T) history.Store { ... })
//	}
package historytest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
)

// T0 is the suite's fixed clock: every time it writes is relative to it.
var T0 = time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)

// Run runs the suite; open returns a new, empty store, which Run closes.
func Run(t *testing.T, open func(t *testing.T) history.Store) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s history.Store)
	}{
		{"Track", testTrack},
		{"RecordRoundTrip", testRecordRoundTrip},
		{"RangeHalfOpen", testRange},
		{"DuplicateSecond", testDuplicate},
		{"Hours", testHours},
		{"Maps", testMaps},
		{"Prune", testPrune},
		{"UntrackEmpty", testUntrackEmpty},
		{"Invalid", testInvalid},
		{"Concurrent", testConcurrent},
		{"Closed", testClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

var (
	kA = history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	kB = history.Key{Protocol: "ogp", Addr: "[::1]:27015"}
	kC = history.Key{Protocol: "gamespy2", Addr: "example.org:29900"}
)

func online(k history.Key, at time.Time, players int, m string) history.Sample {
	return history.Sample{Key: k, At: at, State: history.StateOnline, Players: players, Bots: players / 2,
		MaxPlayers: 16, Map: m, RTT: 1234567 * time.Nanosecond}
}

func testTrack(t *testing.T, s history.Store) {
	c := ctx(t)
	must(t, s.Track(c, []history.Server{
		{Key: kA, Source: history.SourceView, LastViewed: T0.Add(2 * time.Hour)},
		{Key: kB, Source: history.SourceMaster, LastViewed: T0},
	}))
	// An older view never moves LastViewed back; a newer one moves kB last.
	must(t, s.Track(c, []history.Server{
		{Key: kA, Source: history.SourceMaster, LastViewed: T0},
		{Key: kB, Source: history.SourceView, LastViewed: T0.Add(3 * time.Hour)},
	}))
	got, err := s.Tracked(c)
	must(t, err)
	want := []history.Server{
		{Key: kA, Source: history.SourceView, LastViewed: T0.Add(2 * time.Hour)},
		{Key: kB, Source: history.SourceMaster, LastViewed: T0.Add(3 * time.Hour)},
	}
	equalServers(t, want, got)

	must(t, s.Untrack(c, []history.Key{kA, kC})) // kC was never tracked: not an error
	got, err = s.Tracked(c)
	must(t, err)
	equalServers(t, want[1:], got)

	// Re-tracking takes the new source; kA had no history, so Untrack
	// deleted it and it comes back as new.
	must(t, s.Track(c, []history.Server{{Key: kA, Source: history.SourceDemo, LastViewed: T0}}))
	got, err = s.Tracked(c)
	must(t, err)
	equalServers(t, []history.Server{{Key: kA, Source: history.SourceDemo, LastViewed: T0}, want[1]}, got)

	// A name reported by a sample shows in the tracked set.
	must(t, s.Record(c, []history.Sample{{Key: kB, At: T0, State: history.StateOnline, Name: "Café \u202eevil"}}))
	got, err = s.Tracked(c)
	must(t, err)
	if got[1].Name != "Café \u202eevil" {
		t.Errorf("name = %q, want the sample's", got[1].Name)
	}
}

func testRecordRoundTrip(t *testing.T, s history.Store) {
	c := ctx(t)
	in := []history.Sample{
		online(kA, T0.Add(1500*time.Millisecond), 7, "MAP01"),
		{Key: kA, At: T0.Add(time.Minute), State: history.StateOffline, Players: 9, Map: "ignored"},
		{Key: kA, At: T0.Add(2 * time.Minute), State: history.StateRateLimited},
		{Key: kA, At: T0.Add(3 * time.Minute), State: history.StateBanned},
		{Key: kA, At: T0.Add(4 * time.Minute), State: history.StateMalformed, Synthetic: true},
		online(kB, T0, 1, strings.Repeat("é", 100)), // cut to MaxMap bytes on a rune boundary
	}
	must(t, s.Record(c, in))
	got, err := s.Samples(c, kA, T0, T0.Add(time.Hour))
	must(t, err)
	if len(got) != 5 {
		t.Fatalf("got %d samples of %s, want 5: %+v", len(got), kA, got)
	}
	for i, g := range got {
		w := history.Normalize(in[i])
		w.Name = ""
		if g != w {
			t.Errorf("sample %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got[0].At != T0.Add(time.Second) || got[0].RTT != 1234*time.Microsecond {
		t.Errorf("sample 0 kept %v / %v; want the second and the microsecond", got[0].At, got[0].RTT)
	}
	if got[1].Players != 0 || got[1].Map != "" {
		t.Errorf("offline sample kept players %d map %q", got[1].Players, got[1].Map)
	}
	b, err := s.Samples(c, kB, T0, T0.Add(time.Hour))
	must(t, err)
	if len(b) != 1 || len(b[0].Map) > history.MaxMap || !strings.HasPrefix(strings.Repeat("é", 100), b[0].Map) || len(b[0].Map)%2 != 0 {
		t.Errorf("long map stored as %q", b)
	}
	none, err := s.Samples(c, kC, T0, T0.Add(time.Hour))
	must(t, err)
	if len(none) != 0 {
		t.Errorf("unknown server has samples: %+v", none)
	}
}

func testRange(t *testing.T, s history.Store) {
	c := ctx(t)
	var in []history.Sample
	for i := range 10 {
		in = append(in, online(kA, T0.Add(time.Duration(i)*time.Minute), i, "m"))
	}
	must(t, s.Record(c, in))
	got, err := s.Samples(c, kA, T0.Add(2*time.Minute), T0.Add(5*time.Minute))
	must(t, err)
	if len(got) != 3 || got[0].Players != 2 || got[2].Players != 4 {
		t.Errorf("[2m, 5m) gave %+v, want players 2, 3, 4", got)
	}
}

func testDuplicate(t *testing.T, s history.Store) {
	c := ctx(t)
	must(t, s.Record(c, []history.Sample{online(kA, T0, 5, "a")}))
	must(t, s.Record(c, []history.Sample{online(kA, T0.Add(300*time.Millisecond), 9, "b")}))
	got, err := s.Samples(c, kA, T0, T0.Add(time.Hour))
	must(t, err)
	if len(got) != 1 || got[0].Players != 5 {
		t.Errorf("two samples in one second gave %+v, want the first only", got)
	}
	h, err := s.Hours(c, kA, T0, T0.Add(time.Hour))
	must(t, err)
	if len(h) != 1 || h[0].Samples != 1 {
		t.Errorf("hour counted the duplicate: %+v", h)
	}
}

func testHours(t *testing.T, s history.Store) {
	c := ctx(t)
	in := []history.Sample{
		online(kA, T0.Add(-time.Second), 100, "x"), // previous hour
		online(kA, T0, 4, "x"),
		online(kA, T0.Add(10*time.Minute), 10, "x"),
		{Key: kA, At: T0.Add(20 * time.Minute), State: history.StateOffline},
		online(kA, T0.Add(59*time.Minute+59*time.Second), 6, "x"),
		online(kA, T0.Add(time.Hour), 1, "x"),
	}
	in[2].Synthetic = true
	in[4].MaxPlayers = 32
	must(t, s.Record(c, in))
	got, err := s.Hours(c, kA, T0, T0.Add(2*time.Hour))
	must(t, err)
	want := []history.Hour{
		{Start: T0, Samples: 4, Online: 3, PlayersSum: 20, PlayersMax: 10, BotsMax: 5, MaxPlayers: 32, Synthetic: 1},
		{Start: T0.Add(time.Hour), Samples: 1, Online: 1, PlayersSum: 1, PlayersMax: 1, BotsMax: 0, MaxPlayers: 16},
	}
	if len(got) != len(want) {
		t.Fatalf("hours = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("hour %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func testMaps(t *testing.T, s history.Store) {
	c := ctx(t)
	var in []history.Sample
	for i, m := range []string{"MAP01", "MAP01", "MAP02", "", "MAP03", "MAP01"} {
		in = append(in, online(kA, T0.Add(time.Duration(i)*time.Minute), 1, m))
	}
	in = append(in, history.Sample{Key: kA, At: T0.Add(time.Hour), State: history.StateOffline, Map: "GHOST"})
	must(t, s.Record(c, in))
	got, err := s.Maps(c, kA, T0, 2)
	must(t, err)
	want := []history.MapPlay{
		{Map: "MAP01", First: T0, Last: T0.Add(5 * time.Minute), Samples: 3},
		{Map: "MAP03", First: T0.Add(4 * time.Minute), Last: T0.Add(4 * time.Minute), Samples: 1},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("maps = %+v\nwant %+v", got, want)
	}
	got, err = s.Maps(c, kA, T0.Add(3*time.Minute), 10)
	must(t, err)
	if len(got) != 2 {
		t.Errorf("maps since 3m = %+v, want MAP01 and MAP03", got)
	}
}

func testPrune(t *testing.T, s history.Store) {
	c := ctx(t)
	must(t, s.Track(c, []history.Server{{Key: kA, Source: history.SourceView, LastViewed: T0}}))
	must(t, s.Record(c, []history.Sample{
		online(kA, T0.Add(-20*24*time.Hour), 1, "old"),
		online(kA, T0, 2, "new"),
		online(kB, T0.Add(-20*24*time.Hour), 3, "old"),
	}))
	p, err := s.Prune(c, T0.Add(-history.RawRetention), T0.Add(-history.HourRetention))
	must(t, err)
	if p.Samples != 2 || p.Hours != 0 || p.Servers != 0 {
		t.Errorf("first prune = %+v, want 2 samples", p)
	}
	p, err = s.Prune(c, T0.Add(-history.RawRetention), T0.Add(-10*24*time.Hour))
	must(t, err)
	// kB is untracked and has no history left; kA is tracked and keeps its row.
	if p.Samples != 0 || p.Hours != 2 || p.Servers != 1 {
		t.Errorf("second prune = %+v, want 2 hours, 1 server", p)
	}
	got, err := s.Samples(c, kA, time.Time{}, T0.Add(time.Hour))
	must(t, err)
	if len(got) != 1 || got[0].Map != "new" {
		t.Errorf("after prune, samples = %+v", got)
	}
	// A pruned server comes back when sampled again.
	must(t, s.Record(c, []history.Sample{online(kB, T0, 3, "back")}))
	got, err = s.Samples(c, kB, T0, T0.Add(time.Hour))
	must(t, err)
	if len(got) != 1 {
		t.Errorf("re-recorded server: %+v", got)
	}
}

// testUntrackEmpty: untracking a server that never got a sample deletes
// it at once (a made-up address evicted from the tracked set leaves
// nothing behind); one with history keeps it for its retention.
func testUntrackEmpty(t *testing.T, s history.Store) {
	c := ctx(t)
	must(t, s.Track(c, []history.Server{
		{Key: kA, Source: history.SourceView, LastViewed: T0},
		{Key: kB, Source: history.SourceView, LastViewed: T0},
	}))
	must(t, s.Record(c, []history.Sample{online(kA, T0, 2, "m")}))
	must(t, s.Untrack(c, []history.Key{kA, kB}))
	// Nothing is old enough to age out: only an empty server row could go.
	p, err := s.Prune(c, T0.Add(-history.RawRetention), T0.Add(-history.HourRetention))
	must(t, err)
	if p != (history.Pruned{}) {
		t.Errorf("prune after untrack = %+v, want nothing left to prune", p)
	}
	got, err := s.Samples(c, kA, T0, T0.Add(time.Hour))
	must(t, err)
	if len(got) != 1 {
		t.Errorf("untracked server with history: samples %+v, want 1", got)
	}
}

func testInvalid(t *testing.T, s history.Store) {
	c := ctx(t)
	for _, tc := range []struct {
		name  string
		s     history.Sample
		field string
	}{
		{"no key", history.Sample{At: T0, State: history.StateOnline}, "Key"},
		{"long addr", history.Sample{Key: history.Key{Protocol: "ogp", Addr: strings.Repeat("a", 301)}, At: T0, State: history.StateOnline}, "Key"},
		{"no state", history.Sample{Key: kA, At: T0}, "State"},
		{"bad state", history.Sample{Key: kA, At: T0, State: 99}, "State"},
		{"no time", history.Sample{Key: kA, State: history.StateOnline}, "At"},
		{"negative players", history.Sample{Key: kA, At: T0, State: history.StateOnline, Players: -1}, "Players"},
		{"huge bots", history.Sample{Key: kA, At: T0, State: history.StateOnline, Bots: 1 << 20}, "Bots"},
		{"negative max", history.Sample{Key: kA, At: T0, State: history.StateOnline, MaxPlayers: -1}, "MaxPlayers"},
		{"negative rtt", history.Sample{Key: kA, At: T0, State: history.StateOnline, RTT: -1}, "RTT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The good sample before the bad one must not be written either.
			err := s.Record(c, []history.Sample{online(kA, T0.Add(time.Hour), 1, "m"), tc.s})
			var ie *history.InvalidError
			if !errors.As(err, &ie) || !errors.Is(err, history.ErrInvalid) {
				t.Fatalf("Record = %v, want *InvalidError", err)
			}
			if ie.Field != tc.field || ie.What != "sample 1" {
				t.Errorf("error names %s %s, want sample 1 %s (%v)", ie.What, ie.Field, tc.field, err)
			}
			got, err := s.Samples(c, kA, T0, T0.Add(2*time.Hour))
			must(t, err)
			if len(got) != 0 {
				t.Errorf("a refused batch wrote %+v", got)
			}
		})
	}
	err := s.Track(c, []history.Server{{Key: history.Key{Addr: "x:1"}}})
	var ie *history.InvalidError
	if !errors.As(err, &ie) || ie.Field != "Key" {
		t.Errorf("Track with no protocol = %v", err)
	}
}

func testConcurrent(t *testing.T, s history.Store) {
	c := ctx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			k := history.Key{Protocol: "ogp", Addr: "127.0.0." + strconv.Itoa(w+1) + ":1"}
			for i := range 25 {
				if err := s.Record(c, []history.Sample{online(k, T0.Add(time.Duration(i)*time.Minute), i, "m")}); err != nil {
					errs <- err
					return
				}
				if _, err := s.Samples(c, k, T0, T0.Add(time.Hour)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range 8 {
		k := history.Key{Protocol: "ogp", Addr: "127.0.0." + strconv.Itoa(w+1) + ":1"}
		got, err := s.Samples(c, k, T0, T0.Add(time.Hour))
		must(t, err)
		if len(got) != 25 {
			t.Errorf("%s has %d samples, want 25", k, len(got))
		}
	}
}

func testClosed(t *testing.T, s history.Store) {
	c := ctx(t)
	must(t, s.Close())
	if err := s.Record(c, []history.Sample{online(kA, T0, 1, "m")}); !errors.Is(err, history.ErrClosed) {
		t.Errorf("Record after Close = %v", err)
	}
	if _, err := s.Tracked(c); !errors.Is(err, history.ErrClosed) {
		t.Errorf("Tracked after Close = %v", err)
	}
	if err := s.Close(); !errors.Is(err, history.ErrClosed) {
		t.Errorf("second Close = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equalServers(t *testing.T, want, got []history.Server) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("tracked = %+v\nwant %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.Source != w.Source || !g.LastViewed.Equal(w.LastViewed) {
			t.Errorf("tracked[%d] = %+v, want %+v", i, g, w)
		}
	}
}
