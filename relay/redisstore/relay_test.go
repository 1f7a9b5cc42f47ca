package redisstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/health"
	"github.com/querylens/querylens/internal/testredis"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/wire"
)

// sharedProto is a codec registered only in these tests: queries are "SQ"
// + a tag, replies anything; a query is done with its first reply.
const sharedProto = "sharedtest"

type sharedCodec struct{}

func (sharedCodec) Name() string                                   { return sharedProto }
func (sharedCodec) Title() string                                  { return "shared store test protocol" }
func (sharedCodec) DefaultPort() int                               { return 0 }
func (sharedCodec) Options() []codecs.Option                       { return nil }
func (sharedCodec) Detect([]byte) (codecs.Kind, codecs.Confidence) { return "", codecs.NotMine }
func (sharedCodec) CheckQuery(b []byte) error {
	if !bytes.HasPrefix(b, []byte("SQ")) {
		return codecs.NewError(sharedProto, "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}
func (sharedCodec) Decode([][]byte, codecs.DecodeOptions) (*codecs.Message, error) {
	return &codecs.Message{Protocol: sharedProto, Kind: codecs.KindResponse}, nil
}
func (sharedCodec) NewQuery(opts map[string]string) (codecs.Query, error) {
	return &sharedQuery{tag: opts["tag"]}, nil
}

type sharedQuery struct{ tag string }

func (q *sharedQuery) Start() [][]byte                                      { return [][]byte{[]byte("SQ" + q.tag)} }
func (q *sharedQuery) Feed([]byte) ([][]byte, bool, error)                  { return nil, true, nil }
func (q *sharedQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) { return nil, nil }

func init() { codecs.Register(sharedCodec{}) }

// responder is a loopback UDP server that counts queries and answers each
// with "A"+query after delay.
type responder struct {
	pc    *net.UDPConn
	count atomic.Int64
	delay time.Duration
	wg    sync.WaitGroup
}

func newResponder(t testing.TB, delay time.Duration) *responder {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &responder{pc: pc, delay: delay}
	r.wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			r.count.Add(1)
			reply := append([]byte("A"), buf[:n]...)
			if r.delay > 0 {
				time.AfterFunc(r.delay, func() { pc.WriteToUDPAddrPort(reply, from) })
				continue
			}
			pc.WriteToUDPAddrPort(reply, from)
		}
	})
	t.Cleanup(func() { pc.Close(); r.wg.Wait() })
	return r
}

func (r *responder) addr() string { return r.pc.LocalAddr().String() }

