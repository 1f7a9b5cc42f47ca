// Package tcpserver is a TCP toy server (internal/toyproto's stream
// protocol) on loopback, for tests: it answers, trickles, stays silent,
// talks without end, garbles its framing or hangs up, and records what it
// was asked. Apart from the codec, so that the toy's browser module links
// no networking.
package tcpserver

import (
	"net"
	"sync"
	"time"

	"github.com/querylens/querylens/internal/toyproto"
)

// Server is a TCP toy server on loopback, for tests. Its Mode says how
// it answers; it records what each connection wrote to it.
type Server struct {
	Mode    Mode
	Players int
	ln      net.Listener
	mu      sync.Mutex
	asked   []string // the first message of each connection
	conns   int
	wg      sync.WaitGroup
}

// Mode is how a Server answers.
type Mode int

const (
	Answer  Mode = iota // the reply, then waits for the client to close
	Trickle             // the reply, a byte at a time
	Silent              // reads the query and says nothing
	Endless             // player messages without end
	Garbled             // a message whose length is out of range
	HangUp              // half a reply, then closes
)

// Listen starts a Server on 127.0.0.1 with a random port.
func Listen(mode Mode, players int) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Mode: mode, Players: players, ln: ln}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the server's address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Asked returns the queries the server read, one per connection that sent one.
func (s *Server) Asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// Conns is how many connections the server accepted.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Close stops the server and waits for its connections to end (a
// client's close, or the server's).
func (s *Server) Close() {
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.serve(c)
		}()
	}
}

func (s *Server) serve(c net.Conn) {
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a test that forgets to close ends anyway
	var buf []byte
	tmp := make([]byte, 512)
	for toyproto.TCPMessageLen(buf) == 0 {
		n, err := c.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:n]...)
	}
	n := toyproto.TCPMessageLen(buf)
	if n < 0 {
		return
	}
	s.mu.Lock()
	s.asked = append(s.asked, string(buf[2:n]))
	s.mu.Unlock()
	reply := toyproto.TCPMessage("R" + toyproto.ServerName)
	if buf[2] == 'Q' {
		for range s.Players {
			reply = append(reply, toyproto.TCPMessage("P")...)
		}
	}
	reply = append(reply, toyproto.TCPMessage("E")...)
	switch s.Mode {
	case Answer:
		c.Write(reply)
	case Trickle:
		for i := range reply {
			if _, err := c.Write(reply[i : i+1]); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	case Silent:
	case Endless:
		c.Write(toyproto.TCPMessage("R" + toyproto.ServerName))
		for {
			if _, err := c.Write(toyproto.TCPMessage("P")); err != nil {
				return
			}
		}
	case Garbled:
		c.Write(append(toyproto.TCPMessage("R"+toyproto.ServerName), 0xff, 0xff, 'P'))
	case HangUp:
		c.Write(reply[:len(reply)/2])
		return
	}
	// Wait for the client to close: the conversation is the client's to end.
	for {
		if _, err := c.Read(tmp); err != nil {
			return
		}
	}
}
