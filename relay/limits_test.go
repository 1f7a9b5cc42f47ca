package relay

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// TestCoalescingAndCache sends one query from many clients at once: the
// responder must see it once, every client gets the reply, the ones that
// joined are flagged coalesced, and a later asker is served from the cache.
func TestCoalescingAndCache(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	f := newRelay(t, testConfig())
	release := make(chan struct{})
	r := newResponder(t, func(d []byte) [][]byte {
		<-release // hold the reply until every client has asked
		return echoReply(d)
	})
	const n = 20
	clients := make([]*rawClient, n)
	for i := range clients {
		clients[i] = dialRaw(t, ctx, f.url)
	}
	for i, c := range clients {
		c.query(ctx, uint32(i+1), r.addr, "RQshared")
	}
	// Every query has reached the relay when the coalesced counter says so.
	for f.metric("querylens_relay_cache_coalesced_total") < n-1 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	close(release)
	var plain, coalesced int
	for i, c := range clients {
		replies, final := c.collect(ctx, uint32(i+1))
		wantEnd(t, final, wire.EndWindow, 1)
		if string(replies[0].Datagram) != "RAshared" {
			t.Fatalf("client %d got %q", i, replies[0].Datagram)
		}
		switch replies[0].Flags {
		case 0:
			plain++
		case wire.FlagCoalesced:
			coalesced++
		default:
			t.Fatalf("flags %b", replies[0].Flags)
		}
	}
	if plain != 1 || coalesced != n-1 {
		t.Fatalf("%d plain and %d coalesced replies, want 1 and %d", plain, coalesced, n-1)
	}
	if got := r.count.Load(); got != 1 {
		t.Fatalf("responder saw %d queries, want 1", got)
	}
	// After the window: served from the cache with the RTT of the fetch.
	c := clients[0]
	c.query(ctx, 100, r.addr, "RQshared")
	replies, final := c.collect(ctx, 100)
	wantEnd(t, final, wire.EndWindow, 1)
	if replies[0].Flags != wire.FlagCached || replies[0].RTT == 0 {
		t.Fatalf("cached reply flags %b rtt %d", replies[0].Flags, replies[0].RTT)
	}
	if got := r.count.Load(); got != 1 {
		t.Fatalf("responder saw %d queries after a cache hit", got)
	}
	if f.metric("querylens_relay_cache_hits_total") != 1 || f.metric("querylens_relay_cache_misses_total") != 1 {
		t.Fatal("cache counters")
	}
	// A different datagram is a different question.
	c.query(ctx, 101, r.addr, "RQother")
	c.collect(ctx, 101)
	if got := r.count.Load(); got != 2 {
		t.Fatalf("responder saw %d queries, want 2", got)
	}
}

// TestCacheKey lets a normalising key make queries that differ only in an
// echo field share one upstream query.
func TestCacheKey(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.CacheKey = func(proto string, d []byte) []byte {
		if i := bytes.IndexByte(d, '#'); i >= 0 {
			return d[:i] // what follows '#' is an opaque echo field
		}
		return d
	}
	f := newRelay(t, cfg)
	r := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, r.addr, "RQkey#1111")
	replies, _ := c.collect(ctx, 1)
	c.query(ctx, 2, r.addr, "RQkey#2222")
	replies2, _ := c.collect(ctx, 2)
	if r.count.Load() != 1 {
		t.Fatalf("responder saw %d queries", r.count.Load())
	}
	// The raw reply is the one fetched: the relay does not rewrite echoes.
	if string(replies[0].Datagram) != "RAkey#1111" || string(replies2[0].Datagram) != "RAkey#1111" || replies2[0].Flags != wire.FlagCached {
		t.Fatalf("replies %q %q", replies[0].Datagram, replies2[0].Datagram)
	}
}

