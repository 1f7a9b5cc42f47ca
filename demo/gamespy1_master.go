package demo

import (
	"bytes"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs/gamespy1"
)

// GameSpy1Master is a GameSpy v1 master over TCP, as 333networks' and
// OpenSpy's speak it (docs/protocols/gamespy1.md, "The master list"): it
// sends a challenge, checks the client's validate value with the game's
// key (gamespy1.MasterGames), and lists its servers as \ip\ pairs or, for
// \list\cmp\, as 6-byte records. A wrong or missing validate value is
// refused with \error\…\final\, as a real master refuses it.
//
// Its zero Behavior is Normal; Endless never sends \final\ after the
// list (and holds the connection until the client closes it), BadLength
// sends a list whose last record is cut short.
type GameSpy1Master struct {
	Servers  []netip.AddrPort // IPv4 only
	Behavior Behavior
	// Challenge makes each connection's challenge; nil: six random
	// capital letters.
	Challenge func() string

	mu sync.Mutex
	ln net.Listener
	wg sync.WaitGroup
}

// Refusal is what the demo master answers a wrong validate value with.
const GameSpy1Refusal = `\error\validation failed: wrong key or challenge\final\`

// gs1MasterDeadline bounds one client's connection.
const gs1MasterDeadline = 10 * time.Second

// ListenGameSpy1Master serves m on a TCP socket at addr, which must be a
// loopback address ("127.0.0.1:0" picks a free port), until Close.
func ListenGameSpy1Master(addr string, m *GameSpy1Master) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return netip.AddrPort{}, &net.AddrError{Err: "not a loopback address", Addr: addr}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	m.mu.Lock()
	m.ln = ln
	m.mu.Unlock()
	m.wg.Add(1)
	go m.serve(ln)
	return netip.MustParseAddrPort(ln.Addr().String()), nil
}

// Close stops the master and waits for its connections.
func (m *GameSpy1Master) Close() error {
	m.mu.Lock()
	ln := m.ln
	m.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	m.wg.Wait()
	return err
}

func (m *GameSpy1Master) serve(ln net.Listener) {
	defer m.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	defer func() {
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		open[c] = true
		mu.Unlock()
		conns.Add(1)
		go func() {
			defer conns.Done()
			m.handle(c)
			c.Close()
			mu.Lock()
			delete(open, c)
			mu.Unlock()
		}()
	}
}

// handle is one client's conversation.
func (m *GameSpy1Master) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(gs1MasterDeadline))
	challenge := ""
	if m.Challenge != nil {
		challenge = m.Challenge()
	} else {
		b := make([]byte, 6)
		for i := range b {
			b[i] = byte('A' + rand.IntN(26))
		}
		challenge = string(b)
	}
	if _, err := c.Write([]byte(`\basic\\secure\` + challenge + `\final\`)); err != nil {
		return
	}
	// The validation and the list request: two \final\-ended messages,
	// together at most 1 KiB.
	var req []byte
	buf := make([]byte, 512)
	for bytes.Count(req, []byte(`\final\`)) < 2 {
		n, err := c.Read(buf)
		req = append(req, buf[:n]...)
		if err != nil || len(req) > 1024 {
			return
		}
	}
	vals := pairValues(req)
	game := vals["gamename"]
	key, known := gamespy1.MasterKey(game)
	if !known || vals["validate"] != string(gamespy1.AppendValidate(nil, []byte(challenge), key)) {
		c.Write([]byte(GameSpy1Refusal))
		return
	}
	compact := vals["list"] == "cmp"
	var out []byte
	for _, s := range m.Servers {
		if !s.Addr().Is4() {
			continue
		}
		if compact {
			a := s.Addr().As4()
			out = append(out, a[0], a[1], a[2], a[3], byte(s.Port()>>8), byte(s.Port()))
		} else {
			out = append(out, `\ip\`+s.String()...)
		}
	}
	if m.Behavior == BadLength {
		if compact {
			out = append(out, 127, 0, 0, 1) // a record of four bytes
		} else {
			out = append(out, `\ip\127.0.0.1:`...)
		}
	}
	if m.Behavior != Endless {
		out = append(out, `\final\`...)
	}
	if _, err := c.Write(out); err != nil || m.Behavior != Endless {
		return
	}
	c.Read(buf) // hold the connection until the client gives up
}

// pairValues reads \key\value pairs, the first value of each key kept.
func pairValues(b []byte) map[string]string {
	out := map[string]string{}
	parts := bytes.Split(b, []byte{'\\'})
	for i := 1; i+1 < len(parts); i += 2 {
		k := string(parts[i])
		if _, ok := out[k]; !ok {
			out[k] = string(parts[i+1])
		}
	}
	return out
}

// GameSpy1Master is the GameSpy v1 master's address (TCP).
func (d *Demo) GameSpy1Master() string { return d.gs1Master }

// startGameSpy1Master starts the GameSpy v1 master, listing the demo's
// own GameSpy v1 servers (not the fleet, which the caller lists as
// configured servers).
func (d *Demo) startGameSpy1Master() error {
	var list []netip.AddrPort
	for _, t := range d.Targets() {
		if t.Protocol != gamespy1.Protocol {
			continue
		}
		if ap, err := netip.ParseAddrPort(t.Addr); err == nil && ap.Addr().Is4() {
			list = append(list, ap)
		}
	}
	m := &GameSpy1Master{Servers: list}
	ap, err := ListenGameSpy1Master("127.0.0.1:0", m)
	if err != nil {
		return err
	}
	d.gs1Master = ap.String()
	d.gs1 = m
	return nil
}
