package masters

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/netquery"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is time that moves only when a test sleeps on it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newFakeClock() *fakeClock { return &fakeClock{t: epoch} }

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

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.advance(d)
	return nil
}

// fakeNet is an Exchanger that hands each datagram to an in-memory
// handler (the demo's masters) by target, and records when, on the fake
// clock, each request went. Nothing is sent on the network.
type fakeNet struct {
	clock    *fakeClock
	mu       sync.Mutex
	handlers map[string]demo.Handler
	// answer, if set, decides whether the n-th request (from 0) to a
	// target is answered.
	answer func(target string, n int) bool
	sent   map[string][]time.Time
}

func newFakeNet(clock *fakeClock) *fakeNet {
	return &fakeNet{clock: clock, handlers: map[string]demo.Handler{}, sent: map[string][]time.Time{}}
}

func (f *fakeNet) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	var res netquery.Result
	from := netip.MustParseAddrPort("192.0.2.1:1")
	send := q.Start()
	for round := 0; round < 4 && len(send) > 0; round++ {
		var next [][]byte
		for _, d := range send {
			f.mu.Lock()
			n := len(f.sent[target])
			f.sent[target] = append(f.sent[target], f.clock.now())
			h := f.handlers[target]
			answer := f.answer == nil || f.answer(target, n)
			f.mu.Unlock()
			res.Sent++
			if h == nil || !answer {
				continue
			}
			for _, r := range h.Respond(d, from, f.clock.now()) {
				res.Received++
				more, done, _ := q.Feed(r)
				if done {
					res.Done = true
					return res, nil
				}
				next = append(next, more...)
			}
		}
		send = next
	}
	return res, ctx.Err()
}

func (f *fakeNet) requests(target string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.sent[target]...)
}

// addrs returns n distinct public-looking addresses (TEST-NET-3,
// 203.0.113.0/24, then on), never sent to.
func addrs(n int) []a2s.Addr {
	out := make([]a2s.Addr, n)
	for i := range out {
		out[i] = a2s.Addr{IP: [4]byte{203, 0, byte(113 + i/250), byte(1 + i%250)}, Port: 27015}
	}
	return out
}

// waitIdle waits for every fetch in flight.
func waitIdle(t testing.TB, k *Keeper) {
	t.Helper()
	k.mu.Lock()
	var chans []chan struct{}
	for _, l := range k.lists {
		if l.fetching {
			chans = append(chans, l.done)
		}
	}
	k.mu.Unlock()
	for _, c := range chans {
		select {
		case <-c:
		case <-time.After(30 * time.Second):
			t.Fatal("a fetch did not end")
		}
	}
}
