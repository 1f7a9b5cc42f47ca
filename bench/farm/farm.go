// Package farm runs many emulated game servers on 127.0.0.1, one UDP
// socket and one goroutine each, and counts what they receive and send, so
// that a measurement can check that no reply was lost on either side.
package farm

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/netquery"
)

// Farm is a set of running servers.
type Farm struct {
	Addrs []netip.AddrPort

	conns   []*net.UDPConn
	wg      sync.WaitGroup
	queries atomic.Int64
	replies atomic.Int64
}

// Start opens n sockets on 127.0.0.1 (free ports) and answers on each with
// the handler newHandler(i) returns. Close stops them.
func Start(ctx context.Context, n int, newHandler func(i int) demo.Handler) (*Farm, error) {
	f := &Farm{}
	var lc net.ListenConfig
	for i := range n {
		pc, err := lc.ListenPacket(ctx, "udp4", "127.0.0.1:0")
		if err != nil {
			f.Close()
			return nil, err
		}
		c := pc.(*net.UDPConn)
		f.conns = append(f.conns, c)
		f.Addrs = append(f.Addrs, c.LocalAddr().(*net.UDPAddr).AddrPort())
		f.wg.Add(1)
		go f.serve(c, newHandler(i))
	}
	return f, nil
}

func (f *Farm) serve(c *net.UDPConn, h demo.Handler) {
	defer f.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return // closed
		}
		f.queries.Add(1)
		for _, r := range h.Respond(append([]byte(nil), buf[:n]...), from, time.Now()) {
			// Counted before sending, so that a client that finishes on
			// this reply never sees the count lag behind it.
			f.replies.Add(1)
			if _, err := c.WriteToUDPAddrPort(r, from); err != nil {
				f.replies.Add(-1)
			}
		}
	}
}

// Counts returns the datagrams received and sent since the last Reset.
func (f *Farm) Counts() (queries, replies int64) { return f.queries.Load(), f.replies.Load() }

// Reset zeroes the counters.
func (f *Farm) Reset() { f.queries.Store(0); f.replies.Store(0) }

// Targets returns the addresses as "host:port" strings.
func (f *Farm) Targets() []string {
	out := make([]string, len(f.Addrs))
	for i, a := range f.Addrs {
		out[i] = a.String()
	}
	return out
}

// Close stops every server and waits for their goroutines.
func (f *Farm) Close() {
	for _, c := range f.conns {
		c.Close()
	}
	f.wg.Wait()
}

// Outcome is what a client got from a list of servers.
type Outcome struct {
	Asked    int
	Done     int           // conversations that completed and decoded without error
	Players  int           // players read from the decoded replies
	Received int           // reply datagrams fed to the codecs
	Wall     time.Duration // first query to last answer
}

// QueryAll queries every target with protocol's codec directly over UDP
// (netquery.UDP), at most concurrency at a time: the native client.
func QueryAll(ctx context.Context, protocol string, opts map[string]string, targets []string, concurrency int, timeout time.Duration) (Outcome, error) {
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return Outcome{}, err
	}
	u := &netquery.UDP{Timeout: timeout}
	var mu sync.Mutex
	out := Outcome{Asked: len(targets)}
	work := make(chan string)
	var wg sync.WaitGroup
	start := time.Now()
	for range min(concurrency, len(targets)) {
		wg.Go(func() {
			for t := range work {
				q, err := c.NewQuery(opts)
				if err != nil {
					continue
				}
				res, err := u.Exchange(ctx, protocol, t, q)
				var m *codecs.Message
				if err == nil && res.Done {
					m, err = q.Result(codecs.DecodeOptions{})
				}
				mu.Lock()
				out.Received += res.Received
				if err == nil && res.Done && m != nil {
					out.Done++
					// Only a response carries Info; a server may answer
					// with another kind (banned, ignored, …).
					if m.Info != nil {
						out.Players += len(m.Info.Players)
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, t := range targets {
		select {
		case work <- t:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	out.Wall = time.Since(start)
	return out, ctx.Err()
}
