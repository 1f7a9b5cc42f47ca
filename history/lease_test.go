package history_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/internal/testpg"
)

// TestLeasesOneSampler runs two trackers sharing one PostgreSQL history on
// one simulated clock: every server is sampled by exactly one of them,
// once per interval; when one stops (dies, without releasing), the other
// samples its servers within two intervals of their last sample.
func TestLeasesOneSampler(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	now := historytest.T0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	type probe struct {
		by string
		at time.Time
	}
	probes := map[history.Key][]probe{}
	const every = 10 * time.Second
	newInstance := func(name string) *history.Tracker {
		st, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		cfg := history.TrackerConfig{
			Store: st, Every: every, Budget: 50, Leases: postgres.NewLeases(st, name),
			Probe: func(ctx context.Context, k history.Key) history.Sample {
				probes[k] = append(probes[k], probe{name, clock()})
				return history.Sample{State: history.StateOnline, Players: 3, MaxPlayers: 8, Map: "MAP01"}
			},
		}
		history.SetClock(&cfg, clock)
		tr, err := history.NewTracker(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b := newInstance("a"), newInstance("b")
	var keys []history.Key
	for i := range 8 {
		k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:" + strconv.Itoa(10666+i)}
		keys = append(keys, k)
		a.View(ctx, k, history.SourceView)
		b.View(ctx, k, history.SourceView)
	}
	const step = 250 * time.Millisecond
	run := func(d time.Duration, trs ...*history.Tracker) {
		for end := clock().Add(d); clock().Before(end); {
			for _, tr := range trs {
				tr.Step(ctx, clock())
			}
			mu.Lock()
			now = now.Add(step)
			mu.Unlock()
		}
	}
	run(60*time.Second, a, b)
	died := clock()
	held := map[history.Key]string{}
	for _, k := range keys {
		ps := probes[k]
		if len(ps) < 5 || len(ps) > 7 {
			t.Errorf("%s sampled %d times in 60 s, want about 6 (every 10 s)", k, len(ps))
		}
		for _, p := range ps {
			if p.by != ps[0].by {
				t.Errorf("%s sampled by both instances: %v", k, ps)
				break
			}
		}
		for i := 1; i < len(ps); i++ {
			if gap := ps[i].at.Sub(ps[i-1].at); gap < every-step {
				t.Errorf("%s sampled twice within %v", k, gap)
			}
		}
		if len(ps) > 0 {
			held[k] = ps[0].by
		}
	}
	// a dies: only b runs on.
	run(40*time.Second, b)
	handed := 0
	for _, k := range keys {
		if held[k] != "a" {
			continue
		}
		handed++
		ps := probes[k]
		var lastA, firstB time.Time
		for _, p := range ps {
			switch {
			case p.by == "a":
				lastA = p.at
			case p.by == "b" && firstB.IsZero() && p.at.After(died.Add(-step)):
				firstB = p.at
			}
		}
		if firstB.IsZero() {
			t.Errorf("%s: b never took over from a", k)
			continue
		}
		if gap := firstB.Sub(lastA); gap > 2*every {
			t.Errorf("%s: b sampled %v after a's last sample, want within two intervals (%v)", k, gap, 2*every)
		}
	}
	if handed == 0 {
		t.Error("a held no server, so no handover was tested")
	}
}
