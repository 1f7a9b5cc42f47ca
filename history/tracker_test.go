package history_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlite"
)

func openStore(t *testing.T, dir string) history.Store { return openStoreTB(t, dir) }

func openStoreTB(t testing.TB, dir string) history.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newTracker(t *testing.T, s history.Store, c *clock, cfg history.TrackerConfig) *history.Tracker {
	t.Helper()
	cfg.Store = s
	history.SetClock(&cfg, c.now)
	tr, err := history.NewTracker(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func addr(i int) history.Key {
	return history.Key{Protocol: "zandronum", Addr: "198.51.100." + strconv.Itoa(i%250) + ":" + strconv.Itoa(10000+i)}
}

// TestFloodBoundedByMax views 10,000 distinct servers with a tracked set of
// 100: the set, in memory and in the store, holds exactly the 100 viewed last.
func TestFloodBoundedByMax(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	tr := newTracker(t, s, c, history.TrackerConfig{Max: 100})
	ctx := context.Background()
	for i := range 2000 { // twenty times the bound (each view is a store write: -race makes them slow)
		c.add(time.Millisecond)
		tr.View(ctx, addr(i), history.SourceView)
		if tr.Len() > 100 {
			t.Fatalf("tracked set grew to %d after %d views", tr.Len(), i+1)
		}
	}
	got, err := s.Tracked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("store tracks %d servers, want 100", len(got))
	}
	for i, sv := range got {
		if want := addr(1900 + i); sv.Key != want {
			t.Fatalf("tracked[%d] = %s, want %s (the most recently viewed, oldest first)", i, sv.Key, want)
		}
	}
	// Viewing a tracked server again makes it the most recent: the next new
	// one evicts 1901, not 1900.
	tr.View(ctx, addr(1900), history.SourceView)
	tr.View(ctx, addr(20000), history.SourceView)
	if !tr.IsTracked(addr(1900)) || tr.IsTracked(addr(1901)) {
		t.Error("eviction is not least recently viewed")
	}
}

// TestBudget tracks 1,000 servers with a budget of 10 probes/s and runs the
// scheduler over 10 simulated minutes: probes never exceed the budget in
// any window, and every server is sampled once per 100 s, not per minute.
// (The defaults, 5,000 servers at 50/s, schedule alike; the smaller set
// keeps the flood's store writes quick under -race.)
func TestBudget(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const max, budget = 1000, 10
	tr := newTracker(t, s, c, history.TrackerConfig{Max: max, Budget: budget, Every: time.Minute})
	ctx := context.Background()
	for i := range 4 * max { // a flood: four times the set's bound
		tr.View(ctx, addr(i), history.SourceView)
	}
	if tr.Len() != max {
		t.Fatalf("tracked %d, want %d", tr.Len(), max)
	}
	if iv := tr.Interval(); iv != 100*time.Second {
		t.Errorf("interval %v, want 100s (%d servers / %d per s)", iv, max, budget)
	}
	const step = 250 * time.Millisecond
	perServer := map[history.Key]int{}
	var perTick []int
	for range int(10 * time.Minute / step) {
		c.add(step)
		ks := tr.Due(c.now())
		perTick = append(perTick, len(ks))
		for _, k := range ks {
			perServer[k]++
		}
	}
	// Any window of w ticks may see at most Budget*w*step + Budget/4.
	for w := 1; w <= 40; w *= 2 {
		limit := int(budget*float64(w)*step.Seconds()) + budget/4 + 1
		for i := 0; i+w <= len(perTick); i++ {
			sum := 0
			for _, n := range perTick[i : i+w] {
				sum += n
			}
			if sum > limit {
				t.Fatalf("%d probes in %v from tick %d; budget allows %d", sum, time.Duration(w)*step, i, limit)
			}
		}
	}
	total := 0
	for _, n := range perTick {
		total += n
	}
	if total < budget*600*9/10 {
		t.Errorf("only %d probes in 600 s; the budget allows %d", total, budget*600)
	}
	for k, n := range perServer {
		if n > 7 { // 600 s / 100 s = 6, plus the first
			t.Fatalf("%s sampled %d times in 10 minutes", k, n)
		}
	}
}

func TestIdleAndRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	tr := newTracker(t, s, c, history.TrackerConfig{Idle: 24 * time.Hour})
	ctx := context.Background()
	tr.View(ctx, addr(1), history.SourceView)
	c.add(12 * time.Hour)
	tr.View(ctx, addr(2), history.SourceMaster)
	tr.Due(c.now())
	s.Close()

	// A restart loads the tracked set.
	s = openStore(t, dir)
	defer s.Close()
	tr = newTracker(t, s, c, history.TrackerConfig{Idle: 24 * time.Hour})
	if tr.Len() != 2 || !tr.IsTracked(addr(1)) || !tr.IsTracked(addr(2)) {
		t.Fatalf("after restart: %d tracked", tr.Len())
	}
	// 13 h later server 1 was viewed 25 h ago: untracked; 2 stays.
	c.add(13 * time.Hour)
	tr.Due(c.now())
	if tr.IsTracked(addr(1)) || !tr.IsTracked(addr(2)) {
		t.Errorf("idle: tracked(1)=%v tracked(2)=%v", tr.IsTracked(addr(1)), tr.IsTracked(addr(2)))
	}
	got, err := s.Tracked(ctx)
	if err != nil || len(got) != 1 || got[0].Key != addr(2) || got[0].Source != history.SourceMaster {
		t.Errorf("store tracks %+v, %v", got, err)
	}
	// A smaller Max on the next start drops the oldest.
	tr.View(ctx, addr(3), history.SourceView)
	tr = newTracker(t, s, c, history.TrackerConfig{Max: 1})
	if tr.Len() != 1 || !tr.IsTracked(addr(3)) {
		t.Errorf("Max 1 kept %d", tr.Len())
	}
}

