package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/internal/testpg"
	"github.com/querylens/querylens/internal/testredis"
	"github.com/querylens/querylens/relay/client"
)

// countingServer runs a demo handler on a loopback socket and counts the
// queries it receives.
type countingServer struct {
	pc      *net.UDPConn
	queries atomic.Int64
	wg      sync.WaitGroup
}

func startCounting(t testing.TB, h demo.Handler) *countingServer {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &countingServer{pc: pc}
	s.wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			s.queries.Add(1)
			for _, r := range h.Respond(append([]byte(nil), buf[:n]...), from, time.Now()) {
				pc.WriteToUDPAddrPort(r, from)
			}
		}
	})
	t.Cleanup(func() { pc.Close(); s.wg.Wait() })
	return s
}

func (s *countingServer) addr() string { return s.pc.LocalAddr().String() }

// instance is one `querylens serve` running in process.
type instance struct {
	base string
	errb *syncBuffer
	stop func()
}

// startInstances starts n serve instances with o (on free loopback ports)
// and stops them when the test ends.
func startInstances(t testing.TB, n int, o serveOptions) []*instance {
	var out []*instance
	for range n {
		ctx, cancel := context.WithCancel(context.Background())
		errb := &syncBuffer{}
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: errb}
		ready := make(chan string, 1)
		done := make(chan error, 1)
		o := o
		o.addr = "127.0.0.1:0"
		go func() { done <- e.runServe(ctx, o, ready) }()
		select {
		case base := <-ready:
			in := &instance{base: base, errb: errb}
			var once sync.Once
			in.stop = func() {
				once.Do(func() {
					cancel()
					// serve's own bounds on stopping add up to ~20 s (the
					// sampler's probe and lease release, then 10 s for the
					// relay's and the HTTP server's shutdown): wait past them,
					// and say where it hangs if it does.
					select {
					case <-done:
					case <-time.After(time.Minute):
						var stacks strings.Builder
						pprof.Lookup("goroutine").WriteTo(&stacks, 1)
						t.Errorf("serve did not stop within a minute; its log:\n%s\ngoroutines:\n%s", errb.String(), stacks.String())
					}
				})
			}
			t.Cleanup(in.stop)
			out = append(out, in)
		case err := <-done:
			cancel()
			t.Fatalf("serve: %v\n%s", err, errb.String())
		}
	}
	return out
}