func newRelay(t testing.TB, st *Store, mod func(*relay.Config)) *relay.Server {
	cfg := relay.Config{
		AllowTargets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		ReplyWindow:  time.Second,
		CacheTTL:     5 * time.Second,
		TargetRate:   relay.Rate{PerSecond: 1000, Burst: 1000},
	}
	if st != nil {
		cfg.SharedCache, cfg.SharedLimiter = st, st
	}
	if mod != nil {
		mod(&cfg)
	}
	s := relay.New(cfg, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

func exchange(ctx context.Context, s *relay.Server, target, tag string) (bool, bool, error) {
	q, _ := sharedCodec{}.NewQuery(map[string]string{"tag": tag})
	res, err := s.Exchange(ctx, sharedProto, target, q)
	return res.Done, res.FromCache, err
}

// checks are the instance's health checks, built from the relay as
// querylens serve builds them.
func checks(s *relay.Server) *health.Checks {
	c := health.New(s.ShuttingDown)
	for _, st := range s.Stores() {
		c.Add(st)
	}
	return c
}

func metrics(t *testing.T, s *relay.Server) string {
	rec := httptest.NewRecorder()
	checks(s).Metrics(s.MetricsHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func healthz(t *testing.T, s *relay.Server, path string) (int, string) {
	rec := httptest.NewRecorder()
	h := checks(s).Healthz()
	if path == "/readyz" {
		h = checks(s).Readyz()
	}
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// TestRelaysShareCache: a reply one relay fetched answers the other's
// query from the cache; the server is asked once.
func TestRelaysShareCache(t *testing.T) {
	srv := testredis.Start(t)
	st := open(t, srv.URL())
	up := newResponder(t, 0)
	a, b := newRelay(t, st, nil), newRelay(t, st, nil)
	ctx := ctxFor(t, 10*time.Second)
	if done, cached, err := exchange(ctx, a, up.addr(), "x"); err != nil || !done || cached {
		t.Fatalf("relay a: done=%v cached=%v err=%v", done, cached, err)
	}
	// Relay a's exchange settles just after its asker is done.
	time.Sleep(100 * time.Millisecond)
	if done, cached, err := exchange(ctx, b, up.addr(), "x"); err != nil || !done || !cached {
		t.Fatalf("relay b: done=%v cached=%v err=%v; want a cache hit", done, cached, err)
	}
	if n := up.count.Load(); n != 1 {
		t.Fatalf("server asked %d times, want 1", n)
	}
	// A different query is a different entry.
	if _, cached, _ := exchange(ctx, b, up.addr(), "y"); cached {
		t.Fatal("query y served from x's entry")
	}
	if !strings.Contains(metrics(t, b), `querylens_relay_shared_total{result="hit"} 1`) ||
		!strings.Contains(metrics(t, b), `querylens_relay_dependency_up{name="redis"} 1`) {
		t.Errorf("metrics of b:\n%s", metrics(t, b))
	}
}

// TestRelaysCoalesce: identical queries in flight on three relays at once
// make one upstream query; every asker gets the reply.
func TestRelaysCoalesce(t *testing.T) {
	srv := testredis.Start(t)
	st := open(t, srv.URL())
	up := newResponder(t, 300*time.Millisecond)
	relays := []*relay.Server{newRelay(t, st, nil), newRelay(t, st, nil), newRelay(t, st, nil)}
	ctx := ctxFor(t, 10*time.Second)
	var wg sync.WaitGroup
	var answered atomic.Int32
	for i := range 30 {
		wg.Go(func() {
			done, _, err := exchange(ctx, relays[i%3], up.addr(), "c")
			if err != nil || !done {
				t.Errorf("asker %d: done=%v err=%v", i, done, err)
				return
			}
			answered.Add(1)
		})
	}
	wg.Wait()
	if n := up.count.Load(); n != 1 {
		t.Fatalf("server asked %d times for 30 identical queries on 3 relays, want 1", n)
	}
	if answered.Load() != 30 {
		t.Fatalf("%d of 30 answered", answered.Load())
	}
}

// TestSharedTargetLimit: the per-target bucket is one for all relays.
func TestSharedTargetLimit(t *testing.T) {
	srv := testredis.Start(t)
	st := open(t, srv.URL())
	up := newResponder(t, 0)
	one := func(c *relay.Config) {
		c.TargetRate = relay.Rate{PerSecond: 0.01, Burst: 2}
		c.CacheTTL = -1
	}
	a, b := newRelay(t, st, one), newRelay(t, st, one)
	ctx := ctxFor(t, 10*time.Second)
	// Different queries to one target: each is an upstream query.
	for i, s := range []*relay.Server{a, b} {
		if _, _, err := exchange(ctx, s, up.addr(), "t"+string(rune('0'+i))); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	// Each relay's own bucket has a token left; the shared one is empty.
	_, _, err := exchange(ctx, b, up.addr(), "t2")
	var re *wire.RefusedError
	if !errors.As(err, &re) || re.Code != wire.CodeRateLimited || re.Rule() != "per-target" {
		t.Fatalf("third query: %v, want per-target refusal", err)
	}
	// Without the shared store, the same two relays would allow it.
	c := newRelay(t, nil, one)
	if _, _, err := exchange(ctx, c, up.addr(), "t3"); err != nil {
		t.Fatal(err)
	}
}

// TestRedisDown: with Redis gone the relays answer from upstream and their
// local caches, report the dependency down, and share again once it is
// back, without a restart.
func TestRedisDown(t *testing.T) {
	srv := testredis.Start(t)
	st := open(t, srv.URL())
	up := newResponder(t, 0)
	a, b := newRelay(t, st, nil), newRelay(t, st, nil)
	ctx := ctxFor(t, 20*time.Second)
	if _, _, err := exchange(ctx, a, up.addr(), "before"); err != nil {
		t.Fatal(err)
	}
	if code, body := healthz(t, a, "/healthz"); code != 200 || !strings.Contains(body, "redis: up") {
		t.Fatalf("healthz with Redis up: %d %q", code, body)
	}
	srv.Stop()
	for i, s := range []*relay.Server{a, b, a, b} {
		done, _, err := exchange(ctx, s, up.addr(), "during")
		if err != nil || !done {
			t.Fatalf("query %d with Redis down: done=%v err=%v", i, done, err)
		}
		time.Sleep(50 * time.Millisecond) // the exchange settles into the cache
	}
	// Each relay asked once and then served its own cache.
	if n := up.count.Load(); n != 3 {
		t.Errorf("server asked %d times, want 3 (1 before, 1 per relay during)", n)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body := healthz(t, a, path)
		if code != 200 || !strings.HasPrefix(body, "degraded\n") || !strings.Contains(body, "redis: down since ") {
			t.Fatalf("%s with Redis down: %d %q", path, code, body)
		}
	}
	m := metrics(t, a)
	if !strings.Contains(m, `querylens_relay_dependency_up{name="redis"} 0`) || !strings.Contains(m, `querylens_relay_shared_total{result="local"}`) {
		t.Fatalf("metrics with Redis down:\n%s", m)
	}
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := healthz(t, a, "/readyz")
		if code == 200 && strings.HasPrefix(body, "ready\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz after restart: %d %q", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// b recovers by itself: its prober pings Redis every second.
	deadline = time.Now().Add(5 * time.Second)
	for {
		if _, body := healthz(t, b, "/healthz"); strings.Contains(body, "redis: up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b did not recover")
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := up.count.Load()
	exchange(ctx, a, up.addr(), "after")
	time.Sleep(50 * time.Millisecond)
	if _, cached, _ := exchange(ctx, b, up.addr(), "after"); !cached {
		t.Fatal("no sharing after Redis came back")
	}
	if n := up.count.Load() - before; n != 1 {
		t.Fatalf("server asked %d times after recovery, want 1", n)
	}
}

// TestRedisSlow: a store that does not answer within SharedTimeout counts
// as down; queries still succeed without waiting on it for long.
func TestRedisSlow(t *testing.T) {
	// A TCP listener that accepts and never answers: a hung Redis.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { io.Copy(io.Discard, c); c.Close() })
		}
	}()
	st := open(t, "redis://"+ln.Addr().String())
	t.Cleanup(func() { st.Close(); ln.Close() })
	up := newResponder(t, 0)
	a := newRelay(t, st, func(c *relay.Config) { c.SharedTimeout = 50 * time.Millisecond })
	ctx := ctxFor(t, 10*time.Second)
	start := time.Now()
	for i := range 5 {
		if done, _, err := exchange(ctx, a, up.addr(), "s"+string(rune('0'+i))); err != nil || !done {
			t.Fatalf("query %d with a hung Redis: done=%v err=%v", i, done, err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("5 queries with a hung Redis took %v", d)
	}
	if _, body := healthz(t, a, "/healthz"); !strings.Contains(body, "redis: down") {
		t.Fatalf("healthz: %q", body)
	}
}

// TestSharedClientLimit: one client address spends one shared bucket,
// whichever relays its connections reach.
func TestSharedClientLimit(t *testing.T) {
	srv := testredis.Start(t)
	st := open(t, srv.URL())
	up := newResponder(t, 0)
	ctx := ctxFor(t, 20*time.Second)
	count := func(shared *Store) int {
		lim := func(c *relay.Config) { c.IPRate = relay.Rate{PerSecond: 0.001, Burst: 16} }
		var clients []*relay.Client
		for range 2 {
			ts := httptest.NewServer(newRelay(t, shared, lim))
			t.Cleanup(ts.Close)
			c, err := relay.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			clients = append(clients, c)
		}
		allowed := 0
		for i := range 80 {
			q, _ := sharedCodec{}.NewQuery(map[string]string{"tag": "ip"})
			_, err := clients[i%2].Exchange(ctx, sharedProto, up.addr(), q)
			var re *wire.RefusedError
			switch {
			case err == nil:
				allowed++
			case errors.As(err, &re) && re.Rule() == "per-ip":
			default:
				t.Fatal(err)
			}
		}
		return allowed
	}
	if n := count(st); n != 16 {
		t.Errorf("two relays sharing Redis allowed %d queries from one address, want the burst of 16", n)
	}
	if n := count(nil); n != 32 {
		t.Errorf("two relays on their own allowed %d, want 2 × 16", n)
	}
}
