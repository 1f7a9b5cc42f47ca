package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/bench/farm"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// The relay's TCP exchanges: a relay in a child process (`benchreport
// relay-tcp-child`, its TCP limits the defaults) holds Minecraft Java List
// Ping conversations (EXCHANGE frames) for several clients, each on a
// loopback address of its own (the relay's limits are per client address),
// with servers each on a loopback address of its own (its per-target limit
// is per host). The rate on two cores is two seconds of CPU per second
// over the relay process's CPU time per exchange, as for the UDP row
// (BenchmarkRelayProcess).
const (
	tcpTargets = 128 // Minecraft servers, one per address 127.0.1.1 to 127.0.1.128
	tcpClients = 16  // clients, one per address 127.0.0.11 to 127.0.0.26
	// tcpWindow is the exchanges each client keeps open: the relay's
	// default per-client cap (relay.DefaultMaxStreamsPerClient), so that
	// tcpClients × tcpWindow (128) stays under its cap for the whole relay
	// (relay.DefaultMaxStreams, 256), and each open exchange goes to a
	// server of its own (under relay.DefaultMaxStreamsPerHost, 2).
	tcpWindow = relay.DefaultMaxStreamsPerClient
	tcpRun    = 3 * time.Second // how long each run issues new exchanges
	tcpGoal   = 5000            // exchanges/s on two cores
)

// tcpRound is one run of the TCP load.
type tcpRound struct {
	hog       bool
	exchanges int            // ENDs and refusals received
	done      int            // exchanges that ended done (the reply complete)
	bytes     int64          // CHUNK bytes received
	ends      map[string]int // by END reason
	refused   map[string]int // ERROR frames, by message (the rule that refused)
	wall      time.Duration  // first EXCHANGE to the last END
	cpu       time.Duration  // the relay process's CPU time meanwhile
	served    int64          // replies the servers wrote
	peak      float64        // most exchanges the relay held at once (sampled from its gauge)
}

func (r tcpRound) perSecond() float64 { return float64(r.exchanges) / r.wall.Seconds() }
func (r tcpRound) cpuPer() float64 {
	return float64(r.cpu.Microseconds()) / float64(max(1, r.exchanges))
}
func (r tcpRound) on2cpu() float64 { return 2 * float64(r.exchanges) / r.cpu.Seconds() }

// relayTCP measures the relay's TCP exchanges, quiet and with one core
// busy (hog.go), e.e2eCount rounds each, alternating.
func (e *env) relayTCP(ctx context.Context) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := farm.StartTCP(ctx, tcpTargets, func(i int) demo.StreamHandler {
		return demo.NewMinecraft(int64(i), demo.MinecraftVanilla, demo.Normal)
	}, func(i int) string { return "127.0.1." + strconv.Itoa(i+1) })
	if err != nil {
		return "", err
	}
	defer f.Close()
	var rounds []tcpRound
	for round := range e.e2eCount {
		for _, hog := range []bool{false, true} {
			fmt.Fprintf(e.log, "relay: TCP exchanges, round %d/%d (cpu hog %v)\n", round+1, e.e2eCount, hog)
			f.Reset()
			r, err := runTCPRound(ctx, self, f.Targets(), hog)
			if err != nil {
				return "", err
			}
			_, r.served = f.Counts()
			fmt.Fprintf(e.log, "relay: TCP %d exchanges (%d done) in %v, relay CPU %v: %.0f/s, %.0f/s on 2 cores; ends %v, refused %v, peak %v, servers wrote %d replies\n",
				r.exchanges, r.done, r.wall, r.cpu, r.perSecond(), r.on2cpu(), r.ends, r.refused, r.peak, r.served)
			rounds = append(rounds, r)
		}
	}
	return relayTCPReport(e, rounds), nil
}

