package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/internal/testpg"
)

// TestBufferedOutage records samples through history.Buffered while the
// PostgreSQL server is killed and started again: nothing is refused, the
// buffer keeps the newest samples up to its bound and counts the rest, and
// what it kept is written once the server is back, without reopening.
func TestBufferedOutage(t *testing.T) {
	pg := testpg.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Open(ctx, pg.FreshURL(t))
	if err != nil {
		t.Fatal(err)
	}
	b := history.NewBuffered(st, history.BufferedConfig{Name: "postgres", Max: 50, Retry: 100 * time.Millisecond, Timeout: 500 * time.Millisecond})
	defer b.Close()
	k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	at := func(i int) time.Time { return historytest.T0.Add(time.Duration(i) * time.Second) }
	sample := func(i int) []history.Sample {
		return []history.Sample{{Key: k, At: at(i), State: history.StateOnline, Players: i % 9, MaxPlayers: 16, Map: "MAP01"}}
	}
	for i := range 10 {
		if err := b.Record(ctx, sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	pg.Stop()
	for i := 10; i < 90; i++ {
		if err := b.Record(ctx, sample(i)); err != nil {
			t.Fatalf("sample %d with the database down: %v", i, err)
		}
	}
	st1 := b.Stats()
	if st1.Up || st1.Buffered != 50 || st1.Overflow != 30 {
		t.Fatalf("stats with the database down: %+v, want down, 50 buffered, 30 dropped", st1)
	}
	if ok, line := b.Healthy(); ok || line == "" {
		t.Fatalf("Healthy with the database down: %v %q", ok, line)
	}
	// A sample no store takes is refused, not buffered.
	if err := b.Record(ctx, []history.Sample{{Key: k, At: at(1)}}); !errors.Is(err, history.ErrInvalid) {
		t.Fatalf("invalid sample: %v", err)
	}
	pg.Restart()
	deadline := time.Now().Add(20 * time.Second)
	for st := b.Stats(); !st.Up || st.Buffered > 0; st = b.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("buffer not written after the restart: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, err := b.Samples(ctx, k, at(0), at(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Fatalf("%d samples stored, want 60 (10 before the outage, the newest 50 during it)", len(got))
	}
	if !got[10].At.Equal(at(40)) || !got[59].At.Equal(at(89)) {
		t.Errorf("kept samples %v..%v, want %v..%v", got[10].At, got[59].At, at(40), at(89))
	}
	hours, err := b.Hours(ctx, k, at(0).Add(-time.Hour), at(0).Add(time.Hour))
	if err != nil || len(hours) != 1 || hours[0].Samples != 60 {
		t.Errorf("hour rollup: %+v %v, want one hour of 60 samples", hours, err)
	}
}
