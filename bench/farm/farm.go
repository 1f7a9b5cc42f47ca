// Package farm runs many emulated game servers on 127.0.0.1, one UDP
// socket and one goroutine each (Start), or one TCP listener each for a
// stream protocol (StartTCP), and counts what they receive and send, so
// that a measurement can check that no reply was lost on either side.
package farm

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
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
	Received int           // reply datagrams (a stream protocol's messages) fed to the codecs
	Bytes    int64         // a stream protocol's reply bytes read (0 over UDP)
	Wall     time.Duration // first query to last answer
	// Errors counts the conversations that did not complete, by what
	// went wrong ("no complete reply", or the exchange's or the
	// decoder's error, its first 100 bytes).
	Errors map[string]int
}

// QueryAll queries every target with protocol's codec directly, at most
// concurrency at a time: the native client. A datagram protocol is asked
// over UDP (netquery.UDP, timeout per reply window); a stream one
// (codecs.TCP) over a TCP connection each, as netquery.TCP does (the
// target's host and port in the query where the protocol carries them;
// timeout for the whole exchange). opts, or per-target options from
// optsFor when it is not nil, are the query's options.
func QueryAll(ctx context.Context, protocol string, opts map[string]string, targets []string, concurrency int, timeout time.Duration) (Outcome, error) {
	return QueryEach(ctx, protocol, func(string) map[string]string { return opts }, targets, concurrency, timeout)
}

// QueryEach is QueryAll with each target's options from optsFor.
func QueryEach(ctx context.Context, protocol string, optsFor func(target string) map[string]string, targets []string, concurrency int, timeout time.Duration) (Outcome, error) {
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return Outcome{}, err
	}
	d := codecs.DescriptionOf(c)
	u := &netquery.UDP{Timeout: timeout}
	var mu sync.Mutex
	out := Outcome{Asked: len(targets), Errors: map[string]int{}}
	work := make(chan string)
	var wg sync.WaitGroup
	start := time.Now()
	for range min(concurrency, len(targets)) {
		wg.Go(func() {
			for t := range work {
				var q codecs.Query
				var res netquery.Result
				var read int64
				var err error
				if d.Transport == codecs.TCP {
					q, res, read, err = exchangeTCP(ctx, d, c, optsFor(t), t, timeout)
				} else if q, err = c.NewQuery(optsFor(t)); err == nil {
					res, err = u.Exchange(ctx, protocol, t, q)
				}
				if q == nil {
					mu.Lock()
					out.Errors[errKey(err)]++
					mu.Unlock()
					continue
				}
				var m *codecs.Message
				if err == nil && res.Done {
					m, err = q.Result(codecs.DecodeOptions{})
				}
				mu.Lock()
				out.Received += res.Received
				out.Bytes += read
				switch {
				case err != nil:
					out.Errors[errKey(err)]++
				case !res.Done:
					out.Errors["no complete reply"]++
				}
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

// StreamFarm is a set of running TCP servers of a stream protocol
// (codecs.TCP), one listener each, counting the queries they answer and
// the reply bytes they write, so that a measurement can check that a
// client read every byte the servers wrote.
type StreamFarm struct {
	Addrs []netip.AddrPort

	lns     []net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
	closed  bool
	queries atomic.Int64
	replies atomic.Int64
	bytes   atomic.Int64
}

// streamIdle is how long a StreamFarm server waits for a client's next
// bytes before it closes the connection.
const streamIdle = 5 * time.Second

// StartTCP opens n TCP listeners on free ports of host(i) (nil:
// 127.0.0.1; it must be a loopback address) and answers on each with the
// handler newHandler(i) returns. Close stops them.
func StartTCP(ctx context.Context, n int, newHandler func(i int) demo.StreamHandler, host func(i int) string) (*StreamFarm, error) {
	f := &StreamFarm{conns: map[net.Conn]bool{}}
	var lc net.ListenConfig
	for i := range n {
		h := "127.0.0.1"
		if host != nil {
			h = host(i)
		}
		if a, err := netip.ParseAddr(h); err != nil || !a.IsLoopback() {
			f.Close()
			return nil, errors.New("farm: server " + strconv.Itoa(i) + ": host " + strconv.Quote(h) + " is not a loopback address")
		}
		ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(h, "0"))
		if err != nil {
			f.Close()
			return nil, err
		}
		f.lns = append(f.lns, ln)
		f.Addrs = append(f.Addrs, ln.Addr().(*net.TCPAddr).AddrPort())
		f.wg.Add(1)
		go f.accept(ln, newHandler(i))
	}
	return f, nil
}

func (f *StreamFarm) accept(ln net.Listener, h demo.StreamHandler) {
	defer f.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			c.Close()
			return
		}
		f.conns[c] = true
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.serve(c, h)
			c.Close()
			f.mu.Lock()
			delete(f.conns, c)
			f.mu.Unlock()
		}()
	}
}

