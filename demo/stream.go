package demo

import (
	"context"
	"net"
	"sync"
	"time"
)

// A StreamHandler is the protocol logic of one emulated TCP server (a
// protocol whose codec says codecs.TCP): given everything a client has
// written on a connection so far, it says what to write back. The
// connection is served by serveTCP, which writes the reply as the
// server's Behavior says (Trickle: a byte at a time).
type StreamHandler interface {
	// Reply returns the bytes to write once got holds a whole query
	// (complete), or complete false while more is needed. A complete
	// query with a nil reply closes the connection without a word. Reply
	// is called again with what the client writes after the reply (a
	// ping after a status), with the bytes already answered left out.
	Reply(got []byte) (reply []byte, complete bool)
}

// Stream connection bounds: a client has StreamIdle to write its query
// (and each later one), and a query is at most StreamMaxQuery bytes.
const (
	StreamIdle     = 5 * time.Second
	StreamMaxQuery = 4096
	// TrickleEvery is how long a Trickle server waits between the bytes
	// of its reply.
	TrickleEvery = 5 * time.Millisecond
)

// listenTCPLoopback opens a TCP listener on addr, which must be a
// loopback address ("127.0.0.1:0" picks a free port).
func listenTCPLoopback(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", addr)
}

// streams tracks a demo's TCP listeners and open connections, so that
// Close ends them all.
type streams struct {
	mu     sync.Mutex
	lns    []net.Listener
	conns  map[net.Conn]bool
	closed bool
}

func (s *streams) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[net.Conn]bool{}
	}
	s.conns[c] = true
	return true
}

func (s *streams) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *streams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
}

// serveTCP accepts connections on ln until it is closed, each served by
// h in a goroutine of its own.
func serveTCP(ln net.Listener, h StreamHandler, b Behavior, s *streams, wg *sync.WaitGroup) {
	defer wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		if !s.track(c) {
			c.Close()
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer s.untrack(c)
			defer c.Close()
			serveStream(c, h, b)
		}()
	}
}

// serveStream answers the queries of one connection.
func serveStream(c net.Conn, h StreamHandler, b Behavior) {
	var got []byte
	buf := make([]byte, 1024)
	for {
		c.SetReadDeadline(time.Now().Add(StreamIdle))
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		got = append(got, buf[:n]...)
		if len(got) > StreamMaxQuery {
			return
		}
		reply, complete := h.Reply(got)
		if !complete {
			continue
		}
		got = got[:0]
		if reply == nil {
			return
		}
		if b == Silent {
			continue
		}
		if b == Slow {
			time.Sleep(SlowDelay)
		}
		if b != Trickle {
			if _, err := c.Write(reply); err != nil {
				return
			}
			continue
		}
		for i := range reply {
			if _, err := c.Write(reply[i : i+1]); err != nil {
				return
			}
			time.Sleep(TrickleEvery)
		}
	}
}
