package relay

import (
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
)

// Upstream sockets. Creating and closing a UDP socket per exchange (socket,
// connect, epoll registration, close) was most of an exchange's cost, so
// the relay keeps connected sockets and connects them again to the next
// exchange's target (one connect(2)) instead. Reuse keeps every promise of
// a socket per exchange:
//
//   - A socket is connected to one target at a time, so the kernel delivers
//     only that target's datagrams to it, and it serves one exchange at a
//     time.
//   - A socket is never connected to a target twice: a reply that a target
//     sends late, after its exchange ended, can reach the socket only while
//     it is still connected to that target (idle in the pool, or discarded
//     when it is connected to the next one), never the next exchange with
//     that target, which runs on another socket.
//   - Reconnecting discards what is queued on the socket and the error an
//     earlier target's ICMP left, so the next exchange starts empty.
//   - A socket serves at most socketUses exchanges, and the pool hands out
//     idle sockets in random order, so the relay's source ports still change
//     often and a spoofer cannot tell which port serves which exchange.
const (
	socketUses   = 64 // exchanges per socket before it is closed
	socketProbes = 8  // idle sockets tried before making a new one
	// socketMaxIdle bounds the idle sockets kept. An idle socket stays
	// connected to its last target, whose datagrams it still buffers in
	// the kernel until it is reused or closed, so the pool holds no more
	// than a quarter of the default MaxUpstream.
	socketMaxIdle = 256
)

// upSock is one pooled upstream socket.
type upSock struct {
	c      *net.UDPConn
	v6     bool
	uses   int
	served []netip.AddrPort // every target it was connected to (at most socketUses)
}

func (u *upSock) hasServed(t netip.AddrPort) bool {
	for _, x := range u.served {
		if x == t {
			return true
		}
	}
	return false
}

// socketPool holds the idle upstream sockets.
type socketPool struct {
	mu     sync.Mutex
	idle   []*upSock
	closed bool
	reuse  bool // false: a new socket per exchange (platforms without reconnect)
	// readBuffer is each socket's receive buffer (SO_RCVBUF), sized so
	// that a whole reply at the largest cap fits while the relay is busy
	// elsewhere: the kernel charges each datagram its buffer's whole size
	// (about twice a 1,250-byte datagram on loopback), so a burst of 64
	// splits fills the usual 208 KiB default before the relay reads
	// them. The kernel bounds it by net.core.rmem_max. 0: the default.
	readBuffer int
}

func newSocketPool(readBuffer int) *socketPool {
	return &socketPool{reuse: canReconnect, readBuffer: readBuffer}
}

// get returns a socket connected to target: an idle one that never served
// target, or a new one.
func (p *socketPool) get(target netip.AddrPort) (*upSock, error) {
	v6 := !target.Addr().Unmap().Is4()
	p.mu.Lock()
	if n := len(p.idle); n > 0 && p.reuse {
		start := rand.IntN(n)
		for i := range min(n, socketProbes) {
			j := (start + i) % n
			u := p.idle[j]
			if u.v6 != v6 || u.hasServed(target) {
				continue
			}
			p.idle[j] = p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			if err := reconnect(u.c, target, v6); err != nil {
				u.c.Close()
				return p.dial(target, v6)
			}
			u.uses++
			u.served = append(u.served, target)
			return u, nil
		}
	}
	p.mu.Unlock()
	return p.dial(target, v6)
}

func (p *socketPool) dial(target netip.AddrPort, v6 bool) (*upSock, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(target))
	if err != nil {
		return nil, err
	}
	if p.readBuffer > 0 {
		c.SetReadBuffer(p.readBuffer) // best effort: a smaller buffer only loses a burst
	}
	return &upSock{c: c, v6: v6, uses: 1, served: []netip.AddrPort{target}}, nil
}

// put returns u after its exchange; ok false means the socket failed and
// must not be used again.
func (p *socketPool) put(u *upSock, ok bool) {
	p.mu.Lock()
	if ok && p.reuse && !p.closed && u.uses < socketUses && len(p.idle) < socketMaxIdle {
		p.idle = append(p.idle, u)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	u.c.Close()
}

// close closes the idle sockets; sockets put back later are closed too.
func (p *socketPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, u := range idle {
		u.c.Close()
	}
}

func (p *socketPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