func TestCacheExpiryAndEviction(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 50 * time.Millisecond
	cfg.CacheTTL = 100 * time.Millisecond
	cfg.ProtocolCacheTTL = map[string]time.Duration{}
	cfg.MaxCacheEntries = 2
	clock := newFakeClock()
	cfg.Clock = clock.now
	f := newRelay(t, cfg)
	r := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)
	ask := func(id uint32, d string) wire.ReplyFlags {
		c.query(ctx, id, r.addr, d)
		replies, _ := c.collect(ctx, id)
		return replies[0].Flags
	}
	ask(1, "RQa")
	if ask(2, "RQa") != wire.FlagCached {
		t.Fatal("second ask not cached")
	}
	clock.advance(150 * time.Millisecond)
	if ask(3, "RQa") == wire.FlagCached || r.count.Load() != 2 {
		t.Fatalf("expired entry served (%d upstream)", r.count.Load())
	}
	// Three entries in a cache of two: the least recently used goes.
	ask(4, "RQb")
	ask(5, "RQc")
	if entries, _ := f.srv.cache.stats(); entries != 2 {
		t.Fatalf("%d entries", entries)
	}
	before := r.count.Load()
	if ask(6, "RQa") == wire.FlagCached || r.count.Load() != before+1 {
		t.Fatal("evicted entry served")
	}
	// No cache at all: identical queries go upstream each time.
	cfg.CacheTTL = -1
	f2 := newRelay(t, cfg)
	c2 := dialRaw(t, ctx, f2.url)
	before = r.count.Load()
	for i := range 3 {
		c2.query(ctx, uint32(i+1), r.addr, "RQnocache")
		c2.collect(ctx, uint32(i+1))
	}
	if r.count.Load() != before+3 {
		t.Fatalf("with the cache off %d upstream queries, want 3", r.count.Load()-before)
	}
	if c2.hello.CacheTTLMS != 0 {
		t.Fatal("HELLO should announce no cache")
	}
}

func TestPerTargetRateLimit(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.TargetRate = Rate{PerSecond: 0.001, Burst: 2}
	f := newRelay(t, cfg)
	r := newResponder(t, echoReply)
	other := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)
	for i := range 3 {
		c.query(ctx, uint32(i+1), r.addr, "RQ"+strconv.Itoa(i))
		_, final := c.collect(ctx, uint32(i+1))
		if i < 2 {
			wantEnd(t, final, wire.EndWindow, 1)
		} else {
			wantError(t, final, wire.CodeRateLimited, wire.RulePerTarget)
		}
	}
	// A cache hit costs the target nothing and is still served.
	c.query(ctx, 10, r.addr, "RQ0")
	replies, _ := c.collect(ctx, 10)
	if replies[0].Flags != wire.FlagCached {
		t.Fatal("cache hit refused by the per-target limit")
	}
	// Another port is another target.
	c.query(ctx, 11, other.addr, "RQ9")
	_, final := c.collect(ctx, 11)
	wantEnd(t, final, wire.EndWindow, 1)
	if r.count.Load() != 2 {
		t.Fatalf("target saw %d queries, want 2", r.count.Load())
	}

	// Per target host: any port of one address.
	cfg = testConfig()
	cfg.TargetHostRate = Rate{PerSecond: 0.001, Burst: 1}
	f2 := newRelay(t, cfg)
	c2 := dialRaw(t, ctx, f2.url)
	c2.query(ctx, 1, r.addr, "RQh1")
	c2.collect(ctx, 1)
	c2.query(ctx, 2, other.addr, "RQh2")
	_, final = c2.collect(ctx, 2)
	wantError(t, final, wire.CodeRateLimited, wire.RulePerTargetHost)
}

func TestPerConnectionAndIPRateLimits(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	r := newResponder(t, echoReply)
	cfg := testConfig()
	cfg.ConnRate = Rate{PerSecond: 0.001, Burst: 3}
	f := newRelay(t, cfg)
	c := dialRaw(t, ctx, f.url)
	for i := range 4 {
		c.query(ctx, uint32(i+1), r.addr, "RQc"+strconv.Itoa(i))
		_, final := c.collect(ctx, uint32(i+1))
		if i < 3 {
			wantEnd(t, final, wire.EndWindow, 1)
		} else {
			wantError(t, final, wire.CodeRateLimited, wire.RulePerConnection)
		}
	}
	// A new connection has its own bucket.
	c2 := dialRaw(t, ctx, f.url)
	c2.query(ctx, 1, r.addr, "RQc9")
	_, final := c2.collect(ctx, 1)
	wantEnd(t, final, wire.EndWindow, 1)

	// The per-IP bucket is shared by every connection from one address.
	cfg = testConfig()
	cfg.IPRate = Rate{PerSecond: 0.001, Burst: 2}
	f2 := newRelay(t, cfg)
	a, b := dialRaw(t, ctx, f2.url), dialRaw(t, ctx, f2.url)
	a.query(ctx, 1, r.addr, "RQi1")
	a.collect(ctx, 1)
	b.query(ctx, 1, r.addr, "RQi2")
	b.collect(ctx, 1)
	b.query(ctx, 2, r.addr, "RQi3")
	_, final = b.collect(ctx, 2)
	wantError(t, final, wire.CodeRateLimited, wire.RulePerIP)

	// Pings have their own small bucket; a refused ping gets ERROR with its nonce.
	cfg = testConfig()
	cfg.PingRate = Rate{PerSecond: 0.001, Burst: 1}
	f3 := newRelay(t, cfg)
	p := dialRaw(t, ctx, f3.url)
	p.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FramePing, 1))
	p.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FramePing, 2))
	if fr := p.read(ctx); fr.Type != wire.FramePong {
		t.Fatalf("got %v", fr.Type)
	}
	fr := p.read(ctx)
	if fr.ID != 2 {
		t.Fatalf("refused ping id %d", fr.ID)
	}
	wantError(t, fr, wire.CodeRateLimited, wire.RulePerConnectionPing)
}

