package relay

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// dialAs connects a raw client that the relay takes for client address
// ip: the test's loopback peer is a trusted proxy and names ip in
// X-Forwarded-For.
func dialAs(t testing.TB, ctx context.Context, url string, ip string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		Subprotocols: []string{wire.Subprotocol},
		HTTPHeader:   http.Header{"X-Forwarded-For": {ip}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// TestFairUpstreamShare floods the relay from 200 client addresses, each
// within the default per-connection and per-address limits, with queries
// to loopback servers that never answer (each exchange holds an upstream
// slot for the whole reply window), while one well-behaved client queries
// a server that answers. The well-behaved client must keep at least 95 %
// of its queries; before upstream capacity was shared per client, the
// flood held every slot and it got "busy".
func TestFairUpstreamShare(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("floods the relay for a few seconds against real time (TestUpstreamShareRule checks the rule itself)")
	}
	ctx := testCtx(t, 30*time.Second)
	f, silent, good := newFloodStage(t)

	fl := startFlood(t, ctx, f.url, silent, 200, nil)
	defer fl.stop()

	// Let the flood fill the upstream slots before the good client asks.
	deadline := time.Now().Add(5 * time.Second)
	for f.metric("querylens_relay_upstream_open") < float64(DefaultMaxUpstream)*0.9 {
		if time.Now().After(deadline) {
			t.Fatalf("the flood did not fill the upstream slots: %v open", f.metric("querylens_relay_upstream_open"))
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The keys that came first got big shares of the idle relay; shares
	// even out as their exchanges end, within one reply window. Measure
	// the steady flood after that.
	time.Sleep(2 * floodWindow)

	ws := dialAs(t, ctx, f.url, "192.0.2.10")
	if _, _, err := ws.Read(ctx); err != nil { // HELLO
		t.Fatal(err)
	}
	const asks = 40
	ok := 0
	var failures []string
	for id := uint32(1); id <= asks; id++ {
		d := "RQgood" + strconv.Itoa(int(id))
		if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, id, testProto, good.addr, []byte(d))); err != nil {
			t.Fatal(err)
		}
		for done := false; !done; {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fr, err := wire.ParseFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			switch fr.Type {
			case wire.FrameReply:
				// The answer is complete: free the id at once, as a page does.
				ok++
				if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendIDFrame(nil, wire.FrameCancel, id)); err != nil {
					t.Fatal(err)
				}
			case wire.FrameEnd:
				done = true
			case wire.FrameError:
				failures = append(failures, fr.Message)
				done = true
			}
		}
		time.Sleep(25 * time.Millisecond) // 40 queries/s at most: within its limits
	}
	t.Logf("well-behaved: %d/%d answered; flood: %d sent, %d busy; upstream open %v", ok, asks, fl.sent.Load(), fl.busy.Load(), f.metric("querylens_relay_upstream_open"))
	if ok*100 < asks*95 {
		t.Fatalf("the well-behaved client got %d of %d answers, want >= 95%%; refusals: %q", ok, asks, failures)
	}
	if fl.busy.Load() == 0 {
		t.Fatal("the flood was never refused: the test did not exhaust upstream capacity")
	}
}

// TestUpstreamShareRule checks the share rule itself, without sockets.
func TestUpstreamShareRule(t *testing.T) {
	cfg := testConfig()
	cfg.ReplyWindow = 40 * time.Millisecond // the time constant of the averages
	clock := newFakeClock()
	cfg.Clock = clock.now
	s := New(cfg, nil)
	u := newUpstreamSlots(s, 64) // kept: 4; shares of the other 60
	target := netip.MustParseAddrPort("127.0.0.1:10666")
	key := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}) }
	take := func(k, n int, want wire.Rule) {
		t.Helper()
		for i := range n {
			if _, rule := u.reserve(key(k), target); rule != want {
				t.Fatalf("key %d, slot %d of %d: rule %q, want %q", k, i+1, n, rule, want)
			}
		}
	}
	settle := func() { clock.advance(5 * cfg.ReplyWindow) } // 5 time constants
	// A key alone may take all but the kept slots.
	take(1, 60, "")
	take(1, 1, wire.RuleUpstreamShare)
	for range 30 {
		u.release(key(1))
	}
	settle()
	// Four more keys take 7 each and hold them: five heavy keys, a share
	// of 60/5 = 12 each.
	for k := 2; k <= 5; k++ {
		take(k, 7, "")
	}
	settle()
	// Key 1 held about 30 lately, more than its share: even with all its
	// exchanges ended it may not start another yet.
	for range 30 {
		u.release(key(1))
	}
	take(1, 1, wire.RuleUpstreamShare)
	// Key 2 grows to its share.
	take(2, 5, "")
	take(2, 1, wire.RuleUpstreamShare)
	// A light key gets in.
	take(9, 1, "")
	// Once key 1's average has come down, it may start exchanges again.
	settle()
	take(1, 1, "")
	if u.open != 1+12+3*7+1 || u.perKey[key(1)].open != 1 || u.perKey[key(2)].open != 12 {
		t.Fatalf("bookkeeping: open %d", u.open)
	}
	// Every slot taken: upstream-cap, whoever asks.
	for k := 10; u.open < 64; k++ {
		take(k, 1, "")
	}
	take(99, 1, wire.RuleUpstreamCap)
}