// runTCPRound starts a relay child, connects the clients, then keeps
// tcpWindow exchanges open per client for tcpRun, and measures the
// child's CPU time from the first EXCHANGE to the last END.
func runTCPRound(ctx context.Context, self string, targets []string, hog bool) (tcpRound, error) {
	r := tcpRound{hog: hog, ends: map[string]int{}, refused: map[string]int{}}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ch, err := startChild(ctx, self, "relay-tcp-child")
	if err != nil {
		return r, err
	}
	defer ch.stop()
	base := ch.base
	host := strings.TrimPrefix(base, "http://")

	clients := make([]*tcpClient, tcpClients)
	for k := range clients {
		from := netip.AddrFrom4([4]byte{127, 0, 0, byte(11 + k)})
		c, err := dialTCPClient(ctx, host, from)
		if err != nil {
			return r, fmt.Errorf("client %d from %s: %w", k, from, err)
		}
		defer c.ws.CloseNow()
		clients[k] = c
	}
	if hog {
		h := startCPUHog(time.Minute)
		defer h.stop()
	}
	// The relay's gauge of exchanges in progress, sampled.
	peak := make(chan float64, 1)
	stopSampling := make(chan struct{})
	go func() {
		most := 0.0
		for {
			select {
			case <-stopSampling:
				peak <- most
				return
			case <-time.After(100 * time.Millisecond):
			}
			if m, err := scrapeMetrics(base + "/metrics"); err == nil {
				most = max(most, m["querylens_relay_tcp_exchanges_open"])
			}
		}
	}()
	cpu0 := processCPU(ch.pid)
	start := time.Now()
	stopAt := start.Add(tcpRun)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for k, c := range clients {
		wg.Go(func() {
			var slots []string
			for s := range tcpWindow {
				slots = append(slots, targets[(k*tcpWindow+s)%len(targets)])
			}
			if err := c.run(ctx, slots, stopAt); err != nil {
				mu.Lock()
				firstErr = cmp(firstErr, fmt.Errorf("client %d: %w", k, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.wall = time.Since(start)
	r.cpu = time.Duration((processCPU(ch.pid) - cpu0) * float64(time.Millisecond))
	close(stopSampling)
	r.peak = <-peak
	if firstErr != nil {
		return r, firstErr
	}
	for _, c := range clients {
		r.exchanges += c.exchanges
		r.done += c.ends[wire.EndDone.String()]
		r.bytes += c.bytes
		for k, v := range c.ends {
			r.ends[k] += v
		}
		for k, v := range c.refused {
			r.refused[k] += v
		}
	}
	if r.cpu <= 0 || r.exchanges == 0 {
		return r, fmt.Errorf("the relay took %v of CPU for %d exchanges", r.cpu, r.exchanges)
	}
	return r, nil
}

// cmp is the first of a and b that is not nil.
func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// tcpClient is one client of the TCP load: a WebSocket on
// wire.SubprotocolStream from a loopback address of its own.
type tcpClient struct {
	ws        *websocket.Conn
	exchanges int
	bytes     int64
	ends      map[string]int
	refused   map[string]int
}

func dialTCPClient(ctx context.Context, host string, from netip.Addr) (*tcpClient, error) {
	d := &net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, "ws://"+host+"/relay", &websocket.DialOptions{
		HTTPClient: hc, Subprotocols: []string{wire.SubprotocolStream}, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 20)
	_, msg, err := ws.Read(dctx)
	if err != nil {
		ws.CloseNow()
		return nil, err
	}
	if f, err := wire.ParseFrame(msg); err != nil || f.Type != wire.FrameHello || f.Hello.Version != wire.VersionStream {
		ws.CloseNow()
		return nil, fmt.Errorf("expected a HELLO of version %d, got %v (%v)", wire.VersionStream, f.Type, err)
	}
	return &tcpClient{ws: ws, ends: map[string]int{}, refused: map[string]int{}}, nil
}

// run keeps one exchange open per slot (slot i asks slots[i] again and
// again, with id i+1) until stopAt, then waits for the last ones to end.
// An exchange ends with END or with an ERROR (a refusal).
func (c *tcpClient) run(ctx context.Context, slots []string, stopAt time.Time) error {
	send := func(id uint32) error {
		return c.ws.Write(ctx, websocket.MessageBinary, wire.AppendExchange(nil, id, minecraft.Protocol, slots[id-1], nil))
	}
	open := 0
	for i := range slots {
		if err := send(uint32(i + 1)); err != nil {
			return err
		}
		open++
	}
	ended := func(id uint32) error {
		c.exchanges++
		open--
		if time.Now().Before(stopAt) {
			open++
			return send(id)
		}
		return nil
	}
	for open > 0 {
		_, msg, err := c.ws.Read(ctx)
		if err != nil {
			return err
		}
		frames := [][]byte{msg}
		if len(msg) > 0 && wire.FrameType(msg[0]) == wire.FrameBatch {
			if frames, err = wire.SplitBatch(msg); err != nil {
				return err
			}
		}
		for _, b := range frames {
			f, err := wire.ParseFrame(b)
			if err != nil {
				return err
			}
			switch f.Type {
			case wire.FrameChunk:
				c.bytes += int64(len(f.Datagram))
			case wire.FrameEnd:
				c.ends[f.Reason.String()]++
				if err := ended(f.ID); err != nil {
					return err
				}
			case wire.FrameError:
				if f.ID == 0 {
					return errors.New("the relay: " + f.Message)
				}
				c.refused[refusalRule(f.Message)]++
				if err := ended(f.ID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// refusalRule is the part of a refusal's message that names the rule (the
// text before the target's address, which differs each time).
func refusalRule(msg string) string {
	if i := strings.Index(msg, "127."); i > 0 {
		msg = msg[:i]
	}
	return strings.TrimRight(strings.TrimSpace(msg), ":")
}

// relayTCPChild is `benchreport relay-tcp-child`: a relay on 127.0.0.1
// allowed to reach 127.0.0.0/8, with no cache (every exchange reaches its
// server) and the rates per connection, client and target raised (as for
// the UDP measurement); its TCP limits are the defaults. It serves /relay
// and /metrics, prints its base URL and runs until its standard input
// closes or childLife passes.
func relayTCPChild() {
	srv := relay.New(relay.Config{
		AllowTargets:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		IdleTimeout:    childLife,
		CacheTTL:       -1,
		ConnRate:       shared.Rate{PerSecond: 1e6, Burst: 1e6},
		IPRate:         shared.Rate{PerSecond: 1e6, Burst: 1e6},
		TargetRate:     shared.Rate{PerSecond: 1e6, Burst: 1e6},
		TargetHostRate: shared.Rate{PerSecond: 1e6, Burst: 1e6},
	}, slog.New(slog.DiscardHandler))
	mux := http.NewServeMux()
	mux.Handle("/relay", srv)
	mux.Handle("/metrics", srv.MetricsHandler())
	serveChild(srv, mux)
}

// relayTCPReport writes the relay section's part on TCP exchanges and its
// row of the goals table.
func relayTCPReport(e *env, rounds []tcpRound) string {
	var b strings.Builder
	b.WriteString("### TCP exchanges through the relay\n\n")
	fmt.Fprintf(&b, "A relay in a child process (`benchreport relay-tcp-child`: relay.Config allowing 127.0.0.0/8, no cache, the rates per connection, client and target raised as for the UDP row; "+
		"its TCP limits the defaults: %d in progress in the relay, %d per client address, %d per target host). "+
		"%d clients, each a WebSocket (`%s`) from a loopback address of its own (127.0.0.11 to 127.0.0.%d), each keeping %d EXCHANGEs open for %s, then waiting for the last to end; "+
		"EXCHANGE slot i of a client asks the same one of %d Minecraft Java servers (`demo.NewMinecraft`, vanilla, a %s status reply; `farm.StartTCP` in the benchmark's process, each on an address of its own, 127.0.1.1 to 127.0.1.%d) again and again: "+
		"the relay builds the List Ping, connects, reads the reply, streams it back as CHUNKs and closes, one connection per exchange. "+
		"The rate on 2 cores is 2 s of CPU per second over the relay process's CPU time (user + system, /proc) per exchange, from the first EXCHANGE to the last END; the clients and servers run in the benchmark's process and are not counted. "+
		"%d quiet and %d loaded rounds, alternating (loaded: a Go busy loop pinned to CPU %d), a fresh relay each; medians.\n\n",
		relay.DefaultMaxStreams, relay.DefaultMaxStreamsPerClient, relay.DefaultMaxStreamsPerHost,
		tcpClients, wire.SubprotocolStream, 10+tcpClients, tcpWindow, tcpRun, tcpTargets, replySize(rounds), tcpTargets,
		countRounds(rounds, false), countRounds(rounds, true), hogCPU)
	t := newTable("TCP exchanges, relay in a child process", "exchanges/s on this machine", "relay CPU µs per exchange", "exchanges/s on 2 cores (from the relay's CPU time)",
		"exchanges (done)", "held at once, most (relay's gauge)", "ended otherwise, refused")
	var lows []float64
	for _, hog := range []bool{false, true} {
		var rs []tcpRound
		for _, r := range rounds {
			if r.hog == hog {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		med := func(f func(tcpRound) float64) float64 {
			var vs []float64
			for _, r := range rs {
				vs = append(vs, f(r))
			}
			return bench.Median(vs)
		}
		on2 := med(tcpRound.on2cpu)
		lows = append(lows, on2)
		t.add(map[bool]string{false: "quiet", true: "one core busy"}[hog], num(med(tcpRound.perSecond)), num(med(tcpRound.cpuPer)), num(on2),
			fmt.Sprintf("%s (%s)", num(med(func(r tcpRound) float64 { return float64(r.exchanges) })), num(med(func(r tcpRound) float64 { return float64(r.done) }))),
			num(med(func(r tcpRound) float64 { return r.peak })), otherEnds(rs))
	}
	if len(lows) == 0 {
		return b.String()
	}
	b.WriteString(t.String())
	lo := lows[0]
	for _, v := range lows {
		lo = min(lo, v)
	}
	met := lo >= tcpGoal && allDone(rounds)
	fmt.Fprintf(&b, "\nPer round, exchanges/s on 2 cores: %s.\n\n", tcpPerRound(rounds))
	if met {
		fmt.Fprintf(&b, "**Goal met:** at least %s TCP exchanges/s on two cores (the relay's own CPU), quiet and with one core busy, against %d targets, every exchange done.\n", num(tcpGoal), tcpTargets)
	} else {
		fmt.Fprintf(&b, "**Goal not met:** %s TCP exchanges/s on two cores (the relay's own CPU), quiet and with one core busy, against %d targets, every exchange done.\n", num(tcpGoal), tcpTargets)
	}
	result := "at least " + num(lo) + "/s"
	if !allDone(rounds) {
		result += ", but not every exchange was done"
	}
	e.addGoal(met, fmt.Sprintf("TCP exchanges through the relay (Minecraft Java List Ping, %d targets, %d clients), from its own CPU time", tcpTargets, tcpClients),
		"≥ 5,000/s on two cores, quiet and with a core busy", result)
	return b.String()
}

// replySize is the bytes of one status reply the servers wrote (the same
// for every round: CHUNK bytes over exchanges done).
func replySize(rounds []tcpRound) string {
	for _, r := range rounds {
		if r.done > 0 {
			return bytesText(float64(r.bytes) / float64(r.done))
		}
	}
	return "?"
}

func countRounds(rounds []tcpRound, hog bool) int {
	n := 0
	for _, r := range rounds {
		if r.hog == hog {
			n++
		}
	}
	return n
}

// allDone says whether every exchange of every round ended done.
func allDone(rounds []tcpRound) bool {
	for _, r := range rounds {
		if r.done != r.exchanges {
			return false
		}
	}
	return len(rounds) > 0
}

// otherEnds lists, over rounds, the exchanges that did not end done: by
// END reason and by refusal.
func otherEnds(rounds []tcpRound) string {
	counts := map[string]int{}
	for _, r := range rounds {
		for k, v := range r.ends {
			if k != wire.EndDone.String() {
				counts["END "+k] += v
			}
		}
		for k, v := range r.refused {
			counts["refused: "+k] += v
		}
	}
	if len(counts) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%d × %s", v, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func tcpPerRound(rounds []tcpRound) string {
	var parts []string
	for _, r := range rounds {
		parts = append(parts, map[bool]string{false: "quiet ", true: "busy "}[r.hog]+num(r.on2cpu()))
	}
	return strings.Join(parts, ", ")
}