func TestInFlightCap(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.MaxInFlight = 2
	cfg.ReplyWindow = 5 * time.Second
	f := newRelay(t, cfg)
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, silent.addr, "RQ1")
	c.query(ctx, 2, silent.addr, "RQ2")
	c.query(ctx, 3, silent.addr, "RQ3")
	wantError(t, c.read(ctx), wire.CodeBusy, wire.RuleInFlight)
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 1))
	wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
	c.query(ctx, 3, silent.addr, "RQ3")
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 3))
	wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
}

// TestCancelFreesIDInOrder: the relay reads a connection's frames in
// order, and a CANCEL frees its id (and its MaxInFlight place) before the
// relay reads the next frame, so a client may reuse the id, or count
// the query out of MaxInFlight, as soon as it sent the CANCEL (and of its
// upstream share: TestCancelFreesUpstreamSlotInOrder). The cap still
// holds: one more query past it is refused. RELEASE does the same without
// the END.
func TestCancelFreesIDInOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame wire.FrameType // CANCEL or RELEASE of id 1
		next  uint32         // the query sent right after it
		extra uint32         // a query past the cap, refused
	}{
		{"cancel, new id", wire.FrameCancel, 3, 4},
		{"cancel, id reused", wire.FrameCancel, 1, 4},
		{"release, new id", wire.FrameRelease, 3, 4},
		{"release, id reused", wire.FrameRelease, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 5*time.Second)
			cfg := testConfig()
			cfg.MaxInFlight = 2
			cfg.ReplyWindow = 5 * time.Second
			f := newRelay(t, cfg)
			silent := newResponder(t, nil)
			c := dialRaw(t, ctx, f.url)
			c.query(ctx, 1, silent.addr, "RQ1")
			c.query(ctx, 2, silent.addr, "RQ2")
			// No read in between: the END of 1 is not waited for.
			c.sendRaw(ctx, wire.AppendIDFrame(nil, tc.frame, 1))
			c.query(ctx, tc.next, silent.addr, "RQ3")
			c.query(ctx, tc.extra, silent.addr, "RQ4")
			if tc.frame == wire.FrameCancel {
				wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
			}
			fr := c.read(ctx)
			if fr.ID != tc.extra {
				t.Fatalf("frame %v for id %d, want the refusal of %d (query %d was admitted)", fr.Type, fr.ID, tc.extra, tc.next)
			}
			wantError(t, fr, wire.CodeBusy, wire.RuleInFlight)
			for _, id := range []uint32{tc.next, 2} {
				c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, id))
				if fr := c.read(ctx); fr.ID != id {
					t.Fatalf("frame %v for id %d, want the END of %d", fr.Type, fr.ID, id)
				} else {
					wantEnd(t, fr, wire.EndCancelled, 0)
				}
			}
		})
	}
}

