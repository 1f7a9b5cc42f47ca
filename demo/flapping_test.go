package demo

import (
	"slices"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake3"
)

// flapSample asks h as querylens's tracker would and returns what the
// alerts machine is fed: offline when nothing answers.
func flapSample(t *testing.T, h Handler, now time.Time) alerts.Sample {
	t.Helper()
	c, err := codecs.Lookup(quake3.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for _, d := range q.Start() {
		for _, r := range h.Respond(d, bmTestFrom, now) {
			answered = true
			if _, _, err := q.Feed(r); err != nil {
				t.Fatalf("Feed: %v", err)
			}
		}
	}
	if !answered {
		return alerts.Sample{Time: now, State: alerts.StateOffline, Err: "no answer"}
	}
	m, err := q.Result(codecs.DecodeOptions{Query: q.Start()[0]})
	if err != nil {
		t.Fatalf("%s: %v", now, err)
	}
	s := alerts.Sample{Time: now, State: alerts.StateOnline, Name: m.Info.Name, Map: m.Info.Map,
		NumPlayers: m.Info.NumPlayers, MaxPlayers: m.Info.MaxPlayers, PlayersComplete: true}
	for _, p := range m.Info.Players {
		s.Players = append(s.Players, p.Name)
	}
	return s
}

func TestFlappingSchedule(t *testing.T) {
	h := Flapping(10*time.Minute, 3*time.Minute, NewQuake3Crowd(1, 30*time.Second))
	base := bmTestTime // a multiple of ten minutes since the epoch
	for _, tc := range []struct {
		at   time.Duration
		down bool
	}{
		{0, true}, {time.Minute, true}, {3*time.Minute - time.Nanosecond, true},
		{3 * time.Minute, false}, {9*time.Minute + 59*time.Second, false},
		{10 * time.Minute, true}, {13 * time.Minute, false},
	} {
		s := flapSample(t, h, base.Add(tc.at))
		if got := s.State == alerts.StateOffline; got != tc.down {
			t.Errorf("at +%s: %s, want down %v", tc.at, s.State, tc.down)
		}
	}
}

func TestFlappingCrowd(t *testing.T) {
	h := NewQuake3Crowd(3, 30*time.Second)
	var prev []string
	full, empty := false, false
	fullSteps := 0
	cycle := 2*CrowdSlots + CrowdFullSteps - 1
	for i := range cycle + 1 {
		s := flapSample(t, h, bmTestTime.Add(time.Duration(i)*30*time.Second))
		if s.MaxPlayers != CrowdSlots || s.NumPlayers != len(s.Players) {
			t.Fatalf("step %d: %+v", i, s)
		}
		full = full || s.NumPlayers == CrowdSlots
		if s.NumPlayers == CrowdSlots {
			fullSteps++
		}
		empty = empty || (i > 0 && s.NumPlayers == 0)
		// One player comes or goes each step, except while it is held full.
		if i > 0 && (s.NumPlayers != CrowdSlots || len(prev) != CrowdSlots) {
			joined, left := 0, 0
			for _, p := range s.Players {
				if !slices.Contains(prev, p) {
					joined++
				}
			}
			for _, p := range prev {
				if !slices.Contains(s.Players, p) {
					left++
				}
			}
			if joined+left != 1 {
				t.Fatalf("step %d: %v after %v", i, s.Players, prev)
			}
		}
		prev = s.Players
	}
	if !full || !empty {
		t.Errorf("full %v, empty %v over a cycle", full, empty)
	}
	// Full long enough for a watch sampling every 10 s at 6 s steps.
	if fullSteps != CrowdFullSteps {
		t.Errorf("full for %d steps, want %d", fullSteps, CrowdFullSteps)
	}
}

// TestFlappingAlerts feeds two hours of the demo's flapping server,
// sampled every 30 s, to the alerts machine: it is told down and up once
// per flap, and full, empty, joins and leaves in between; the same run
// again tells the same.
func TestFlappingAlerts(t *testing.T) {
	w := alerts.Watch{ID: "flap", Server: alerts.Ref{Protocol: quake3.Protocol, Addr: "127.0.0.1:27960"},
		Down: true, Up: true, Full: true, Empty: true, Joins: true, Leaves: true, PlayerCap: 1000}
	run := func() []alerts.Event {
		h := NewFlappingServer(7)
		var st alerts.State
		var all []alerts.Event
		for i := range 240 {
			var ev []alerts.Event
			st, ev = alerts.Next(w, st, flapSample(t, h, bmTestTime.Add(time.Duration(i)*30*time.Second)))
			all = append(all, ev...)
		}
		return all
	}
	events := run()
	count := map[alerts.Kind]int{}
	for _, e := range events {
		count[e.Kind]++
	}
	// Twelve flaps in two hours (the samples start inside a down
	// window): each told down after its third silent sample, up at
	// its first answer.
	if count[alerts.KindDown] != 12 || count[alerts.KindUp] != 12 || count[alerts.KindFull] == 0 ||
		count[alerts.KindEmpty] == 0 || count[alerts.KindPlayers] == 0 {
		t.Errorf("events by kind: %v", count)
	}
	again := run()
	if len(again) != len(events) {
		t.Fatalf("a second run told %d events, the first %d", len(again), len(events))
	}
	for i := range events {
		if events[i].ID() != again[i].ID() {
			t.Fatalf("event %d differs: %+v, %+v", i, events[i], again[i])
		}
	}
}
