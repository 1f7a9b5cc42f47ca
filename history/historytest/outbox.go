package historytest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/outbox"
)

// OutboxStore is a store of watches and the outbox that can be closed.
type OutboxStore interface {
	outbox.Store
	Close() error
}

// RunOutbox runs the watches' and outbox's suite; open returns a new,
// empty store, which RunOutbox closes.
func RunOutbox(t *testing.T, open func(t *testing.T) OutboxStore) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s outbox.Store)
	}{
		{"Watches", testWatches},
		{"ApplyOnce", testApplyOnce},
		{"ClaimLease", testClaimLease},
		{"RetryFail", testRetryFail},
		{"PruneOutbox", testPruneOutbox},
		{"ConcurrentClaims", testConcurrentClaims},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
}

// The suite's watch and destinations.
var (
	watchDown = alerts.Watch{ID: "w1", Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"},
		Down: true, Up: true, To: []string{"chan", "hook"}}
	dests = []alerts.Destination{
		{Name: "chan", Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/1/secret"},
		{Name: "hook", Kind: alerts.DestWebhook, URL: "https://example.org/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	}
)

func offline(at time.Time) alerts.Sample {
	return alerts.Sample{Time: at, State: alerts.StateOffline, Err: "timeout"}
}

// goDown applies the samples that take watchDown down at T0+3s and
// returns the events of the last one.
func goDown(t *testing.T, s outbox.Store) []alerts.Event {
	t.Helper()
	var events []alerts.Event
	for i := 1; i <= 3; i++ {
		at := T0.Add(time.Duration(i) * time.Second)
		ev, err := s.Apply(ctx(t), watchDown.ID, offline(at), dests, at)
		must(t, err)
		events = append(events, ev...)
	}
	return events
}

func testWatches(t *testing.T, s outbox.Store) {
	c := ctx(t)
	must(t, s.PutWatch(c, watchDown, outbox.OriginFile, T0))
	w2 := alerts.Watch{ID: "w0", Server: alerts.Ref{Protocol: "ogp", Addr: "[::1]:27015"}, Full: true, To: []string{"chan"}}
	must(t, s.PutWatch(c, w2, outbox.OriginAPI, T0))
	ws, err := s.Watches(c)
	must(t, err)
	if len(ws) != 2 || ws[0].Watch.ID != "w0" || ws[1].Watch.ID != "w1" || ws[0].Origin != outbox.OriginAPI ||
		!ws[1].Watch.Down || ws[1].Watch.Server.Addr != watchDown.Server.Addr || !ws[1].Updated.Equal(T0) {
		t.Fatalf("watches: %+v", ws)
	}
	goDown(t, s)
	must(t, s.SetBoard(c, "w1", []string{"111", "222"}, T0.Add(time.Minute)))
	if err := s.SetBoard(c, "nope", nil, T0); !errors.Is(err, outbox.ErrNoWatch) {
		t.Errorf("SetBoard of an unknown watch: %v", err)
	}
	// Putting the watch again (a reload of the file) keeps its state
	// and board.
	changed := watchDown
	changed.Resend = time.Hour
	must(t, s.PutWatch(c, changed, outbox.OriginCLI, T0.Add(2*time.Minute)))
	ws, err = s.Watches(c)
	must(t, err)
	w := ws[1]
	if w.Watch.Resend != time.Hour || w.Origin != outbox.OriginCLI || w.State.Cond != "down" ||
		!w.State.Last.Equal(T0.Add(3*time.Second)) || len(w.Board) != 2 || w.Board[1] != "222" {
		t.Fatalf("after a second put: %+v", w)
	}
	// Deleting takes the rows still to send with it.
	must(t, s.DeleteWatch(c, "w1"))
	ws, err = s.Watches(c)
	must(t, err)
	st, err := s.Stats(c, T0.Add(time.Hour))
	must(t, err)
	if len(ws) != 1 || st.Depth != 0 {
		t.Fatalf("after delete: %d watches, %+v", len(ws), st)
	}
	if _, err := s.Apply(c, "w1", offline(T0.Add(time.Hour)), dests, T0); !errors.Is(err, outbox.ErrNoWatch) {
		t.Errorf("Apply to a deleted watch: %v", err)
	}
}

// testApplyOnce: the transition is told once, with one row per
// destination, and a replayed sample (a restart) adds nothing.
func testApplyOnce(t *testing.T, s outbox.Store) {
	c := ctx(t)
	must(t, s.PutWatch(c, watchDown, outbox.OriginFile, T0))
	events := goDown(t, s)
	if len(events) != 1 || events[0].Kind != alerts.KindDown {
		t.Fatalf("events: %+v", events)
	}
	now := T0.Add(time.Minute)
	for _, sm := range []alerts.Sample{offline(T0.Add(2 * time.Second)), offline(T0.Add(3 * time.Second))} {
		ev, err := s.Apply(c, watchDown.ID, sm, dests, now)
		must(t, err)
		if len(ev) != 0 {
			t.Fatalf("replayed sample told %+v", ev)
		}
	}
	rows, err := s.Claim(c, "a", 10, now, now.Add(time.Minute))
	must(t, err)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want one per destination", len(rows))
	}
	id := events[0].ID()
	want := map[string]alerts.DestKind{"chan": alerts.DestDiscord, "hook": alerts.DestWebhook}
	for _, r := range rows {
		if r.MessageID != id || r.ID != outbox.RowID(id, r.Dest) || r.DestKind != want[r.Dest] || r.Kind != alerts.KindDown ||
			r.Watch != "w1" || r.Attempts != 1 || !r.Created.Equal(T0.Add(3*time.Second)) {
			t.Errorf("row %+v", r)
		}
		if m := alerts.Render(r.DestKind, events[0]); string(m.Body) != string(r.Body) {
			t.Errorf("%s body %s, want %s", r.Dest, r.Body, m.Body)
		}
	}
	// Up again: one more event.
	ev, err := s.Apply(c, watchDown.ID, alerts.Sample{Time: T0.Add(time.Hour), State: alerts.StateOnline, Name: "x"}, dests, now)
	must(t, err)
	if len(ev) != 1 || ev[0].Kind != alerts.KindUp {
		t.Fatalf("up: %+v", ev)
	}
	st, err := s.Stats(c, now)
	must(t, err)
	if st.Depth != 4 {
		t.Errorf("depth %d, want 4", st.Depth)
	}
}

func testClaimLease(t *testing.T, s outbox.Store) {
	c := ctx(t)
	must(t, s.PutWatch(c, watchDown, outbox.OriginFile, T0))
	goDown(t, s)
	now := T0.Add(10 * time.Second)
	if st, err := s.Stats(c, now); err != nil || st.Depth != 2 || !st.OldestDue.Equal(T0.Add(3*time.Second)) {
		t.Fatalf("stats %+v %v", st, err)
	}
	a, err := s.Claim(c, "a", 1, now, now.Add(time.Minute))
	must(t, err)
	b, err := s.Claim(c, "b", 5, now, now.Add(time.Minute))
	must(t, err)
	none, err := s.Claim(c, "c", 5, now.Add(59*time.Second), now.Add(2*time.Minute))
	must(t, err)
	if len(a) != 1 || len(b) != 1 || a[0].ID == b[0].ID || len(none) != 0 {
		t.Fatalf("claims: a %d, b %d, c %d", len(a), len(b), len(none))
	}
	// a's holder stopped: the lease runs out and the row is claimed
	// again, same id, its attempts counted.
	must(t, s.Delivered(c, b[0].ID))
	later := now.Add(time.Minute)
	again, err := s.Claim(c, "c", 5, later, later.Add(time.Minute))
	must(t, err)
	if len(again) != 1 || again[0].ID != a[0].ID || again[0].MessageID != a[0].MessageID || again[0].Attempts != 2 {
		t.Fatalf("reclaimed %+v, want %s with 2 attempts", again, a[0].ID)
	}
	must(t, s.Delivered(c, a[0].ID))
	if st, err := s.Stats(c, later); err != nil || st.Depth != 0 || !st.OldestDue.IsZero() {
		t.Fatalf("stats after delivery %+v %v", st, err)
	}
}

func testRetryFail(t *testing.T, s outbox.Store) {
	c := ctx(t)
	must(t, s.PutWatch(c, watchDown, outbox.OriginFile, T0))
	goDown(t, s)
	now := T0.Add(10 * time.Second)
	rows, err := s.Claim(c, "a", 2, now, now.Add(time.Minute))
	must(t, err)
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	next := now.Add(1500 * time.Millisecond)
	// Another holder's word on a row it does not hold changes nothing.
	must(t, s.Retry(c, rows[0].ID, "b", "stale", now))
	must(t, s.Fail(c, rows[0].ID, "b", "stale", now))
	must(t, s.Retry(c, rows[0].ID, "a", "deliver: 429", next))
	must(t, s.Fail(c, rows[1].ID, "a", "deliver: the destination refused (status 404)", now))
	if got, err := s.Claim(c, "a", 5, next.Add(-time.Millisecond), next.Add(time.Minute)); err != nil || len(got) != 0 {
		t.Fatalf("claimed before its time: %+v %v", got, err)
	}
	got, err := s.Claim(c, "a", 5, next, next.Add(time.Minute))
	must(t, err)
	if len(got) != 1 || got[0].ID != rows[0].ID || got[0].LastError != "deliver: 429" || !got[0].Next.Equal(next) || got[0].Attempts != 2 {
		t.Fatalf("retried row %+v", got)
	}
	failed, err := s.Failed(c, 10)
	must(t, err)
	if len(failed) != 1 || failed[0].ID != rows[1].ID || !failed[0].FailedAt.Equal(now) || failed[0].LastError == "" {
		t.Fatalf("failed %+v", failed)
	}
	// A late Retry of a failed row does not bring it back.
	must(t, s.Retry(c, rows[1].ID, "a", "x", now))
	if st, err := s.Stats(c, next); err != nil || st.Depth != 1 || st.Failed != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

func testPruneOutbox(t *testing.T, s outbox.Store) {
	c := ctx(t)
	w := watchDown
	w.Resend = time.Minute
	must(t, s.PutWatch(c, w, outbox.OriginFile, T0))
	goDown(t, s) // 2 rows
	for i := 1; i <= 3; i++ {
		at := T0.Add(time.Duration(i) * time.Hour)
		_, err := s.Apply(c, w.ID, offline(at), dests, at) // still-down: 2 rows each
		must(t, err)
	}
	now := T0.Add(5 * time.Hour)
	rows, err := s.Claim(c, "a", 2, now, now.Add(time.Minute)) // the oldest two
	must(t, err)
	for _, r := range rows {
		must(t, s.Fail(c, r.ID, "a", "gone", r.Created))
	}
	n, err := s.PruneOutbox(c, T0.Add(time.Minute), 100)
	must(t, err)
	if st, _ := s.Stats(c, now); n != 2 || st.Depth != 6 || st.Failed != 0 {
		t.Fatalf("pruned %d, stats %+v", n, st)
	}
	// The cap deletes the oldest.
	n, err = s.PruneOutbox(c, T0, 4)
	must(t, err)
	st, _ := s.Stats(c, now)
	got, _ := s.Claim(c, "a", 10, now, now.Add(time.Minute))
	if n != 2 || st.Depth != 4 || len(got) != 4 || !got[0].Created.Equal(T0.Add(2*time.Hour)) {
		t.Fatalf("capped: pruned %d, %+v, first %v", n, st, got[0].Created)
	}
}

// testConcurrentClaims: claimers at once never share a row.
func testConcurrentClaims(t *testing.T, s outbox.Store) {
	c := ctx(t)
	for i := range 10 {
		w := watchDown
		w.ID = "w" + strconv.Itoa(i)
		must(t, s.PutWatch(c, w, outbox.OriginFile, T0))
		for j := 1; j <= 3; j++ {
			at := T0.Add(time.Duration(j) * time.Second)
			_, err := s.Apply(c, w.ID, offline(at), dests, at)
			must(t, err)
		}
	}
	SharedClaims(t, []outbox.Store{s, s, s, s}, 20)
}

// SharedClaims has each store claim, one row at a time, from
// concurrent claimers until the outbox is empty, and fails when a row
// is claimed twice or one is left: want rows in all.
func SharedClaims(t *testing.T, stores []outbox.Store, want int) {
	t.Helper()
	now := T0.Add(time.Hour)
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for i, s := range stores {
		holder := "h" + strconv.Itoa(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for {
				rows, err := s.Claim(c, holder, 1, now, now.Add(time.Minute))
				if err != nil {
					t.Error(err)
					return
				}
				if len(rows) == 0 {
					return
				}
				mu.Lock()
				if h, ok := seen[rows[0].ID]; ok {
					t.Errorf("%s claimed by %s and %s", rows[0].ID, h, holder)
				}
				seen[rows[0].ID] = holder
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != want {
		t.Errorf("%d rows claimed, want %d", len(seen), want)
	}
}

// Migration checks that a database an older program left (built by
// openOld, the schema before the watches and the outbox) keeps its
// samples when opened by this one (openNew), which then stores watches.
func Migration(t *testing.T, openOld func(t *testing.T) history.Store, openNew func(t *testing.T) interface {
	history.Store
	outbox.Store
}) {
	c := ctx(t)
	old := openOld(t)
	samples := []history.Sample{online(kA, T0, 3, "map01"), online(kA, T0.Add(time.Minute), 4, "map02"), online(kB, T0, 1, "cp")}
	must(t, old.Track(c, []history.Server{{Key: kA, Source: history.SourceView, LastViewed: T0}}))
	must(t, old.Record(c, samples))
	if _, ok := old.(outbox.Store); ok {
		if _, err := old.(outbox.Store).Watches(c); err == nil {
			t.Fatal("the old schema already has watches")
		}
	}
	must(t, old.Close())

	s := openNew(t)
	defer s.Close()
	got, err := s.Samples(c, kA, T0, T0.Add(time.Hour))
	must(t, err)
	if len(got) != 2 || got[1].Players != 4 || got[1].Map != "map02" {
		t.Fatalf("samples after migrating: %+v", got)
	}
	tr, err := s.Tracked(c)
	must(t, err)
	if len(tr) != 1 || tr[0].Key != kA {
		t.Fatalf("tracked after migrating: %+v", tr)
	}
	hours, err := s.Hours(c, kB, T0, T0.Add(time.Hour))
	must(t, err)
	if len(hours) != 1 || hours[0].Samples != 1 {
		t.Fatalf("hours after migrating: %+v", hours)
	}
	must(t, s.PutWatch(c, watchDown, outbox.OriginFile, T0))
	if ev := goDown(t, s); len(ev) != 1 {
		t.Fatalf("events after migrating: %+v", ev)
	}
}
