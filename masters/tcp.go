package masters

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
)

// A master whose MasterDescription.Transport is TCP (GameSpy v1's: UDP
// servers, a TCP master that speaks first) is asked over a connection of
// its own, held here and not by the relay, whose UDP path cannot carry
// it: the same pacing applies (fetchList waits on the Pacer before each
// conversation), and the relay's policy (Config.Allow) judges every
// address the master's name resolves to before anything connects.

// Defaults of a TCP master conversation.
const (
	// DefaultStreamTimeout bounds one conversation with a TCP master,
	// the connection included.
	DefaultStreamTimeout = 5 * time.Second
	// DefaultDialTimeout bounds the connection.
	DefaultDialTimeout = 3 * time.Second
)

// StreamConfig configures ExchangeStream.
type StreamConfig struct {
	// Allow judges each address the target resolves to; one refused
	// refuses the exchange, before any connection. Nil: every address.
	Allow func(netip.AddrPort) error
	// Resolver resolves the master's name; nil: net.DefaultResolver.
	Resolver *net.Resolver
	// Timeout bounds the conversation (DefaultStreamTimeout), DialTimeout
	// the connection (DefaultDialTimeout).
	Timeout, DialTimeout time.Duration
}

// ErrBadFraming says the master's stream did not cut into messages (the
// protocol's MessageLen refused it).
var ErrBadFraming = errors.New("malformed master stream")

// ExchangeStream runs q, a conversation with the TCP master target
// (host:port) described by m, over one connection: it resolves target,
// checks every address against cfg.Allow, connects to the first checked
// one, writes what q builds (after the master's greeting when the master
// speaks first) and reads until q says the list is complete, the reply
// reaches m.ReplyCap, the master closes or the time is up. Result counts
// the writes and the messages fed; a master that closes or falls silent
// before the list is complete ends it with Done false and no error.
func ExchangeStream(ctx context.Context, m *codecs.MasterDescription, target string, q codecs.Query, cfg StreamConfig) (netquery.Result, error) {
	timeout, dialTimeout := cfg.Timeout, cfg.DialTimeout
	if timeout <= 0 {
		timeout = DefaultStreamTimeout
	}
	if dialTimeout <= 0 {
		dialTimeout = DefaultDialTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr, err := resolveChecked(ctx, cfg, target)
	if err != nil {
		return netquery.Result{}, err
	}
	dctx, dcancel := context.WithTimeout(ctx, dialTimeout)
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr.String())
	dcancel()
	if err != nil {
		if parent.Err() != nil {
			return netquery.Result{}, parent.Err()
		}
		return netquery.Result{}, err
	}
	defer conn.Close()
	res, err := netquery.Converse(ctx, conn, "master", m.MessageLen, m.ReplyCap, q)
	if !res.Done && parent.Err() != nil {
		return res, parent.Err()
	}
	switch {
	case errors.Is(err, netquery.ErrIncomplete):
		// A list that never ended: Done false, as the doc says; the
		// list's reader says what came.
		err = nil
	case errors.Is(err, netquery.ErrBadFraming):
		err = errors.Join(ErrBadFraming, err)
	}
	return res, err
}

// resolveChecked resolves target and checks every address it names
// against cfg.Allow, returning the one to connect to (IPv4 first).
func resolveChecked(ctx context.Context, cfg StreamConfig, target string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return netip.AddrPort{}, errors.New("bad port " + strconv.Quote(port))
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := cfg.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			return netip.AddrPort{}, err
		}
		if len(addrs) == 0 {
			return netip.AddrPort{}, errors.New("no address for " + host)
		}
	}
	var best netip.AddrPort
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(p))
		if cfg.Allow != nil {
			if err := cfg.Allow(ap); err != nil {
				return netip.AddrPort{}, err
			}
		}
		if !best.IsValid() || !best.Addr().Is4() && ap.Addr().Is4() {
			best = ap
		}
	}
	return best, nil
}
