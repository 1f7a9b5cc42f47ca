package netquery

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
)

// countQuery sends "q" and is done after want replies.
type countQuery struct {
	want, got int
	follow    bool // answer the first reply with a follow-up "f"
}

func (c *countQuery) Start() [][]byte { return [][]byte{[]byte("q")} }
func (c *countQuery) Feed(b []byte) ([][]byte, bool, error) {
	c.got++
	if c.follow && c.got == 1 {
		return [][]byte{[]byte("f")}, false, nil
	}
	return nil, c.got >= c.want, nil
}
func (c *countQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) { return nil, nil }

// responder answers every datagram with n copies of it, counting what it got.
func responder(t *testing.T, n int, silent bool) (string, *atomic.Int32) {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var got atomic.Int32
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			got.Add(1)
			if silent {
				continue
			}
			for i := 0; i < n; i++ {
				conn.WriteToUDPAddrPort(bytes.Clone(buf[:k]), from)
			}
		}
	}()
	return conn.LocalAddr().String(), &got
}

func TestUDPExchange(t *testing.T) {
	for _, tc := range []struct {
		name         string
		copies       int
		silent       bool
		q            *countQuery
		retries      int
		timeout      time.Duration // how long an attempt waits
		wantDone     bool
		wantSent     int
		wantReceived int
	}{
		// A complete exchange returns when it completes: its timeout is
		// only a bound, generous so that a loaded machine (a -race run
		// beside others) cannot make a reply late. A silent server's
		// attempts end by their timeout, and no reply can be late there.
		// The incomplete exchange waits for its timeout after the one
		// reply; the reply must come within it, or the exchange retries.
		{"one reply", 1, false, &countQuery{want: 1}, 0, 10 * time.Second, true, 1, 1},
		{"segmented", 3, false, &countQuery{want: 3}, 0, 10 * time.Second, true, 1, 3},
		{"challenge follow-up", 1, false, &countQuery{want: 2, follow: true}, 0, 10 * time.Second, true, 2, 2},
		{"silent server retried", 0, true, &countQuery{want: 1}, 2, 150 * time.Millisecond, false, 3, 0},
		{"incomplete", 1, false, &countQuery{want: 5}, 3, 2 * time.Second, false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, got := responder(t, tc.copies, tc.silent)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			u := &UDP{Timeout: tc.timeout, Retries: tc.retries}
			res, err := u.Exchange(ctx, "test", addr, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if res.Done != tc.wantDone || res.Sent != tc.wantSent || res.Received != tc.wantReceived {
				t.Errorf("result %+v, want done=%v sent=%d received=%d", res, tc.wantDone, tc.wantSent, tc.wantReceived)
			}
			if int(got.Load()) != tc.wantSent {
				t.Errorf("server got %d datagrams, want %d", got.Load(), tc.wantSent)
			}
			if tc.wantReceived > 0 && res.RTT <= 0 {
				t.Errorf("RTT = %v", res.RTT)
			}
		})
	}
}

func TestUDPExchangeContextCancel(t *testing.T) {
	addr, _ := responder(t, 0, true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	u := &UDP{Timeout: 10 * time.Second}
	if _, err := u.Exchange(ctx, "test", addr, &countQuery{want: 1}); err == nil {
		t.Fatal("want context error")
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1:10666", "127.0.0.1:10666"},
		{"[::1]:15300", "[::1]:15300"},
		{"[::ffff:127.0.0.1]:1", "127.0.0.1:1"},
	} {
		got, err := Resolve(context.Background(), nil, tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"nohostport", "127.0.0.1:0", "127.0.0.1:99999", "127.0.0.1:x"} {
		if _, err := Resolve(context.Background(), nil, bad); err == nil {
			t.Errorf("Resolve(%q) succeeded", bad)
		}
	}
}

// cancelOnStart cancels the exchange's context as the first datagram is
// being sent: the cancellation must not be lost when the send then sets
// the read deadline for the reply.
type cancelOnStart struct {
	countQuery
	cancel context.CancelFunc
}

func (c *cancelOnStart) Start() [][]byte {
	c.cancel()
	time.Sleep(10 * time.Millisecond) // let the context's AfterFunc run before the send
	return c.countQuery.Start()
}

func TestUDPExchangeCancelledWhileSending(t *testing.T) {
	addr, _ := responder(t, 0, true)
	for _, tc := range []struct {
		name   string
		before bool // cancelled before Exchange is called
	}{
		{"cancelled before", true},
		{"cancelled while sending", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			q := &cancelOnStart{countQuery: countQuery{want: 1}, cancel: cancel}
			if tc.before {
				cancel()
			}
			u := &UDP{Timeout: time.Hour} // only the cancellation can end the wait
			errc := make(chan error, 1)
			go func() {
				_, err := u.Exchange(ctx, "test", addr, q)
				errc <- err
			}()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Exchange kept waiting for a reply after its context was cancelled")
			}
		})
	}
}
