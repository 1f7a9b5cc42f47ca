package relay

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// portRecorder is a loopback UDP server that answers every query with
// answer and records the source address of each query.
type portRecorder struct {
	pc     *net.UDPConn
	mu     sync.Mutex
	froms  []netip.AddrPort
	before func(from netip.AddrPort) // runs before each answer
}

func newPortRecorder(t *testing.T, answer string) *portRecorder {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &portRecorder{pc: pc}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			_, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.froms = append(r.froms, from)
			before := r.before
			r.mu.Unlock()
			if before != nil {
				before(from)
			}
			pc.WriteToUDPAddrPort([]byte(answer), from)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return r
}

func (r *portRecorder) addr() string { return r.pc.LocalAddr().String() }

func (r *portRecorder) last() netip.AddrPort {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.froms[len(r.froms)-1]
}

// TestReusedSocketDropsLateReplies checks what reusing upstream sockets
// must not change: a reply that target 1 sends after its exchange ended,
// to the socket that served it, reaches neither the next exchange on that
// socket (with target 2) nor the next exchange with target 1 (which gets
// another socket).
func TestReusedSocketDropsLateReplies(t *testing.T) {
	if !canReconnect {
		t.Skip("sockets are not reused on this platform")
	}
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.CacheTTL = -1
	f := newRelay(t, cfg)
	t1 := newPortRecorder(t, "RAone")
	t2 := newPortRecorder(t, "RAtwo")
	c := dialRaw(t, ctx, f.url)

	ask := func(id uint32, target string) []string {
		t.Helper()
		c.query(ctx, id, target, "RQ")
		fr := c.read(ctx)
		if fr.Type != wire.FrameReply {
			t.Fatalf("query %d: %v %q", id, fr.Type, fr.Message)
		}
		got := []string{string(fr.Datagram)}
		c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, id))
		replies, final := c.collect(ctx, id)
		for _, r := range replies {
			got = append(got, string(r.Datagram))
		}
		if final.Type != wire.FrameEnd {
			t.Fatalf("query %d: %v %q", id, final.Type, final.Message)
		}
		// Wait until the exchange has given its socket back.
		for f.srv.sockets.idleCount() == 0 || f.srv.metrics.upstreamOpen.Load() > 0 {
			if ctx.Err() != nil {
				t.Fatal("the exchange did not end")
			}
			time.Sleep(time.Millisecond)
		}
		return got
	}

	if got := ask(1, t1.addr()); len(got) != 1 || got[0] != "RAone" {
		t.Fatalf("first exchange: %q", got)
	}
	sock := t1.last()
	// Late replies from target 1 to that socket: one while it is idle,
	// one while it serves target 2.
	t1.pc.WriteToUDPAddrPort([]byte("RAlate-idle"), sock)
	t2.mu.Lock()
	t2.before = func(netip.AddrPort) {
		t1.pc.WriteToUDPAddrPort([]byte("RAlate-busy"), sock)
		time.Sleep(10 * time.Millisecond)
	}
	t2.mu.Unlock()
	if got := ask(2, t2.addr()); len(got) != 1 || got[0] != "RAtwo" {
		t.Fatalf("exchange with target 2 on the reused socket: %q", got)
	}
	if t2.last() != sock {
		t.Fatalf("target 2 was asked from %v, not from the reused socket %v: the test did not reuse it", t2.last(), sock)
	}
	t1.pc.WriteToUDPAddrPort([]byte("RAlate-again"), sock)
	// While target 1 is asked again, its late reply to the first exchange
	// arrives at the first exchange's socket.
	t1.mu.Lock()
	t1.before = func(netip.AddrPort) {
		t1.pc.WriteToUDPAddrPort([]byte("RAlate-during"), sock)
		time.Sleep(10 * time.Millisecond)
	}
	t1.mu.Unlock()
	if got := ask(3, t1.addr()); len(got) != 1 || got[0] != "RAone" {
		t.Fatalf("second exchange with target 1: %q", got)
	}
	if t1.last() == sock {
		t.Fatal("target 1 was asked again from the socket that served it before")
	}
}
