package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/bench/farm"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/client"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// relaySection runs relay/'s own benchmarks (round trip against direct
// UDP, datagrams per second, memory per idle connection) and parses them,
// then holds e.idleConns idle connections to a relay in a child process
// and measures its memory and a query's round trip meanwhile.
func relaySection(ctx context.Context, e *env) (string, error) {
	var b strings.Builder
	cmd1, ss, err := e.goBenchTime(ctx, "^(BenchmarkRoundTrip|BenchmarkThroughput|BenchmarkRelayProcess)$", "1s", "./relay")
	if err != nil {
		return "", err
	}
	cmd2, mem, err := e.goBenchTime(ctx, "^BenchmarkIdleConnMemory$", "1x", "./relay")
	if err != nil {
		return "", err
	}
	b.WriteString(relayBenchReport(e, cmd1, cmd2, append(ss, mem...)))

	// TCP exchanges, the relay in a child process.
	tcp, err := e.relayTCP(ctx)
	if err != nil {
		return b.String(), fmt.Errorf("TCP exchanges: %w", err)
	}
	b.WriteString(tcp)
	b.WriteString("\n")

	// 10,000 idle connections.
	self, err := os.Executable()
	if err != nil {
		return b.String(), err
	}
	gs2, err := farm.Start(ctx, 1, func(int) demo.Handler { return demo.NewGameSpy2(1, demo.Normal) })
	if err != nil {
		return b.String(), err
	}
	defer gs2.Close()
	var rounds []idleRound
	for round := range e.e2eCount {
		fmt.Fprintf(e.log, "relay: %d idle connections, round %d/%d\n", e.idleConns, round+1, e.e2eCount)
		r, err := holdIdle(ctx, self, e.idleConns, gs2.Targets()[0])
		if err != nil {
			return b.String(), err
		}
		fmt.Fprintf(e.log, "relay: %+v\n", r)
		rounds = append(rounds, r)
	}
	b.WriteString(idleReport(e, rounds))
	return b.String(), nil
}

// idleReport writes the relay section's part on e.idleConns idle
// connections held, from holdIdle's rounds.
func idleReport(e *env, rounds []idleRound) string {
	var b strings.Builder
	med := func(f func(idleRound) float64) float64 {
		var vs []float64
		for _, r := range rounds {
			vs = append(vs, f(r))
		}
		return bench.Median(vs)
	}
	fmt.Fprintf(&b, "### %d idle connections held\n\n", e.idleConns)
	fmt.Fprintf(&b, "A relay in a child process (`benchreport relay-child`: relay.Config with MaxConns and MaxConnsPerIP %d, every connection from 127.0.0.1), "+
		"%d WebSocket connections opened to it (handshake and HELLO each), held %s, checked, then closed; %d rounds, medians. "+
		"Round trips are a GameSpy v2 query to one emulated server, %d alternating with direct UDP, before the connections open and while they are held.\n\n",
		idleCap, e.idleConns, idleHold, e.e2eCount, idleRTTs)
	t := newTable("measure", "value")
	t.add("connections open and answering after the hold", fmt.Sprintf("%s / %d (relay's gauge, counting the round-trip client: %s)", num(med(func(r idleRound) float64 { return float64(r.alive) })), e.idleConns,
		num(med(func(r idleRound) float64 { return r.during.Conns }))))
	t.add("time to open them", ms(med(func(r idleRound) float64 { return r.openMS })))
	t.add("relay heap + stacks per connection", bytesText(med(func(r idleRound) float64 { return (r.during.HeapStack - r.before.HeapStack) / float64(e.idleConns) })))
	t.add("relay resident memory per connection", bytesText(med(func(r idleRound) float64 { return (r.during.RSS - r.before.RSS) / float64(e.idleConns) })))
	t.add("relay goroutines per connection", num(med(func(r idleRound) float64 { return (r.during.Goroutines - r.before.Goroutines) / float64(e.idleConns) })))
	t.add("relay resident memory with them", bytesText(med(func(r idleRound) float64 { return r.during.RSS })))
	b.WriteString(t.String())
	t = newTable("GameSpy v2 query, p50", "direct UDP", "through the relay", "relay ÷ direct")
	for _, row := range []struct {
		name string
		f    func(idleRound) [2]float64
	}{{"relay otherwise idle", func(r idleRound) [2]float64 { return r.rttBefore }}, {fmt.Sprintf("with %d idle connections held", e.idleConns), func(r idleRound) [2]float64 { return r.rttDuring }}} {
		d := med(func(r idleRound) float64 { return row.f(r)[0] })
		v := med(func(r idleRound) float64 { return row.f(r)[1] })
		t.add(row.name, us(d), us(v), ratio(v/d))
	}
	b.WriteString("\n")
	b.WriteString(t.String())
	return b.String()
}