// TestUpstreamShareBetweenCounts checks a key that turned heavy since the
// heavy keys were last counted (the count said none).
func TestUpstreamShareBetweenCounts(t *testing.T) {
	s := New(testConfig(), nil)
	u := newUpstreamSlots(s, 64)
	client := netip.MustParseAddr("192.0.2.1")
	now := s.now()
	u.countedAt = now // no recount now
	u.perKey[client] = &keyUse{open: 3, avg: 2.5, last: now}
	u.open = 3
	if _, rule := u.reserve(client, netip.MustParseAddrPort("127.0.0.1:10666")); rule != "" {
		t.Fatalf("refused by %q", rule)
	}
}

// shareSim drives upstreamSlots on a fake clock: 64 slots, 4 of them kept
// for light keys, shares of the other 60, a reply window of 1 s.
type shareSim struct {
	t     *testing.T
	clock *fakeClock
	u     *upstreamSlots
	held  map[int]int // slots each key holds
}

func newShareSim(t *testing.T) *shareSim {
	cfg := testConfig()
	cfg.ReplyWindow = time.Second
	clock := newFakeClock()
	cfg.Clock = clock.now
	s := New(cfg, nil)
	return &shareSim{t: t, clock: clock, u: newUpstreamSlots(s, 64), held: map[int]int{}}
}

func simKey(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}) }

var simTarget = netip.MustParseAddrPort("127.0.0.1:10666")

// ask makes key k ask for up to n slots, as a flooding client does with
// its queries in flight, and returns the rules of the refusals.
func (m *shareSim) ask(k, n int) (got int, rules []wire.Rule) {
	for range n {
		if _, rule := m.u.reserve(simKey(k), simTarget); rule != "" {
			rules = append(rules, rule)
			continue
		}
		m.held[k]++
		got++
	}
	return got, rules
}

// releaseAll ends every exchange (silent targets: at the end of the window).
func (m *shareSim) releaseAll() {
	for k, n := range m.held {
		for range n {
			m.u.release(simKey(k))
		}
		delete(m.held, k)
	}
}

// flood makes keys 1..keys ask for 64 slots each, every 50 ms for d, with
// every exchange ending one window after it started (silent targets).
func (m *shareSim) flood(keys int, d time.Duration) {
	type open struct {
		k   int
		end time.Duration
	}
	var opens []open
	for at := time.Duration(0); at < d; at += 50 * time.Millisecond {
		kept := opens[:0]
		for _, o := range opens {
			if o.end <= at {
				m.u.release(simKey(o.k))
				m.held[o.k]--
				continue
			}
			kept = append(kept, o)
		}
		opens = kept
		for k := 1; k <= keys; k++ {
			got, _ := m.ask(k, 64-m.held[k])
			for range got {
				opens = append(opens, open{k, at + time.Second})
			}
		}
		m.clock.advance(50 * time.Millisecond)
	}
}

// TestUpstreamShareSteadyKeepsKept: under a steady flood by 20 keys, each
// ends up with its share (60/20 = 3) and the 4 kept slots stay free for a
// light key; a flooding key that asks while the shared part is full is
// refused even though it holds nothing at that moment.
func TestUpstreamShareSteadyKeepsKept(t *testing.T) {
	m := newShareSim(t)
	m.flood(20, 5*time.Second)
	for k := 1; k <= 20; k++ {
		if m.held[k] > 3 {
			t.Errorf("key %d holds %d, share 3", k, m.held[k])
		}
	}
	if m.u.open > 60 {
		t.Fatalf("the flood holds %d slots: the kept ones are taken", m.u.open)
	}
	if got, rules := m.ask(100, 1); got != 1 {
		t.Fatalf("a light key was refused: %v", rules)
	}
}

