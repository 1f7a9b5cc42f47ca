package relay

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay/wire"
)

// testProto is a codec registered only in this package's tests. Its
// queries are "RQ" + tag, optionally "+" + a challenge answer; replies are
// "RA..." (data) or "RC<n>" (a challenge to answer).
const testProto = "relaytest"

type testCodec struct{}

func (testCodec) Name() string                                   { return testProto }
func (testCodec) Title() string                                  { return "relay test protocol" }
func (testCodec) DefaultPort() int                               { return 0 }
func (testCodec) Options() []codecs.Option                       { return nil }
func (testCodec) Detect([]byte) (codecs.Kind, codecs.Confidence) { return "", codecs.NotMine }
func (testCodec) CheckQuery(b []byte) error {
	if string(b) == "RQpanic" {
		panic("a codec bug")
	}
	if !bytes.HasPrefix(b, []byte("RQ")) {
		return codecs.NewError(testProto, "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}
func (testCodec) Decode([][]byte, codecs.DecodeOptions) (*codecs.Message, error) {
	return &codecs.Message{Protocol: testProto, Kind: codecs.KindResponse}, nil
}
func (testCodec) NewQuery(opts map[string]string) (codecs.Query, error) {
	parts, _ := strconv.Atoi(opts["parts"])
	return &testQuery{tag: opts["tag"], parts: max(parts, 1)}, nil
}

type testQuery struct {
	tag   string
	parts int
	got   [][]byte
}

func (q *testQuery) Start() [][]byte { return [][]byte{[]byte("RQ" + q.tag)} }

func (q *testQuery) Feed(b []byte) ([][]byte, bool, error) {
	switch {
	case bytes.HasPrefix(b, []byte("RC")):
		return [][]byte{[]byte("RQ" + q.tag + "+" + string(b[2:]))}, false, nil
	case bytes.HasPrefix(b, []byte("RA")):
		q.got = append(q.got, b)
		return nil, len(q.got) >= q.parts, nil
	}
	return nil, false, errors.New("relaytest: not mine")
}

func (q *testQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) {
	return &codecs.Message{Protocol: testProto, Kind: codecs.KindResponse}, nil
}

func init() { codecs.Register(testCodec{}) }

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// testConfig allows loopback targets and relaxes the rate limits, which
// tests that exercise them tighten again.
func testConfig() Config {
	return Config{
		AllowTargets:   loopbackOnly,
		ReplyWindow:    300 * time.Millisecond,
		ConnRate:       Rate{PerSecond: 1e6, Burst: 1e6},
		IPRate:         Rate{PerSecond: 1e6, Burst: 1e6},
		TargetRate:     Rate{PerSecond: 1e6, Burst: 1e6},
		TargetHostRate: Rate{PerSecond: 1e6, Burst: 1e6},
		PingRate:       Rate{PerSecond: 1e6, Burst: 1e6},
		MaxConnsPerIP:  1000,
		Resolver:       fakeResolver{},
	}
}

// fakeResolver answers from a fixed table; nothing reaches DNS.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// relayFixture is a relay served by httptest on loopback.
type relayFixture struct {
	srv *Server
	ts  *httptest.Server
	url string
}

// settled waits until no upstream exchange is in flight: each one's
// answer is in the cache by then (fetch.finish caches it before it leaves
// the table). The upstream slots say less: an exchange whose askers all
// left gives its slot back before it ends.
func (f *relayFixture) settled(ctx context.Context) {
	for ctx.Err() == nil {
		f.srv.flights.mu.Lock()
		n := len(f.srv.flights.m)
		f.srv.flights.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func newRelay(t testing.TB, cfg Config) *relayFixture {
	t.Helper()
	srv := New(cfg, nil)
	ts := httptest.NewServer(srv)
	f := &relayFixture{srv: srv, ts: ts, url: "ws" + strings.TrimPrefix(ts.URL, "http")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return f
}

func (f *relayFixture) metric(name string) float64 {
	for line := range strings.SplitSeq(string(f.srv.metrics.exposition()), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			x, _ := strconv.ParseFloat(v, 64)
			return x
		}
	}
	return 0
}

// responder is a UDP server on loopback. handle returns the replies to a
// datagram; it runs on the responder's goroutine.
type responder struct {
	pc    *net.UDPConn
	addr  string
	count atomic.Int64
	wg    sync.WaitGroup
}

func echoReply(d []byte) [][]byte { return [][]byte{append([]byte("RA"), d[2:]...)} }

func newResponder(t testing.TB, handle func(d []byte) [][]byte) *responder {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	pc.SetReadBuffer(4 << 20) // loaded tests and benchmarks burst many queries
	r := &responder{pc: pc, addr: pc.LocalAddr().String()}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			r.count.Add(1)
			if handle == nil {
				continue
			}
			for _, out := range handle(append([]byte(nil), buf[:n]...)) {
				pc.WriteToUDPAddrPort(out, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); r.wg.Wait() })
	return r
}

// rawClient speaks frames directly, to test the wire protocol.
type rawClient struct {
	t     testing.TB
	ws    *websocket.Conn
	hello wire.Hello
}

func dialRaw(t testing.TB, ctx context.Context, url string) *rawClient {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	c := &rawClient{t: t, ws: ws}
	t.Cleanup(func() { ws.CloseNow() })
	f := c.read(ctx)
	if f.Type != wire.FrameHello {
		t.Fatalf("first frame %v, want hello", f.Type)
	}
	c.hello = f.Hello
	return c
}

func (c *rawClient) sendRaw(ctx context.Context, b []byte) {
	c.t.Helper()
	if err := c.ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) query(ctx context.Context, id uint32, target, datagram string) {
	c.t.Helper()
	c.sendRaw(ctx, wire.AppendQuery(nil, id, testProto, target, []byte(datagram)))
}

func (c *rawClient) read(ctx context.Context) wire.Frame {
	c.t.Helper()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	f, err := wire.ParseFrame(b)
	if err != nil {
		c.t.Fatalf("relay sent a bad frame %x: %v", b, err)
	}
	return f
}

// collect reads until the final frame of id and returns the REPLY frames
// and the final frame. Frames for other ids are returned in others.
func (c *rawClient) collect(ctx context.Context, id uint32) (replies []wire.Frame, final wire.Frame) {
	c.t.Helper()
	for {
		f := c.read(ctx)
		if f.ID != id {
			c.t.Fatalf("frame %v for id %d while waiting for %d", f.Type, f.ID, id)
		}
		switch f.Type {
		case wire.FrameReply:
			f.Datagram = append([]byte(nil), f.Datagram...)
			replies = append(replies, f)
		case wire.FrameEnd, wire.FrameError:
			return replies, f
		}
	}
}

func wantError(t testing.TB, f wire.Frame, code wire.Code, rule wire.Rule) {
	t.Helper()
	if f.Type != wire.FrameError || f.Code != code || !strings.HasPrefix(f.Message, string(rule)+": ") {
		t.Fatalf("got %v code %v %q, want error %v with rule %q", f.Type, f.Code, f.Message, code, rule)
	}
}

func wantEnd(t testing.TB, f wire.Frame, reason wire.EndReason, replies int) {
	t.Helper()
	if f.Type != wire.FrameEnd || f.Reason != reason || int(f.Replies) != replies {
		t.Fatalf("got %v reason %d replies %d (%q), want end reason %d with %d replies", f.Type, f.Reason, f.Replies, f.Message, reason, replies)
	}
}

func httpHeader(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// dialClient connects a Client that is closed when the test ends.
func dialClient(t testing.TB, ctx context.Context, url string) *Client {
	t.Helper()
	c, err := Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fakeClock is a Config.Clock that moves only when the test moves it, so
// that limits, shares, cooldowns and cache lifetimes are decided without
// waiting and without depending on how fast the machine is.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
