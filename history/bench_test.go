package history_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
)

// BenchmarkRecord is the store's cost of one sample (one transaction, as
// the sampler writes), into an empty database and into one already
// holding a day of 5-minute samples for 1,000 servers (288,000 rows).
func BenchmarkRecord(b *testing.B) {
	for _, loaded := range []bool{false, true} {
		name := "empty"
		if loaded {
			name = "loaded-288k"
		}
		b.Run(name, func(b *testing.B) {
			s := openStoreB(b)
			ctx := context.Background()
			end := time.Now().Add(-time.Hour)
			if loaded {
				var all []history.Sample
				for i := range 1000 {
					k := history.Key{Protocol: "zandronum", Addr: "198.51.100." + strconv.Itoa(i%250) + ":" + strconv.Itoa(10000+i)}
					all = append(all, history.Synthesize(history.SyntheticSpec{Key: k, Seed: uint64(i), End: end})...)
				}
				if err := s.Record(ctx, all); err != nil { // one transaction
					b.Fatal(err)
				}
			}
			k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
			at := time.Now()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				sm := history.Sample{Key: k, At: at.Add(time.Duration(i) * time.Second), State: history.StateOnline, Players: i % 16, MaxPlayers: 16, Map: "MAP01", RTT: time.Millisecond}
				if err := s.Record(ctx, []history.Sample{sm}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSummarize is what a status page adds to read its charts: a day
// of 1-minute samples and 30 days of hours.
func BenchmarkSummarize(b *testing.B) {
	s := openStoreB(b)
	ctx := context.Background()
	k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	now := time.Now()
	in := history.Synthesize(history.SyntheticSpec{Key: k, Seed: 1, End: now, Span: 30 * 24 * time.Hour, Step: time.Minute})
	if err := s.Record(ctx, in); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := history.Summarize(ctx, s, k, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchedule is the scheduler's cost per tick with 5,000 tracked
// servers (the default --track-max), reported per tracked server.
func BenchmarkSchedule(b *testing.B) {
	s := openStoreB(b)
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := history.TrackerConfig{Store: s, Max: 5000, Budget: 50}
	history.SetClock(&cfg, c.now)
	tr, err := history.NewTracker(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 5000 {
		tr.View(context.Background(), addr(i), history.SourceView)
	}
	b.ResetTimer()
	for b.Loop() {
		c.add(250 * time.Millisecond)
		tr.Due(c.now())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5000, "ns/server/tick")
}

func openStoreB(b *testing.B) history.Store {
	b.Helper()
	s := openStoreTB(b, b.TempDir())
	b.Cleanup(func() { s.Close() })
	return s
}