// TestUpstreamSharePulse: a flood that stops for 4 windows and starts
// again finds its keys still counted: no key takes more than its share at
// the start of the pulse, and a light key still gets a slot.
func TestUpstreamSharePulse(t *testing.T) {
	m := newShareSim(t)
	m.flood(20, 3*time.Second)
	m.releaseAll()
	m.clock.advance(4 * time.Second)
	for k := 1; k <= 20; k++ {
		got, rules := m.ask(k, 64)
		if got > 3 {
			t.Fatalf("at the pulse's start key %d took %d slots, share 3 (then %v)", k, got, rules[:min(len(rules), 1)])
		}
	}
	if got, rules := m.ask(100, 1); got != 1 {
		t.Fatalf("a light key was refused at the pulse's start: %v", rules)
	}
}

// TestUpstreamShareNamedFirst: a key over its share is told so
// (upstream-share) even when every slot is taken; a key within its share
// is told the relay is full (upstream-cap).
func TestUpstreamShareNamedFirst(t *testing.T) {
	m := newShareSim(t)
	m.flood(20, 3*time.Second)
	for k := 100; m.u.open < 64 && k < 200; k++ {
		m.ask(k, 1) // light keys take what is left, the kept slots too
	}
	if _, rules := m.ask(1, 1); len(rules) != 1 || rules[0] != wire.RuleUpstreamShare {
		t.Fatalf("a key at its share, relay full: %v, want upstream-share", rules)
	}
	if _, rules := m.ask(200, 1); len(rules) != 1 || rules[0] != wire.RuleUpstreamCap {
		t.Fatalf("a new key, relay full: %v, want upstream-cap", rules)
	}
}

// TestTargetBudgetsShared: the per-host and per-target budgets are shared
// between the clients asking, as the upstream slots are. Two clients that
// each stay within their own limits (40 queries/s each, IPRate) but
// together ask a host (or one target) faster than its budget take only
// their shares of it; a third client that asks within its share (once a
// second of a host's 20/s, once every 2 s of a target's 2/s) keeps
// getting through once the pair has asked for 5 s. On a fake clock, for
// 25 s; every exchange ends at once.
func TestTargetBudgetsShared(t *testing.T) {
	for _, tc := range []struct {
		name         string
		target, host Rate
		greedy       time.Duration // mean interval between each greedy client's asks
		third        time.Duration // interval between the third client's asks, within its share
		port         func(i int) uint16
	}{
		{
			name: "per-target-host", target: Rate{PerSecond: 1e6, Burst: 1e6}, host: DefaultTargetHostRate,
			greedy: time.Second / 40, third: time.Second, port: func(i int) uint16 { return uint16(20000 + i%1000) }, // silent ports of one host
		},
		{
			name: "per-target", target: DefaultTargetRate, host: Rate{PerSecond: 1e6, Burst: 1e6},
			// 2/s between three clients: the third's share is 0.67/s.
			greedy: time.Second / 4, third: 2 * time.Second, port: func(int) uint16 { return 10666 },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.TargetRate, cfg.TargetHostRate = tc.target, tc.host
			clock := newFakeClock()
			cfg.Clock = clock.now
			s := New(cfg, nil)
			host := netip.MustParseAddr("127.0.0.7")
			ask := func(client netip.Addr, i int) bool {
				_, rule := s.upstream.reserve(client, netip.AddrPortFrom(host, tc.port(i)))
				if rule == "" {
					s.upstream.release(client)
					return true
				}
				if rule != wire.RulePerTarget && rule != wire.RulePerTargetHost {
					t.Fatalf("refused by %s", rule)
				}
				return false
			}
			a, b, c := simKey(1), simKey(2), simKey(3)
			const step = time.Second / 1000
			var greedyOK, greedyAsked, ok, asked int
			// The greedy clients ask at random moments (a fixed seed), on
			// average once every tc.greedy each.
			rng := rand.New(rand.NewPCG(1, 2))
			for at := time.Duration(0); at < 25*time.Second; at += step {
				for _, k := range []netip.Addr{a, b} {
					if rng.Float64() < float64(step)/float64(tc.greedy) {
						greedyAsked++
						if ask(k, greedyAsked) {
							greedyOK++
						}
					}
				}
				if at >= 5*time.Second && at%tc.third == 512*time.Millisecond {
					asked++
					if ask(c, int(at/time.Millisecond)) {
						ok++
					}
				}
				clock.advance(step)
			}
			budget := tc.host
			if tc.target.PerSecond < budget.PerSecond {
				budget = tc.target
			}
			t.Logf("third client %d/%d; greedy pair %d/%d", ok, asked, greedyOK, greedyAsked)
			if ok*100 < asked*95 {
				t.Errorf("the third client got %d of %d through, want >= 95%%", ok, asked)
			}
			if max := int(25*budget.PerSecond) + budget.Burst; ok+greedyOK > max {
				t.Errorf("%d queries went through, the budget allows %d", ok+greedyOK, max)
			}
		})
	}
}

