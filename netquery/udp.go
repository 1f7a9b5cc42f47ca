package netquery

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/querylens/querylens/codecs"
)

// MaxDatagram is the largest datagram read from a server (UDP's limit).
const MaxDatagram = 65535

// UDP exchanges datagrams with servers directly. The zero value is usable.
type UDP struct {
	// Timeout bounds one attempt: how long to wait for the message to complete
	// after the last send. Zero means 2 s.
	Timeout time.Duration
	// Retries is how many more attempts are made when nothing at all came
	// back. Retries are not made after any reply (a server that answered
	// "too soon" would only be provoked again).
	Retries int
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

// Resolve turns "host:port" into one address, preferring IPv4.
func Resolve(ctx context.Context, r *net.Resolver, target string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := net.LookupPort("udp", port)
	if err != nil || p <= 0 || p > 65535 {
		return netip.AddrPort{}, errors.New("bad port " + port)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, errors.New("no address for " + host)
	}
	best := addrs[0]
	for _, a := range addrs {
		if a.Unmap().Is4() {
			best = a
			break
		}
	}
	return netip.AddrPortFrom(best.Unmap(), uint16(p)), nil
}

// Exchange implements Exchanger over a fresh UDP socket. Only datagrams from
// the resolved target address are fed to q.
func (u *UDP) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (Result, error) {
	var res Result
	if err := ctx.Err(); err != nil {
		return res, err
	}
	addr, err := Resolve(ctx, u.Resolver, target)
	if err != nil {
		return res, err
	}
	network := "udp4"
	if addr.Addr().Is6() {
		network = "udp6"
	}
	conn, err := net.ListenUDP(network, nil)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()

	timeout := u.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	buf := make([]byte, MaxDatagram)
	var sentAt time.Time
	send := func(ds [][]byte) error {
		for _, d := range ds {
			if _, err := conn.WriteToUDPAddrPort(d, addr); err != nil {
				return err
			}
			res.Sent++
		}
		conn.SetReadDeadline(time.Now().Add(timeout))
		// The AfterFunc above may have run before this line and its deadline
		// been overwritten: a cancelled exchange must not wait for a reply.
		if ctx.Err() != nil {
			conn.SetReadDeadline(time.Now())
		}
		return nil
	}
	for attempt := 0; attempt <= u.Retries && res.Received == 0; attempt++ {
		sentAt = time.Now()
		if err := send(q.Start()); err != nil {
			return res, err
		}
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break // this attempt is over
				}
				return res, err
			}
			if from.Addr().Unmap() != addr.Addr() || from.Port() != addr.Port() {
				continue // not from the server we asked
			}
			if res.Received == 0 {
				res.RTT = time.Since(sentAt)
			}
			res.Received++
			more, done, _ := q.Feed(append([]byte(nil), buf[:n]...))
			if done {
				res.Done = true
				return res, nil
			}
			if len(more) > 0 {
				if err := send(more); err != nil {
					return res, err
				}
			}
		}
	}
	return res, nil
}
