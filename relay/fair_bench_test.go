package relay

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// flood is clients flooding the relay from many addresses (a trusted
// proxy's X-Forwarded-For) with queries to servers that never answer:
// each client keeps MaxInFlight queries open and sends at its
// connection's rate (20/s) once they are.
type flood struct {
	sent, busy atomic.Int64
	stop       func()
}

// newFloodStage is the relay and servers of the flood tests: a relay that
// trusts 127.0.0.1 as a proxy (the flood's 200 addresses come in
// X-Forwarded-For), eight silent servers and one that answers. Per-target
// limits and the cooldown of silent targets are off: they are not what the
// upstream share is about, and a flood avoids the cooldown by asking ever
// new targets.
// floodWindow is the flood stage's reply window.
const floodWindow = time.Second

func newFloodStage(tb testing.TB) (f *relayFixture, silent []*responder, good *responder) {
	tb.Helper()
	f = newRelay(tb, Config{
		AllowTargets:   loopbackOnly,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		ReplyWindow:    floodWindow,
		TargetRate:     Rate{PerSecond: 1e6, Burst: 1e6},
		TargetHostRate: Rate{PerSecond: 1e6, Burst: 1e6},
		SilentCooldown: -1,
		Resolver:       fakeResolver{},
	})
	for range 8 {
		silent = append(silent, newResponder(tb, nil))
	}
	return f, silent, newResponder(tb, echoReply)
}

// startFlood connects hostile clients as 198.51.100.x (client addresses
// only: nothing is sent to them) and starts them. on, if not nil, says
// whether the flood sends at a time since its start (pulses); queries
// already open run to the end of their window either way.
func startFlood(tb testing.TB, ctx context.Context, url string, silent []*responder, hostile int, on func(time.Duration) bool) *flood {
	fl := &flood{}
	var conns []*websocket.Conn
	for i := range hostile {
		conns = append(conns, dialAs(tb, ctx, url, "198.51.100."+strconv.Itoa(i+1)))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for i, ws := range conns {
		slots := make(chan struct{}, DefaultMaxInFlight)
		for range DefaultMaxInFlight {
			slots <- struct{}{}
		}
		wg.Go(func() { // reader: every final frame frees a slot
			for {
				_, b, err := ws.Read(ctx)
				if err != nil {
					return
				}
				fr, err := wire.ParseFrame(b)
				if err != nil {
					continue
				}
				if fr.Type == wire.FrameError && fr.Code == wire.CodeBusy {
					fl.busy.Add(1)
				}
				if fr.Type == wire.FrameEnd || fr.Type == wire.FrameError {
					select {
					case slots <- struct{}{}:
					default:
					}
				}
			}
		})
		wg.Go(func() { // writer
			tick := time.NewTicker(time.Second / time.Duration(DefaultConnRate.PerSecond))
			defer tick.Stop()
			id := uint32(0)
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-slots:
				}
				if n >= DefaultMaxInFlight {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
				for on != nil && !on(time.Since(start)) {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
				id++
				target := silent[(i+n)%len(silent)].addr
				d := "RQ" + strconv.Itoa(i) + "." + strconv.Itoa(n)
				if ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, id, testProto, target, []byte(d))) != nil {
					return
				}
				fl.sent.Add(1)
			}
		})
	}
	var once sync.Once
	fl.stop = func() {
		once.Do(func() {
			close(stop)
			for _, ws := range conns {
				ws.CloseNow()
			}
			wg.Wait()
		})
	}
	tb.Cleanup(fl.stop)
	return fl
}

// askPaced makes a well-behaved client ask a server that answers, one
// query at a time, every interval, n times, cancelling each as soon as
// its reply came (as a page does). It returns how many got a reply.
func askPaced(tb testing.TB, ctx context.Context, ws *websocket.Conn, target string, n int, interval time.Duration) int {
	ok := 0
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for id := uint32(1); id <= uint32(n); id++ {
		d := "RQgood" + strconv.Itoa(int(id))
		if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, id, testProto, target, []byte(d))); err != nil {
			tb.Fatal(err)
		}
		for done := false; !done; {
			_, b, err := ws.Read(ctx)
			if err != nil {
				tb.Fatal(err)
			}
			fr, err := wire.ParseFrame(b)
			if err != nil {
				tb.Fatal(err)
			}
			switch fr.Type {
			case wire.FrameReply:
				ok++
				if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendIDFrame(nil, wire.FrameCancel, id)); err != nil {
					tb.Fatal(err)
				}
			case wire.FrameEnd, wire.FrameError:
				done = true
			}
		}
		<-tick.C
	}
	return ok
}

// BenchmarkFloodFairShare measures what a well-behaved client keeps of
// the relay while 200 client addresses flood it with queries to silent
// servers (each holding an upstream slot for the whole 1 s reply window;
// together they want ~12,800 slots of 1,024): the share of its queries
// answered, to be at least 95 % (good-answered-%). The client asks 10
// times a second, one query at a time.
//
//   - flood=steady: the client starts once the flood has filled the relay
//     and its shares have settled (3 s), and asks 100 times.
//   - flood=pulsed: the flood sends for 2 s, pauses 4 s, and so on; the
//     client starts 1 s in and asks 180 times (18 s: three pulses start
//     while it asks).
//   - flood=simultaneous: the client starts with the flood and asks 100
//     times.
//
// Run it with -benchtime=1x: each iteration is one whole scenario.
func BenchmarkFloodFairShare(b *testing.B) {
	for _, tc := range []struct {
		name  string
		on    func(time.Duration) bool
		delay time.Duration
		asks  int
	}{
		{"flood=steady", nil, 3 * time.Second, 100},
		{"flood=pulsed", func(d time.Duration) bool { return d%(6*time.Second) < 2*time.Second }, time.Second, 180},
		{"flood=simultaneous", nil, 0, 100},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ok, asked, busy int64
			for b.Loop() {
				ctx := testCtx(b, 2*time.Minute)
				f, silent, good := newFloodStage(b)
				ws := dialAs(b, ctx, f.url, "192.0.2.10")
				if _, _, err := ws.Read(ctx); err != nil { // HELLO
					b.Fatal(err)
				}
				fl := startFlood(b, ctx, f.url, silent, 200, tc.on)
				time.Sleep(tc.delay)
				ok += int64(askPaced(b, ctx, ws, good.addr, tc.asks, 100*time.Millisecond))
				asked += int64(tc.asks)
				fl.stop()
				busy += fl.busy.Load()
			}
			b.ReportMetric(100*float64(ok)/float64(asked), "good-answered-%")
			b.ReportMetric(float64(busy)/float64(b.N), "flood-busy/op")
		})
	}
}
