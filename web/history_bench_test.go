package web_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
)

// BenchmarkSample is the sampler's cost per tracked server and sample:
// one status query through the relay's Exchange to a demo server on
// loopback (cache off, so every sample is a real datagram exchange),
// decoded and recorded in SQLite. The baseline is the bare Exchange of
// the same query with no decode and no write.
func BenchmarkSample(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	var tg demo.Target
	for _, x := range d.Targets() {
		if x.Protocol == "zandronum" && x.Behavior == demo.Normal {
			tg = x
		}
	}
	if tg.Addr == "" {
		b.Skip("no normal Zandronum demo server")
	}
	fast := shared.Rate{PerSecond: 1e6, Burst: 1e6}
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheTTL: -1, TargetRate: fast, TargetHostRate: fast},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer rs.Shutdown(context.Background())
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), sqlite.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	c, _ := codecs.Lookup("zandronum")
	k := tg.Ref().Key()

	b.Run("baseline-exchange", func(b *testing.B) {
		defer cpuPerOp(b, bench.ProcessCPU())
		for b.Loop() {
			q, _ := c.NewQuery(nil)
			qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			res, err := rs.Exchange(qctx, "zandronum", tg.Addr, q)
			cancel()
			if err != nil || !res.Done {
				b.Fatalf("exchange: %v %+v", err, res)
			}
		}
	})
	b.Run("probe-and-record", func(b *testing.B) {
		probe := server.Sampler(rs, 2*time.Second)
		at := time.Now()
		defer cpuPerOp(b, bench.ProcessCPU())
		for i := 0; b.Loop(); i++ {
			s := probe(ctx, k)
			if s.State != history.StateOnline {
				b.Fatalf("sample %+v", s)
			}
			s.Key, s.At = k, at.Add(time.Duration(i)*time.Second)
			if err := store.Record(ctx, []history.Sample{s}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuPerOp reports the process CPU time per operation (this process runs
// the relay and the demo server too).
func cpuPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((bench.ProcessCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