// relayShipped finds the benchmark of the relay as shipped: name itself,
// or name + "/relay=now" while the benchmarks still carry the legacy path
// beside it (relay=before, which this report leaves out).
func relayShipped(ss []bench.Summary, name string) *bench.Summary {
	if s := bench.Find(ss, name+"/relay=now"); s != nil {
		return s
	}
	return bench.Find(ss, name)
}

// relayBenchReport writes the part of the relay section that comes from
// relay/'s own benchmarks: ss from cmd1 (round trip, throughput, the relay
// in a child process) and cmd2 (memory per idle connection).
func relayBenchReport(e *env, cmd1, cmd2 string, ss []bench.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "relay/'s own benchmarks, parsed: %s and %s.\n\n", code(cmd1), code(cmd2))

	// Single-reply exchanges with the relay in its own process.
	const target = 50000
	t := newTable("single-reply exchanges, relay in a child process, 8 connections × 16 open, 64 servers",
		"exchanges/s on this machine", "relay CPU µs per exchange", "exchanges/s on 2 cores (from the relay's CPU time)", "lost")
	var on2cpu []float64
	for _, load := range []string{"quiet", "hog"} {
		s := relayShipped(ss, "BenchmarkRelayProcess/load="+load)
		if s == nil {
			continue
		}
		m := s.Median
		t.add("load="+load, num(m["exchanges/s"]), num(m["relay-cpu-µs/exchange"]), num(m["exchanges/s@2cpu"]), num(m["lost"]))
		on2cpu = append(on2cpu, m["exchanges/s@2cpu"])
	}
	if len(t.rows) > 0 {
		b.WriteString(t.String())
		b.WriteString("\n`load=quiet`: no load of the benchmark's own (other work on the machine shows in the load average above); " +
			"`load=hog`: a busy loop pinned to CPU 0 in another process for the whole run. " +
			"The rate on 2 cores is 2 s of CPU per second divided by the relay process's CPU time per exchange " +
			"(user + system, from getrusage in the child); the load generator and the responders run in the benchmark's own process and are not counted.\n\n")
		lo := slices.Min(on2cpu)
		met := lo >= target
		if met {
			fmt.Fprintf(&b, "**Goal met:** at least %s single-reply exchanges/s on two cores (the relay's own CPU), quiet and with the hog.\n\n", num(target))
		} else {
			fmt.Fprintf(&b, "**Goal not met:** %s single-reply exchanges/s on two cores (the relay's own CPU).\n\n", num(target))
		}
		e.addGoal(met, "single-reply exchanges through the relay, from its own CPU time", "≥ 50,000/s on two cores, quiet and with a core busy",
			"at least "+num(lo)+"/s")
	}

	// The same exchanges with everything in one process.
	t = newTable("throughput in one process (relay + load generator + responders), 8 connections × 16 open, 64 servers",
		"reply datagrams/s", "queries/s", "CPU µs per reply (whole process)", "replies/s on 2 idle cores (from CPU time)", "lost")
	for _, s := range ss {
		r, ok := strings.CutPrefix(s.Name, "BenchmarkThroughput/")
		if !ok || strings.HasSuffix(r, "/relay=before") {
			continue
		}
		m := s.Median
		t.add(strings.TrimSuffix(r, "/relay=now"), num(m["replies/s"]), num(m["queries/s"]), num(m["cpu-µs/reply"]), num(m["replies/s@2cpu"]), num(m["lost"]))
	}
	if len(t.rows) > 0 {
		b.WriteString(t.String())
		b.WriteString("\nHere the load generator's WebSocket client and the responders share the CPU time with the relay (about half of it), " +
			"so the rate on 2 cores is the whole process's, not the relay's.\n\n")
	}

	if rt := relayShipped(ss, "BenchmarkRoundTrip"); rt != nil {
		m := rt.Median
		t = newTable("one query and its reply (loopback responder, cache miss), p50", "direct UDP", "through the relay", "added by the relay", "relay p90")
		t.add("relay as shipped", us(m["direct-p50-µs"]), us(m["relay-p50-µs"]), us(m["added-p50-µs"])+" ("+pct(rt.Spread["added-p50-µs"])+")", us(m["relay-p90-µs"]))
		b.WriteString(t.String())
		b.WriteString("\n")
		e.addGoal(m["added-p50-µs"] <= 100, "round trip added by the relay over direct UDP, p50", "≤ 100 µs",
			fmt.Sprintf("%s (%s against %s)", us(m["added-p50-µs"]), us(m["relay-p50-µs"]), us(m["direct-p50-µs"])))
	}
	if m := bench.Find(ss, "BenchmarkIdleConnMemory"); m != nil {
		fmt.Fprintf(&b, "Memory per idle connection, 1,000 connections (relay in a child process, heap + stacks after GC): **%s** (%d runs).\n\n",
			bytesText(m.Median["bytes/conn"]), m.Runs)
		e.addGoal(m.Median["bytes/conn"] <= 32<<10, "relay memory per idle connection (heap + stacks, 1,000 held)", "≤ 32 KiB", bytesText(m.Median["bytes/conn"]))
	}
	return b.String()
}

