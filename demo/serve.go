package demo

import (
	"context"
	"net"
	"sync"
	"time"
)

// serveUDP answers datagrams on conn with h until conn is closed. Slow
// servers answer after SlowDelay; the handler itself is only ever called
// from this goroutine, so it may keep state without locks.
func serveUDP(conn *net.UDPConn, h Handler, b Behavior, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 2048)
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return // closed
		}
		if b == Silent {
			continue
		}
		q := append([]byte(nil), buf[:n]...)
		replies := h.Respond(q, from, time.Now())
		if len(replies) == 0 {
			continue
		}
		if b == Slow {
			pending.Add(1)
			time.AfterFunc(SlowDelay, func() {
				defer pending.Done()
				for _, r := range replies {
					conn.WriteToUDPAddrPort(r, from)
				}
			})
			continue
		}
		for _, r := range replies {
			conn.WriteToUDPAddrPort(r, from)
		}
	}
}

// listenLoopback opens a UDP socket on addr, which must be a loopback
// address ("127.0.0.1:0" picks a free port).
func listenLoopback(ctx context.Context, addr string) (*net.UDPConn, error) {
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, "udp", addr)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
