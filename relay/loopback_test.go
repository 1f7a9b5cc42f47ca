package relay

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// demoLoopback is what `querylens serve --demo` gives loopback clients.
var demoLoopback = &ClientLimits{
	ConnRate:    Rate{PerSecond: 10000, Burst: 10000},
	IPRate:      Rate{PerSecond: 10000, Burst: 10000},
	MaxInFlight: 1024,
	QueueFrames: 4096,
	QueueBytes:  1 << 20,
}

// TestLoopbackLimits checks that Config.Loopback applies to loopback
// clients only, and that AllowAddrs opens exactly the listed targets, not
// their neighbours on other ports, without per-target limits.
func TestLoopbackLimits(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	own := newResponder(t, echoReply)
	other := newResponder(t, echoReply) // another loopback port: not listed
	cfg := testConfig()
	cfg.AllowTargets = nil
	cfg.AllowAddrs = []netip.AddrPort{netip.MustParseAddrPort(own.addr)}
	cfg.TargetRate = Rate{PerSecond: 0.001, Burst: 1}
	cfg.TargetHostRate = Rate{PerSecond: 0.001, Burst: 1}
	cfg.ConnRate = DefaultConnRate
	cfg.IPRate = DefaultIPRate
	cfg.Loopback = demoLoopback
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	cfg.ReplyWindow = 5 * time.Second
	f := newRelay(t, cfg)

	local := dialRaw(t, ctx, f.url)
	if local.hello.MaxInFlight != 1024 {
		t.Fatalf("loopback client: HELLO max in flight %d, want 1024", local.hello.MaxInFlight)
	}
	ws := dialAs(t, ctx, f.url, "192.0.2.44")
	public := &rawClient{t: t, ws: ws}
	if fr := public.read(ctx); fr.Type != wire.FrameHello || fr.Hello.MaxInFlight != DefaultMaxInFlight {
		t.Fatalf("public client: %v max in flight %d, want HELLO with %d", fr.Type, fr.Hello.MaxInFlight, DefaultMaxInFlight)
	}

	// Only the listed address and port; its neighbour is loopback.
	local.query(ctx, 1, other.addr, "RQx")
	_, final := local.collect(ctx, 1)
	wantError(t, final, wire.CodeDenied, wire.RuleLoopback)
	if other.count.Load() != 0 {
		t.Fatal("an unlisted loopback port received a datagram")
	}
	// The listed target is not limited per target (TargetRate burst 1).
	for id := uint32(2); id < 5; id++ {
		local.query(ctx, id, own.addr, "RQown"+strconv.Itoa(int(id)))
		if fr := local.read(ctx); fr.Type != wire.FrameReply {
			t.Fatalf("query %d to the own target: %v %q", id, fr.Type, fr.Message)
		}
		local.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, id))
		_, final := local.collect(ctx, id)
		wantEnd(t, final, wire.EndCancelled, 1)
	}

	// The public client keeps the default in-flight cap and rates; the
	// loopback client may go beyond them.
	for _, c := range []struct {
		rc   *rawClient
		n    int
		rule wire.Rule
	}{
		{public, DefaultMaxInFlight, "in-flight"},
		{local, 200, ""},
	} {
		for id := 1; id <= c.n+1; id++ {
			c.rc.query(ctx, uint32(1000+id), own.addr, "RQmany"+strconv.Itoa(id))
		}
		if c.rule != "" {
			for {
				fr := c.rc.read(ctx)
				if fr.Type == wire.FrameError {
					wantError(t, fr, wire.CodeBusy, c.rule)
					if fr.ID != uint32(1000+c.n+1) {
						t.Fatalf("refused id %d, want %d", fr.ID, 1000+c.n+1)
					}
					break
				}
			}
		}
	}
	// The loopback client got all 201 answers: no refusal among them.
	got := map[uint32]bool{}
	for len(got) < 201 {
		fr := local.read(ctx)
		switch fr.Type {
		case wire.FrameReply:
			got[fr.ID] = true
		case wire.FrameError:
			t.Fatalf("loopback client refused: %d %q", fr.ID, fr.Message)
		}
	}
}