// recordingLimiter is a SharedLimiter that grants everything and records
// the buckets it was asked to charge.
type recordingLimiter struct {
	mu      sync.Mutex
	charged [][]SharedBucket
}

func (r *recordingLimiter) Name() string                   { return "recording" }
func (r *recordingLimiter) Ping(ctx context.Context) error { return nil }
func (r *recordingLimiter) Take(ctx context.Context, b []SharedBucket) (int, error) {
	r.mu.Lock()
	r.charged = append(r.charged, append([]SharedBucket(nil), b...))
	r.mu.Unlock()
	return -1, nil
}
func (r *recordingLimiter) Lease(ctx context.Context, b SharedBucket, n int) (int, error) {
	return n, nil
}

// TestSharedTargetBudgetsKeep: with a shared limiter, the per-target and
// per-host buckets are shared between clients across relays the way they
// are in one: a client that asks a host more often than its share charges
// the shared bucket with half of it kept for the others; a client within
// its share charges it plainly.
func TestSharedTargetBudgetsKeep(t *testing.T) {
	cfg := testConfig()
	cfg.TargetRate, cfg.TargetHostRate = DefaultTargetRate, DefaultTargetHostRate
	clock := newFakeClock()
	cfg.Clock = clock.now
	rec := &recordingLimiter{}
	cfg.SharedLimiter = rec
	s := New(cfg, nil)
	host := netip.MustParseAddr("127.0.0.7")
	greedy, light := simKey(1), simKey(2)
	// The greedy client asks a port a millisecond for a second; the light
	// one, once.
	for i := range 1000 {
		s.upstream.reserve(greedy, netip.AddrPortFrom(host, uint16(20000+i)))
		s.upstream.release(greedy)
		clock.advance(time.Millisecond)
	}
	s.upstream.reserve(light, netip.AddrPortFrom(host, 10666))
	s.upstream.release(light)
	keep := func(client netip.Addr, port uint16) []int {
		var ks []int
		for _, b := range s.targetBuckets(netip.AddrPortFrom(host, port), client) {
			ks = append(ks, b.Keep)
		}
		return ks
	}
	if got := keep(greedy, 20999); len(got) != 2 || got[1] != DefaultTargetHostRate.Burst/2 {
		t.Errorf("greedy client's buckets keep %v, want the host's half (%d) kept", got, DefaultTargetHostRate.Burst/2)
	}
	if got := keep(light, 10666); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Errorf("light client's buckets keep %v, want none", got)
	}
}

// TestUpstreamShareSimultaneousStart: 200 keys that connected together
// start flooding at once, on a relay of 1,024 slots. Once a quarter of
// the shared slots are taken, the keys that connected within the last
// window count in the shares though they have not asked yet, so the
// first few cannot take the relay before the others ask, and a light key
// starting with them still finds a slot.
func TestUpstreamShareSimultaneousStart(t *testing.T) {
	cfg := testConfig()
	cfg.ReplyWindow = time.Second
	clock := newFakeClock()
	cfg.Clock = clock.now
	s := New(cfg, nil)
	u := newUpstreamSlots(s, 1024) // kept 64; 960 shared
	for k := 1; k <= 200; k++ {
		u.connected(simKey(k))
	}
	u.connected(simKey(250))
	clock.advance(10 * time.Millisecond)
	held := map[int]int{}
	for k := 1; k <= 200; k++ {
		for range 64 {
			if _, rule := u.reserve(simKey(k), simTarget); rule == "" {
				held[k]++
			}
		}
	}
	most := 0
	for _, n := range held {
		most = max(most, n)
	}
	if u.open > 1024-8 {
		t.Errorf("the flood took %d of 1024 slots at once (the most by one key: %d)", u.open, most)
	}
	if _, rule := u.reserve(simKey(250), simTarget); rule != "" {
		t.Fatalf("the light key was refused by %s; the flood holds %d, the most by one key %d", rule, u.open, most)
	}
}

// TestUpstreamFreshForOneWindow: a key that connected counts as fresh for
// one window, however many counts pass: one client key with many
// connections and exchanges keeps the whole share.
func TestUpstreamFreshForOneWindow(t *testing.T) {
	m := newShareSim(t)
	for range 100 {
		m.u.connected(simKey(1))
		m.clock.advance(100 * time.Millisecond) // several counts a window
	}
	if got, rules := m.ask(1, 60); got != 60 {
		t.Fatalf("the only key got %d of 60 (%v); fresh keys counted: %d", got, rules[:1], m.u.fresh)
	}
}