const (
	idleCap   = 20000
	idleHold  = 5 * time.Second
	idleRTTs  = 200
	childLife = 3 * time.Minute
)

func us(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

func bytesText(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

func (e *env) goBenchTime(ctx context.Context, pattern, benchtime string, pkgs ...string) (string, []bench.Summary, error) {
	saved := e.benchtime
	e.benchtime = benchtime
	defer func() { e.benchtime = saved }()
	return e.goBench(ctx, pattern, pkgs...)
}

// childStats is what relay-child reports.
type childStats struct {
	HeapStack  float64 `json:"heap_stack"` // heap in use + stacks in use after GC, bytes
	RSS        float64 `json:"rss"`        // VmRSS, bytes
	Goroutines float64 `json:"goroutines"`
	Conns      float64 `json:"conns"` // the relay's connections gauge
}

type idleRound struct {
	before, during       childStats
	openMS               float64
	alive                int
	rttBefore, rttDuring [2]float64 // p50 µs: direct, relay
}

// holdIdle starts a relay child, measures it, opens n idle connections,
// holds them, measures again and closes everything.
func holdIdle(ctx context.Context, self string, n int, target string) (idleRound, error) {
	var r idleRound
	ctx, cancel := context.WithTimeout(ctx, childLife)
	defer cancel()
	ch, err := startChild(ctx, self, "relay-child")
	if err != nil {
		return r, err
	}
	defer ch.stop()
	base := ch.base
	host := strings.TrimPrefix(base, "http://")
	stats := func() (childStats, error) {
		var s childStats
		resp, err := http.Get(base + "/stats")
		if err != nil {
			return s, err
		}
		defer resp.Body.Close()
		return s, json.NewDecoder(resp.Body).Decode(&s)
	}

	rc, err := client.Dial(ctx, "ws://"+host+"/relay", nil)
	if err != nil {
		return r, err
	}
	defer rc.Close()
	if r.rttBefore, err = compareRTT(ctx, rc, target); err != nil {
		return r, err
	}
	if r.before, err = stats(); err != nil {
		return r, err
	}

	conns := make([]net.Conn, n)
	var failed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				c, err := openIdle(ctx, host)
				if err != nil {
					failed.Add(1)
					errOnce.Do(func() { firstErr = err })
					continue
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	r.openMS = float64(time.Since(start).Microseconds()) / 1000
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	if f := failed.Load(); f > 0 {
		return r, fmt.Errorf("%d of %d connections failed, the first: %w", f, n, firstErr)
	}
	select {
	case <-time.After(idleHold):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	if r.during, err = stats(); err != nil {
		return r, err
	}
	if r.rttDuring, err = compareRTT(ctx, rc, target); err != nil {
		return r, err
	}
	// Still open: a read that times out found nothing (no close frame, no EOF).
	var alive atomic.Int64
	next.Store(0)
	for range 64 {
		wg.Go(func() {
			buf := make([]byte, 1)
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				conns[i].SetReadDeadline(time.Now().Add(time.Millisecond))
				_, err := conns[i].Read(buf)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					alive.Add(1)
				}
			}
		})
	}
	wg.Wait()
	r.alive = int(alive.Load())
	return r, nil
}

// compareRTT alternates direct and relayed GameSpy v2 queries to target
// and returns the medians in µs.
func compareRTT(ctx context.Context, rc *client.Client, target string) ([2]float64, error) {
	c, err := codecs.Lookup("gamespy2")
	if err != nil {
		return [2]float64{}, err
	}
	u := &netquery.UDP{Timeout: 2 * time.Second}
	var direct, relayed []float64
	for range idleRTTs {
		for i, ex := range []netquery.Exchanger{u, rc} {
			q, _ := c.NewQuery(nil)
			start := time.Now()
			res, err := ex.Exchange(ctx, "gamespy2", target, q)
			d := float64(time.Since(start).Nanoseconds()) / 1000
			if err != nil {
				return [2]float64{}, err
			}
			if !res.Done {
				return [2]float64{}, errors.New("a GameSpy v2 query got no complete reply")
			}
			if i == 0 {
				direct = append(direct, d)
			} else {
				relayed = append(relayed, d)
			}
		}
	}
	return [2]float64{bench.Median(direct), bench.Median(relayed)}, nil
}

// openIdle makes a WebSocket handshake by hand (the least client memory
// and work, so 10,000 fit in this process) and reads the relay's HELLO.
func openIdle(ctx context.Context, host string) (net.Conn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	key := make([]byte, 16)
	rand.Read(key)
	req := "GET /relay HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key) + "\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Protocol: " + wire.Subprotocol + "\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 512)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 101 ") {
		c.Close()
		return nil, fmt.Errorf("handshake: %q %v", strings.TrimSpace(status), err)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if l == "\r\n" {
			break
		}
	}
	// HELLO: one unmasked binary frame with a short payload.
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(br, hdr); err != nil || hdr[0] != 0x82 || hdr[1] >= 126 {
		c.Close()
		return nil, fmt.Errorf("expected HELLO, got % x %v", hdr, err)
	}
	if _, err := io.ReadFull(br, make([]byte, hdr[1])); err != nil {
		c.Close()
		return nil, err
	}
	if br.Buffered() > 0 {
		c.Close()
		return nil, errors.New("unexpected frames after HELLO")
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// relayChild is `benchreport relay-child`: a relay on 127.0.0.1 allowed to
// reach 127.0.0.0/8, with connection caps raised for the idle measurement
// and per-target rates raised for back-to-back round trips, plus /stats. It
// prints its base URL and runs until its standard input closes or
// childLife passes.
func relayChild() {
	srv := relay.New(relay.Config{
		AllowTargets:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		MaxConns:       idleCap,
		MaxConnsPerIP:  idleCap,
		IdleTimeout:    childLife,
		CacheTTL:       -1,
		ConnRate:       shared.Rate{PerSecond: 1e6, Burst: 1e6},
		IPRate:         shared.Rate{PerSecond: 1e6, Burst: 1e6},
		TargetRate:     shared.Rate{PerSecond: 1e6, Burst: 1e6},
		TargetHostRate: shared.Rate{PerSecond: 1e6, Burst: 1e6},
	}, slog.New(slog.DiscardHandler))
	mux := http.NewServeMux()
	mux.Handle("/relay", srv)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		rec := httptest.NewRecorder()
		srv.MetricsHandler().ServeHTTP(rec, r)
		json.NewEncoder(w).Encode(childStats{
			HeapStack:  float64(ms.HeapInuse + ms.StackInuse),
			RSS:        rssBytes(),
			Goroutines: float64(runtime.NumGoroutine()),
			Conns:      metricValue(rec.Body.String(), "querylens_relay_connections"),
		})
	})
	serveChild(srv, mux)
}