// TestSendQueueMemoryBounded opens many connections that stop reading and
// pull cached 64 KiB answers through them, for the default limits, the
// demo's loopback limits, and loopback limits larger than the relay-wide
// budget. The heap grows by at most QueueBytes and a connection's fixed
// cost per connection, and the queues together stay within MaxQueuedBytes.
func TestSendQueueMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("holds tens of MiB")
	}
	// A connection's fixed cost, both ends being in this process: the
	// WebSocket library's buffers, the goroutines' stacks, and the cork
	// buffer (corkMax) that the relay's stalled writer holds.
	const conns, perConnOverhead = 64, 128 << 10
	big := &ClientLimits{MaxInFlight: 1024, QueueFrames: 1 << 16, QueueBytes: 8 << 20}
	for _, tc := range []struct {
		name      string
		loopback  *ClientLimits
		maxQueued int
	}{
		{"default", nil, 0},
		{"demo-loopback", demoLoopback, 0},
		{"relay-budget", big, 16 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			// 64 replies of 1,000 bytes: one query pulls 64,000 bytes.
			r := newResponder(t, func(d []byte) [][]byte {
				out := make([][]byte, 64)
				for i := range out {
					out[i] = append([]byte("RA"), bytes.Repeat([]byte{'x'}, 998)...)
				}
				return out
			})
			cfg := testConfig()
			cfg.ReplyWindow = 200 * time.Millisecond
			cfg.WriteTimeout = time.Minute // the connections stay while measured
			cfg.Loopback = tc.loopback
			cfg.MaxQueuedBytes = tc.maxQueued
			f := newSmallBufferRelay(t, cfg)
			lim := f.srv.cfg.clientLimits(true)

			prime := dialRaw(t, ctx, f.url)
			prime.query(ctx, 1, r.addr, "RQbig")
			if replies, final := prime.collect(ctx, 1); len(replies) != 64 || final.Type != wire.FrameEnd {
				t.Fatalf("priming: %d replies, %v %q", len(replies), final.Type, final.Message)
			}

			before := heapInUse()
			dialer := &net.Dialer{Control: smallRecvBuffer}
			var wss []*websocket.Conn
			for range conns {
				ws, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{
					Subprotocols: []string{wire.Subprotocol},
					HTTPClient:   &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer ws.CloseNow()
				wss = append(wss, ws)
			}
			// Each connection asks for twice what its queue, or its part of
			// the relay's budget, may hold.
			queries := 2*min(lim.QueueBytes, f.srv.cfg.MaxQueuedBytes/conns)/64000 + 2
			for _, ws := range wss {
				for id := 1; id <= queries; id++ {
					if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, uint32(id), testProto, r.addr, []byte("RQbig"))); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Wait until the relay has answered every query (from the
			// cache), so that no frame is being built while measuring.
			for f.srv.metrics.cacheHits.Load() < uint64(conns*queries) {
				if ctx.Err() != nil {
					t.Fatalf("%d of %d queries answered", f.srv.metrics.cacheHits.Load(), conns*queries)
				}
				time.Sleep(20 * time.Millisecond)
			}
			after := heapInUse()
			queued := f.srv.queued.Load()
			budget := int64(f.srv.cfg.MaxQueuedBytes)
			perConn := (after - before) / conns
			t.Logf("queued %d KiB on %d connections; heap +%d KiB (%d KiB per connection; queue limit %d KiB, relay budget %d KiB)",
				queued>>10, conns, (after-before)>>10, perConn>>10, lim.QueueBytes>>10, budget>>10)
			if queued > budget {
				t.Fatalf("queued %d bytes, over MaxQueuedBytes %d", queued, budget)
			}
			if want := int64(min(conns*lim.QueueBytes, int(budget))) / 2; queued < want {
				t.Fatalf("queued only %d bytes (want >= %d): the test did not fill the queues", queued, want)
			}
			if perConn > int64(lim.QueueBytes+perConnOverhead) {
				t.Fatalf("heap grew %d bytes per connection, over QueueBytes %d + %d", perConn, lim.QueueBytes, perConnOverhead)
			}
			if after-before > budget+conns*perConnOverhead {
				t.Fatalf("heap grew %d bytes, over MaxQueuedBytes %d + %d per connection", after-before, budget, perConnOverhead)
			}
			if f.metric(`querylens_relay_drops_total{reason="queue-full"}`)+f.metric(`querylens_relay_drops_total{reason="relay-queue-full"}`) == 0 {
				t.Fatal("no reply was dropped: the queues never filled")
			}
		})
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// newSmallBufferRelay is newRelay with small kernel send buffers on the
// relay's side of every connection, so that a client that stops reading
// makes the relay's writes block (and its queue fill) after kilobytes,
// not after what the kernel would buffer.
func newSmallBufferRelay(t testing.TB, cfg Config) *relayFixture {
	t.Helper()
	srv := New(cfg, nil)
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener = smallSendListener{ts.Listener}
	ts.Start()
	f := &relayFixture{srv: srv, ts: ts, url: "ws" + strings.TrimPrefix(ts.URL, "http")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return f
}

type smallSendListener struct{ net.Listener }

func (l smallSendListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}
