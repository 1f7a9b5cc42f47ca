package history_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
)

func TestSummarize(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	ctx := context.Background()
	k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	now := time.Date(2026, 5, 1, 12, 2, 30, 0, time.UTC)
	var in []history.Sample
	// The last hour: one sample a minute, online with i%10 players, except
	// every 4th minute offline.
	for i := range 60 {
		at := now.Add(-time.Duration(i) * time.Minute)
		sm := history.Sample{Key: k, At: at, State: history.StateOnline, Players: i % 10, MaxPlayers: 20, Map: "MAP01"}
		if i%4 == 0 {
			sm = history.Sample{Key: k, At: at, State: history.StateOffline}
		}
		in = append(in, sm)
	}
	// Three days ago, one synthetic busy sample: in 7d and 30d, not 24h.
	in = append(in, history.Sample{Key: k, At: now.Add(-72 * time.Hour), State: history.StateOnline, Players: 30, MaxPlayers: 32, Map: "OLD", Synthetic: true})
	if err := s.Record(ctx, in); err != nil {
		t.Fatal(err)
	}
	sum, err := history.Summarize(ctx, s, k, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Ranges) != 3 {
		t.Fatalf("%d ranges", len(sum.Ranges))
	}
	day, week, month := sum.Ranges[0], sum.Ranges[1], sum.Ranges[2]
	for _, tc := range []struct {
		r                                    history.Range
		name                                 string
		points, samples, online, peak, synth int
		uptime                               float64
	}{
		{day, "24h", 288, 60, 45, 9, 0, 0.75},
		{week, "7d", 168, 61, 46, 30, 1, 46.0 / 61},
		{month, "30d", 180, 61, 46, 30, 1, 46.0 / 61},
	} {
		r := tc.r
		if r.Name != tc.name || len(r.Points) != tc.points || r.Samples != tc.samples || r.Online != tc.online ||
			r.Peak != tc.peak || r.Synthetic != tc.synth || math.Abs(r.Uptime-tc.uptime) > 1e-9 {
			t.Errorf("%s: %d points, samples %d online %d peak %d synthetic %d uptime %.3f; want %+v",
				r.Name, len(r.Points), r.Samples, r.Online, r.Peak, r.Synthetic, r.Uptime, tc)
		}
		if !r.To.After(now) || r.To.Sub(now) > r.Step || r.To.Sub(r.From) != time.Duration(tc.points)*r.Step {
			t.Errorf("%s: [%v, %v) does not end at the period holding %v", r.Name, r.From, r.To, now)
		}
	}
	// 24h: the period holding now (12:00-12:05) has samples at 12:02, 12:01,
	// 12:00 (i = 0, 1, 2): 12:02 is offline, 12:01 has 1 player, 12:00 has 2.
	last := day.Points[len(day.Points)-1]
	if last.Samples != 3 || last.Online != 2 || last.Players != 1.5 || last.PlayersMax != 2 {
		t.Errorf("last 5-minute period: %+v", last)
	}
	if !sum.Synthetic() || sum.Empty() {
		t.Error("Synthetic/Empty")
	}
	if len(sum.Maps) != 1 || sum.Maps[0].Map != "MAP01" {
		t.Errorf("maps in the last day: %+v", sum.Maps)
	}
	empty, err := history.Summarize(ctx, s, history.Key{Protocol: "ogp", Addr: "127.0.0.1:1"}, now)
	if err != nil || !empty.Empty() || empty.Synthetic() {
		t.Errorf("unknown server: %+v, %v", empty, err)
	}
}

func TestSynthesize(t *testing.T) {
	k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	end := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := history.Synthesize(history.SyntheticSpec{Key: k, Seed: 7, End: end, Capacity: 12})
	b := history.Synthesize(history.SyntheticSpec{Key: k, Seed: 7, End: end, Capacity: 12})
	if len(a) != 288 || len(b) != 288 {
		t.Fatalf("%d samples, want 288", len(a))
	}
	online, peak, maps := 0, 0, map[string]bool{}
	for i, s := range a {
		if s != b[i] {
			t.Fatal("not deterministic")
		}
		if err := history.CheckSample(i, s); err != nil || !s.Synthetic || !s.At.Before(end) {
			t.Fatalf("sample %d: %+v, %v", i, s, err)
		}
		if s.State == history.StateOnline {
			online++
			peak = max(peak, s.Players)
			maps[s.Map] = true
		}
	}
	if online < 250 || peak == 0 || peak > 12 || len(maps) < 3 {
		t.Errorf("online %d peak %d maps %d: not plausible", online, peak, len(maps))
	}
	off := history.Synthesize(history.SyntheticSpec{Key: k, Seed: 1, End: end, State: history.StateOffline})
	for _, s := range off {
		if s.State != history.StateOffline || s.Players != 0 {
			t.Fatalf("offline spec gave %+v", s)
		}
	}
}