func rssBytes() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return vmRSS(string(b))
}

// vmRSS reads VmRSS, in bytes, from a /proc/PID/status text; 0 if absent.
func vmRSS(status string) float64 {
	for l := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// metricValue reads an unlabelled sample from a Prometheus exposition.
func metricValue(text, name string) float64 {
	for l := range strings.SplitSeq(text, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return -1
}

// child is a relay the benchmark runs as a process of its own (this
// program with a child command), to measure it apart from itself.
type child struct {
	base string // the URL it printed on its first line: "http://127.0.0.1:port"
	pid  int
	stop func() // closes its stdin, which it waits on, then waits for it to exit
}

// startChild starts this program as the child process name and reads the
// base URL it prints on its first line.
func startChild(ctx context.Context, self, name string) (*child, error) {
	cmd := exec.CommandContext(ctx, self, name)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ch := &child{pid: cmd.Process.Pid, stop: func() {
		stdin.Close()
		cmd.Wait()
	}}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		ch.stop()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ch.base = strings.TrimSpace(line)
	return ch, nil
}

// serveChild is a child relay's side of startChild: it serves mux on a
// loopback port, prints its base URL as its first line, and shuts srv
// down once its stdin closes (or childLife has passed).
func serveChild(srv *relay.Server, mux *http.ServeMux) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	fmt.Println("http://" + ln.Addr().String())
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(childLife):
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	hs.Close()
}