// TestRelease: RELEASE ends a query like CANCEL (its exchange stops when
// no one else asks it, and what came is cached as usual) but sends no END
// and nothing more for the id; RELEASE of an id not open is ignored.
func TestRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies int    // replies read before the RELEASE
		id      uint32 // the id released
	}{
		{"after a reply", 1, 1},
		{"before any reply", 0, 1},
		{"an id not open", 1, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 5*time.Second)
			cfg := testConfig()
			cfg.ReplyWindow = 5 * time.Second
			f := newRelay(t, cfg)
			target := newResponder(t, echoReply)
			if tc.replies == 0 {
				target = newResponder(t, nil)
			}
			c := dialRaw(t, ctx, f.url)
			c.query(ctx, 1, target.addr, "RQ1")
			for range tc.replies {
				if fr := c.read(ctx); fr.Type != wire.FrameReply || fr.ID != 1 {
					t.Fatalf("got %v for id %d, want a reply for 1", fr.Type, fr.ID)
				}
			}
			c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameRelease, tc.id))
			c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FramePing, 77))
			if fr := c.read(ctx); fr.Type != wire.FramePong || fr.ID != 77 {
				t.Fatalf("after RELEASE: got %v for id %d, want the PONG of 77 and nothing for the released id", fr.Type, fr.ID)
			}
			if tc.id != 1 {
				// Query 1 is still open, and ends on its CANCEL.
				c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 1))
				wantEnd(t, c.read(ctx), wire.EndCancelled, tc.replies)
			}
			if got := f.metric(`querylens_relay_frames_in_total{type="release"}`); got != 1 {
				t.Errorf("frames_in release = %v, want 1", got)
			}
		})
	}
}

func TestUpstreamCap(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.MaxUpstream = 1
	cfg.ReplyWindow = 5 * time.Second
	f := newRelay(t, cfg)
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, silent.addr, "RQ1")
	c.query(ctx, 2, silent.addr, "RQ2")
	wantError(t, c.read(ctx), wire.CodeBusy, wire.RuleUpstreamCap)
	// Joining the exchange in flight needs no new socket.
	c.query(ctx, 3, silent.addr, "RQ1")
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 3))
	wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
}

func TestReplyCap(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	flood := func(d []byte) [][]byte {
		out := make([][]byte, 10)
		for i := range out {
			out[i] = append([]byte("RA"), bytes.Repeat([]byte{'x'}, 98)...)
		}
		return out
	}
	r := newResponder(t, flood)
	t.Run("datagrams", func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxReplyDatagrams = 3
		f := newRelay(t, cfg)
		c := dialRaw(t, ctx, f.url)
		c.query(ctx, 1, r.addr, "RQd")
		replies, final := c.collect(ctx, 1)
		wantEnd(t, final, wire.EndByteCap, 3)
		if len(replies) != 3 {
			t.Fatalf("%d replies", len(replies))
		}
	})
	t.Run("bytes", func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxReplyBytes = 250
		f := newRelay(t, cfg)
		c := dialRaw(t, ctx, f.url)
		c.query(ctx, 1, r.addr, "RQb")
		replies, final := c.collect(ctx, 1)
		wantEnd(t, final, wire.EndByteCap, 2)
		if len(replies) != 2 {
			t.Fatalf("%d replies", len(replies))
		}
		if f.metric(`querylens_relay_drops_total{reason="reply-cap"}`) != 1 {
			t.Fatal("reply-cap drop not counted")
		}
	})
	t.Run("oversize datagram", func(t *testing.T) {
		big := newResponder(t, func(d []byte) [][]byte {
			return [][]byte{bytes.Repeat([]byte{'R'}, 2000), []byte("RAsmall")}
		})
		cfg := testConfig()
		cfg.MaxDatagram = 1000
		cfg.QueueBytes = 4096
		f := newRelay(t, cfg)
		c := dialRaw(t, ctx, f.url)
		c.query(ctx, 1, big.addr, "RQo")
		replies, final := c.collect(ctx, 1)
		wantEnd(t, final, wire.EndWindow, 1)
		if string(replies[0].Datagram) != "RAsmall" || f.metric(`querylens_relay_drops_total{reason="oversize"}`) != 1 {
			t.Fatalf("reply %q", replies[0].Datagram)
		}
	})
}