func (in *instance) get(t testing.TB, path string) (int, string) {
	resp, err := http.Get(in.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// askZandronum queries target through the relay at c and reports whether
// the answer was the server's data (not "too soon", not silence).
func askZandronum(ctx context.Context, c *client.Client, target string) (bool, string) {
	codec, err := codecs.Lookup("zandronum")
	if err != nil {
		return false, err.Error()
	}
	q, err := codec.NewQuery(nil)
	if err != nil {
		return false, err.Error()
	}
	res, err := c.Exchange(ctx, "zandronum", target, q)
	if err != nil {
		return false, err.Error()
	}
	if !res.Done {
		return false, "no complete answer"
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		return false, err.Error()
	}
	if m.Kind != codecs.KindResponse {
		return false, "answer of kind " + string(m.Kind) + " " + m.Denied
	}
	return true, ""
}

// TestScaleOut runs three serve instances sharing one Redis in front of a
// Zandronum server that answers one query per address every 10 s (the
// demo's rate-limited server; every instance queries from 127.0.0.1).
// Clients on every instance ask it continuously for 12 s; Redis is killed
// at 3 s and started again, empty, at 5 s. Every client must get the
// server's data every time, and the server must receive one query per
// cache TTL (10 s) in total: 2 in 12 s.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("12 s end-to-end run")
	}
	t.Parallel() // 12 s of clients asking: overlaps the other waits
	rds := testredis.Start(t)
	game := startCounting(t, demo.NewZandronum(1, 0, demo.RateLimit))
	o := serveOptions{
		allowTargets: prefixFlag{netip.MustParsePrefix("127.0.0.1/32")},
		redis:        rds.URL(),
		redisTimeout: time.Second, // the race detector on a loaded machine is slow
		cacheTTL:     10 * time.Second,
		ipRate:       10000, // every client is 127.0.0.1, across all instances
		metrics:      true,
	}
	insts := startInstances(t, 3, o)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	const clientsPer = 3
	run := 12 * time.Second
	start := time.Now()
	var asked, answered atomic.Int64
	var failMu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for i, in := range insts {
		for j := range clientsPer {
			wg.Go(func() {
				c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(in.base, "http")+"relay", nil)
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				// Spread the clients so that queries arrive all the time.
				time.Sleep(time.Duration(i*clientsPer+j) * 23 * time.Millisecond)
				for time.Since(start) < run {
					asked.Add(1)
					ok, why := askZandronum(ctx, c, game.addr())
					if ok {
						answered.Add(1)
					} else {
						failMu.Lock()
						failures = append(failures, "instance "+string(rune('0'+i))+" at "+time.Since(start).Round(time.Millisecond).String()+": "+why)
						failMu.Unlock()
					}
					time.Sleep(200 * time.Millisecond)
				}
			})
		}
	}
	time.Sleep(3 * time.Second)
	rds.Stop()
	time.Sleep(time.Second)
	code, body := insts[0].get(t, "readyz")
	_, m := insts[0].get(t, "metrics")
	time.Sleep(time.Second)
	rds.Restart()
	wg.Wait()

	if len(failures) > 0 {
		t.Errorf("%d of %d queries not answered with data:\n%s", len(failures), asked.Load(), strings.Join(failures[:min(len(failures), 20)], "\n"))
		for i, in := range insts {
			t.Logf("instance %d log:\n%s", i, in.errb.String())
		}
	}
	if got := game.queries.Load(); got != 2 {
		t.Errorf("the game server received %d queries in %v, want 2 (one per 10 s cache TTL, for all three instances)", got, run)
	}
	t.Logf("%d queries answered by 3 instances; the game server received %d", answered.Load(), game.queries.Load())
	if code != 200 || !strings.Contains(body, "redis: down") {
		t.Errorf("readyz while Redis was down: %d %q", code, body)
	}
	if !strings.Contains(m, `querylens_relay_dependency_up{name="redis"} 0`) {
		t.Errorf("metrics while Redis was down lack dependency_up 0")
	}
	// Every instance found Redis again by itself.
	for i, in := range insts {
		deadline := time.Now().Add(5 * time.Second)
		for {
			code, body := in.get(t, "readyz")
			if code == 200 && strings.HasPrefix(body, "ready\n") && strings.Contains(body, "redis: up") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("instance %d readyz after Redis came back: %d %q", i, code, body)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestServeHistoryPostgres starts two demo instances keeping their history
// in one PostgreSQL database: both start (the schema is created once), the
// demo's synthetic day lands in PostgreSQL, and /readyz names it.
func TestServeHistoryPostgres(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	o := serveOptions{demo: true, demoServers: 2, metrics: true}
	o.history = historyOptions{enabled: true, every: history.MinSampleEvery, idle: history.DefaultTrackIdle,
		max: history.DefaultTrackMax, budget: history.DefaultBudget, db: url}
	insts := startInstances(t, 2, o)
	// On a loaded machine a write may time out and /readyz say degraded
	// until the next one lands: wait for up, as a load balancer would.
	deadline := time.Now().Add(30 * time.Second)
	for i, in := range insts {
		for {
			code, body := in.get(t, "readyz")
			if code == 200 && strings.Contains(body, "postgres: up") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("instance %d readyz: %d %q", i, code, body)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tracked, err := st.Tracked(ctx)
	if err != nil || len(tracked) == 0 {
		t.Fatalf("tracked servers in PostgreSQL: %v %v", tracked, err)
	}
	samples, err := st.Samples(ctx, tracked[0].Key, time.Now().Add(-25*time.Hour), time.Now().Add(time.Hour))
	if err != nil || len(samples) < 100 {
		t.Fatalf("%s has %d samples in PostgreSQL (%v), want the demo's synthetic day", tracked[0].Key, len(samples), err)
	}
}