// TestRunRecords runs the real loop with a probe that answers at once.
func TestRunRecords(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	var calls atomic.Int32
	probe := func(ctx context.Context, k history.Key) history.Sample {
		calls.Add(1)
		return history.Sample{State: history.StateOnline, Players: 3, MaxPlayers: 8, Map: "MAP07", Name: "one"}
	}
	tr, err := history.NewTracker(context.Background(), history.TrackerConfig{Store: s, Probe: probe})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	tr.View(ctx, k, history.SourceView)
	done := make(chan struct{})
	go func() {
		if err := tr.Run(ctx); err != nil {
			t.Error(err)
		}
		close(done)
	}()
	for {
		got, err := s.Samples(ctx, k, time.Now().Add(-time.Minute), time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			if got[0].Players != 3 || got[0].Map != "MAP07" {
				t.Errorf("sample %+v", got[0])
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("no sample recorded")
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if n := calls.Load(); n != 1 {
		t.Errorf("%d probes within the first 10 s; the minimum interval allows 1", n)
	}
}

// TestPin pins a server that was never viewed: it is sampled at once and
// then at its own interval (not the set's), floored by PinFloor, survives
// a flood of views past Max and the idle pass, and after Unpin leaves the
// set (never viewed) or stays as its views say.
func TestPin(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	watched := history.Key{Protocol: "quake3", Addr: "127.0.0.1:27960"}
	floor := func(k history.Key) time.Duration {
		if k == watched {
			return time.Second
		}
		return history.MinSampleEvery
	}
	tr := newTracker(t, s, c, history.TrackerConfig{Max: 10, Every: time.Minute, Idle: time.Hour, PinFloor: floor})
	ctx := context.Background()
	if err := tr.Pin(ctx, watched, 100*time.Millisecond); err != nil { // floored to 1 s
		t.Fatal(err)
	}
	other := addr(999)
	if err := tr.Pin(ctx, other, 0); err != nil { // DefaultPinEvery
		t.Fatal(err)
	}
	if got := tr.Pinned(); got[watched] != time.Second || got[other] != history.DefaultPinEvery {
		t.Fatalf("pinned %v", got)
	}
	for i := range 50 { // a flood of views past Max
		tr.View(ctx, addr(i), history.SourceView)
	}
	if !tr.IsTracked(watched) || !tr.IsTracked(other) || tr.Len() != 12 {
		t.Fatalf("after the flood: watched %v, other %v, %d tracked (want 10 viewed + 2 pinned)", tr.IsTracked(watched), tr.IsTracked(other), tr.Len())
	}
	count := map[history.Key]int{}
	for range int(2 * time.Hour / (250 * time.Millisecond)) { // two hours: the viewed ones go idle
		c.add(250 * time.Millisecond)
		for _, k := range tr.Due(c.now()) {
			count[k]++
		}
	}
	if n := count[watched]; n < 7100 || n > 7201 { // once a second for 7,200 s
		t.Errorf("watched sampled %d times in 2 h, want about 7,200", n)
	}
	if n := count[other]; n < 239 || n > 241 { // every 30 s
		t.Errorf("other pinned sampled %d times in 2 h, want 240", n)
	}
	if tr.Len() != 2 || !tr.IsTracked(watched) {
		t.Errorf("after 2 idle hours: %d tracked, watched %v (want only the pinned)", tr.Len(), tr.IsTracked(watched))
	}
	tr.Unpin(ctx, watched)
	if tr.IsTracked(watched) {
		t.Error("unpinned, never viewed: still tracked")
	}
	got, err := s.Tracked(ctx)
	if err != nil || len(got) != 1 || got[0].Key != other || got[0].Source != history.SourceWatch {
		t.Errorf("store tracks %+v, %v", got, err)
	}
	// A pinned server that is also viewed stays tracked after Unpin.
	tr.View(ctx, other, history.SourceView)
	tr.Unpin(ctx, other)
	if !tr.IsTracked(other) || len(tr.Pinned()) != 0 {
		t.Errorf("viewed and unpinned: tracked %v, pinned %v", tr.IsTracked(other), tr.Pinned())
	}
}