// TestSlowReader never reads while replies pour in: the relay's queue stays
// within its bounds, the excess is dropped and counted, and the client is
// finally closed by the write timeout.
func TestSlowReader(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	payload := append([]byte("RA"), bytes.Repeat([]byte{'z'}, 8000)...)
	r := newResponder(t, func(d []byte) [][]byte {
		out := make([][]byte, 16)
		for i := range out {
			out[i] = payload
		}
		return out
	})
	cfg := testConfig()
	cfg.QueueBytes = 64 << 10
	cfg.QueueFrames = 16
	cfg.WriteTimeout = 300 * time.Millisecond
	cfg.ReplyWindow = 100 * time.Millisecond
	f := newRelay(t, cfg)
	// A small receive buffer on the client's socket makes the relay's
	// writes block sooner.
	dialer := &net.Dialer{Control: smallRecvBuffer}
	ws, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{
		Subprotocols: []string{wire.Subprotocol},
		HTTPClient:   &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	maxQueued := 0
	closed := func() bool { return f.metric(`querylens_relay_refusals_total{rule="slow-reader"}`) > 0 }
	for i := 0; !closed() && ctx.Err() == nil; i++ {
		// Keep asking (distinct questions, so no cache) without ever reading.
		if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, uint32(i%64+1), testProto, r.addr, []byte("RQs"+strconv.Itoa(i)))); err != nil {
			break
		}
		f.srv.mu.Lock()
		for sc := range f.srv.conns {
			sc.mu.Lock()
			maxQueued = max(maxQueued, sc.qbytes)
			sc.mu.Unlock()
		}
		f.srv.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
	for !closed() && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if !closed() {
		t.Fatal("slow reader was not closed")
	}
	if maxQueued > cfg.QueueBytes {
		t.Fatalf("queue held %d bytes, limit %d", maxQueued, cfg.QueueBytes)
	}
	if f.metric(`querylens_relay_drops_total{reason="queue-full"}`) == 0 {
		t.Fatal("no queue-full drops counted")
	}
}

func TestIdleTimeout(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	// The idle timeout is long enough that a loaded machine sends the
	// query before it runs out (the test needs the query in flight), and
	// the reply window longer still.
	cfg.IdleTimeout = time.Second
	cfg.ReplyWindow = 2500 * time.Millisecond
	f := newRelay(t, cfg)
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, f.url)
	// A query in flight keeps the connection open past the idle timeout.
	c.query(ctx, 1, silent.addr, "RQ")
	_, final := c.collect(ctx, 1)
	wantError(t, final, wire.CodeTimeout, wire.RuleTimeout)
	_, _, err := c.ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || !strings.HasPrefix(ce.Reason, "idle: ") {
		t.Fatalf("got %v, want close 1000 idle", err)
	}
}

func TestConnectionCaps(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.MaxConnsPerIP = 2
	cfg.MaxConns = 3
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	f := newRelay(t, cfg)
	dial := func(ip string) (*Client, error) {
		return Dial(ctx, f.url, &DialOptions{HTTPHeader: httpHeader("X-Forwarded-For", ip)})
	}
	var open []*Client
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range 2 {
		c, err := dial("198.51.100.1")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	_, err := dial("198.51.100.1")
	var re *wire.RefusedError
	if !errors.As(err, &re) || re.Rule() != wire.RulePerIPConnCap {
		t.Fatalf("third connection from one address: %v", err)
	}
	c, err := dial("198.51.100.2")
	if err != nil {
		t.Fatal(err)
	}
	open = append(open, c)
	_, err = dial("198.51.100.3")
	if !errors.As(err, &re) || re.Rule() != wire.RuleConnCap {
		t.Fatalf("connection over the global cap: %v", err)
	}
	// Closing one frees its slot.
	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(2 * time.Second)
	for f.metric("querylens_relay_connections") > 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c, err = dial("198.51.100.1")
	if err != nil {
		t.Fatal(err)
	}
	open = append(open, c)
}

func TestOriginAndSubprotocol(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.OriginPatterns = []string{"play.example.org", "https://*.example.net"}
	f := newRelay(t, cfg)
	host := strings.TrimPrefix(f.ts.URL, "http://")
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + host, true}, // same origin
		{"https://play.example.org", true},
		{"https://a.example.net", true},
		{"http://a.example.net", false},
		{"https://evil.example.com", false},
		{"null", false},
	}
	for _, tc := range cases {
		t.Run(tc.origin, func(t *testing.T) {
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			c, err := Dial(ctx, f.url, &DialOptions{HTTPHeader: h})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			var re *wire.RefusedError
			if !errors.As(err, &re) || re.Rule() != wire.RuleOrigin {
				t.Fatalf("got %v, want an origin refusal", err)
			}
		})
	}
	// Without the subprotocol the relay closes with 1008.
	ws, _, err := websocket.Dial(ctx, f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	_, _, err = ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("got %v, want close 1008", err)
	}
}

