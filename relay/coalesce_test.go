package relay

import (
	"bytes"
	"testing"
	"time"

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