// serve answers the queries of one connection until the client closes,
// is idle for streamIdle, writes more than demo.StreamMaxQuery bytes
// without a whole query, or the handler closes it (a nil reply).
func (f *StreamFarm) serve(c net.Conn, h demo.StreamHandler) {
	var got []byte
	buf := make([]byte, 1024)
	for {
		c.SetReadDeadline(time.Now().Add(streamIdle))
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		got = append(got, buf[:n]...)
		if len(got) > demo.StreamMaxQuery {
			return
		}
		reply, complete := h.Reply(got)
		if !complete {
			continue
		}
		got = got[:0]
		f.queries.Add(1)
		if reply == nil {
			return
		}
		// Counted before writing, so that a client that finishes on
		// this reply never sees the count lag behind it.
		f.replies.Add(1)
		f.bytes.Add(int64(len(reply)))
		if w, err := c.Write(reply); err != nil {
			f.replies.Add(-1)
			f.bytes.Add(int64(w - len(reply)))
			return
		}
	}
}

// Counts returns the queries answered and the replies written since the
// last Reset.
func (f *StreamFarm) Counts() (queries, replies int64) { return f.queries.Load(), f.replies.Load() }

// Bytes returns the reply bytes written since the last Reset.
func (f *StreamFarm) Bytes() int64 { return f.bytes.Load() }

// Reset zeroes the counters.
func (f *StreamFarm) Reset() { f.queries.Store(0); f.replies.Store(0); f.bytes.Store(0) }

// Targets returns the addresses as "host:port" strings.
func (f *StreamFarm) Targets() []string {
	out := make([]string, len(f.Addrs))
	for i, a := range f.Addrs {
		out[i] = a.String()
	}
	return out
}

// Close stops every server, ends their connections and waits for their
// goroutines.
func (f *StreamFarm) Close() {
	f.mu.Lock()
	f.closed = true
	for _, ln := range f.lns {
		ln.Close()
	}
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// exchangeTCP runs one conversation of stream protocol d with target as
// netquery.TCP does (a fresh connection, netquery.Converse, the whole
// exchange within timeout), with the target's host and port in the
// query's options where the protocol carries them (TargetOptions), and
// counts the bytes it read.
func exchangeTCP(ctx context.Context, d codecs.Description, c codecs.Codec, opts map[string]string, target string, timeout time.Duration) (codecs.Query, netquery.Result, int64, error) {
	host, port, err := netquery.SplitTarget(d, target)
	if err != nil {
		return nil, netquery.Result{}, 0, err
	}
	if opts, err = d.TargetOptions(host, port, opts); err != nil {
		return nil, netquery.Result{}, 0, err
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		return nil, netquery.Result{}, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", target)
	if err != nil {
		return q, netquery.Result{}, 0, err
	}
	defer conn.Close()
	cc := &countingConn{Conn: conn}
	res, err := netquery.Converse(ctx, cc, d.Name, d.MessageLen, d.ReplyCap, q)
	return q, res, cc.n, err
}

// errKey is how Outcome.Errors files err: its text, cut at 100 bytes.
func errKey(err error) string {
	k := err.Error()
	if len(k) > 100 {
		k = k[:100]
	}
	return k
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n += int64(n)
	return n, err
}