func TestShutdown(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 300 * time.Millisecond
	f := newRelay(t, cfg)
	srv, url := f.srv, f.url
	r := newResponder(t, echoReply)
	clients := make([]*rawClient, 3)
	for i := range clients {
		clients[i] = dialRaw(t, ctx, url)
		clients[i].query(ctx, 1, r.addr, "RQsd"+strconv.Itoa(i))
	}
	// Wait for the replies so that the queries are surely in flight.
	for _, c := range clients {
		if fr := c.read(ctx); fr.Type != wire.FrameReply {
			t.Fatalf("got %v", fr.Type)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	for _, c := range clients {
		// The query in flight still ends properly, then the relay says goodbye.
		if fr := c.read(ctx); fr.Type != wire.FrameEnd {
			t.Fatalf("got %v, want the END of the query in flight", fr.Type)
		}
		_, _, err := c.ws.Read(ctx)
		if websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Fatalf("got %v, want close 1001", err)
		}
		c.ws.Close(websocket.StatusNormalClosure, "")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, err := Dial(ctx, url, nil)
	var re *wire.RefusedError
	if !errors.As(err, &re) || re.Rule() != wire.RuleShuttingDown {
		t.Fatalf("dial after shutdown: %v", err)
	}
	_, err = srv.Exchange(ctx, testProto, r.addr, &testQuery{tag: "x", parts: 1})
	if !errors.As(err, &re) || re.Code != wire.CodeBusy {
		t.Fatalf("exchange after shutdown: %v", err)
	}
}

// TestShutdownDeadline: a query whose window outlasts the shutdown context
// is cut, and Shutdown reports the context's error after closing everything.
func TestShutdownDeadline(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 30 * time.Second
	f := newRelay(t, cfg)
	srv, url := f.srv, f.url
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, url)
	c.query(ctx, 1, silent.addr, "RQlong")
	for srv.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	for {
		if _, _, err := c.ws.Read(ctx); err != nil {
			break
		}
	}
}

// TestCancelFreesUpstreamSlotInOrder: a CANCEL gives the exchange's
// upstream slot back before the relay reads the next frame (when no one
// else asks it), as it frees the id: a client at its share of MaxUpstream
// may start another exchange as soon as it sent the CANCEL. The share
// still holds: one more past it is refused.
func TestCancelFreesUpstreamSlotInOrder(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.MaxUpstream = 16 // a lone key's share: 16 - 16/16 kept = 15
	cfg.ReplyWindow = 5 * time.Second
	f := newRelay(t, cfg)
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, f.url)
	for id := uint32(1); id <= 15; id++ {
		c.query(ctx, id, silent.addr, "RQ"+strconv.Itoa(int(id)))
	}
	// No read in between: the END of 1 is not waited for.
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 1))
	c.query(ctx, 16, silent.addr, "RQ16")
	c.query(ctx, 17, silent.addr, "RQ17")
	wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
	fr := c.read(ctx)
	if fr.ID != 17 {
		t.Fatalf("frame %v for id %d, want the refusal of 17 (query 16 was admitted)", fr.Type, fr.ID)
	}
	wantError(t, fr, wire.CodeBusy, wire.RuleUpstreamShare)
}

// TestLeaveFreesSlotOnce: the last asker leaving an exchange gives its
// upstream slot back then, before the exchange's goroutine ends (here it
// never ran), and the end gives nothing back twice.
func TestLeaveFreesSlotOnce(t *testing.T) {
	s := New(testConfig(), nil)
	client := netip.MustParseAddr("192.0.2.1")
	if _, rule := s.upstream.reserve(client, netip.MustParseAddrPort("127.0.0.1:10666")); rule != "" {
		t.Fatalf("reserve: %s", rule)
	}
	a := &asker{client: client}
	f := &fetch{s: s, askers: []*asker{a}, client: client}
	f.leave(a)
	if s.upstream.open != 0 || s.upstream.perKey[client].open != 0 {
		t.Fatalf("after the last asker left: %d open, %d for the client; want 0 and 0", s.upstream.open, s.upstream.perKey[client].open)
	}
	f.freeSlot() // as the exchange's end does
	if s.upstream.open != 0 || s.upstream.perKey[client].open != 0 {
		t.Fatalf("after the exchange ended too: %d open, %d for the client; want 0 and 0", s.upstream.open, s.upstream.perKey[client].open)
	}
}
