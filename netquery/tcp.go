package netquery

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
)

// TCP runs each conversation of a stream protocol (codecs.Description
// Transport TCP) over one TCP connection of its own: it connects, writes
// what the Query builds, and reads until the Query says the reply is
// complete, the reply reaches the protocol's cap, the server closes or
// the time is up; then it closes. The zero value is usable.
type TCP struct {
	// Timeout bounds the whole exchange, the connection included. Zero
	// means 5 s.
	Timeout time.Duration
	// DialTimeout bounds the connection. Zero means 3 s.
	DialTimeout time.Duration
	// Resolver resolves host names and SRV records; nil means
	// net.DefaultResolver.
	Resolver *net.Resolver
}

// ErrBadFraming says a stream's framing was malformed (the protocol's
// MessageLen refused it).
var ErrBadFraming = errors.New("malformed stream framing")

// ErrIncomplete says a stream stopped (closed, or out of time) inside a
// message: its framing promised more bytes than came.
var ErrIncomplete = errors.New("reply incomplete: the stream stopped inside a message")

// incompleteError is ErrIncomplete with where: the message that began at
// byte at of the stream, of which have bytes came.
type incompleteError struct{ at, have int }

func (e incompleteError) Error() string {
	return "reply incomplete: the stream stopped " + strconv.Itoa(e.have) + " bytes into the message at byte " + strconv.Itoa(e.at)
}

func (e incompleteError) Is(target error) bool { return target == ErrIncomplete }

// SplitTarget reads target as the server of protocol d is given: "host:port",
// or, for a protocol with an SRV record (d.SRV), a bare name too, whose
// port is then d's default. It returns the host and port as given, for
// Description.TargetOptions.
func SplitTarget(d codecs.Description, target string) (host string, port int, err error) {
	if h, p, err := net.SplitHostPort(target); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, errors.New("bad port " + p)
		}
		return h, n, nil
	}
	if d.SRV == "" || target == "" || strings.ContainsAny(target, ":[]") {
		return "", 0, errors.New("bad address " + strconv.Quote(target) + ": want HOST:PORT")
	}
	if len(d.Ports) == 0 {
		return "", 0, errors.New(d.Name + " has no default port: want HOST:PORT")
	}
	return target, d.Ports[0], nil
}

// ResolveStream turns target into the one address to connect to for
// protocol d: "host:port" as Resolve does; a bare name (SplitTarget) by
// its SRV record (d.SRV + "." + name), and when there is none, as the
// name on d's default port.
func ResolveStream(ctx context.Context, r *net.Resolver, d codecs.Description, target string) (netip.AddrPort, error) {
	host, port, err := SplitTarget(d, target)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if _, _, err := net.SplitHostPort(target); err == nil {
		return Resolve(ctx, r, target)
	}
	if r == nil {
		r = net.DefaultResolver
	}
	if _, srvs, err := r.LookupSRV(ctx, "", "", d.SRV+"."+host); err == nil && len(srvs) > 0 {
		return Resolve(ctx, r, net.JoinHostPort(strings.TrimSuffix(srvs[0].Target, "."), strconv.Itoa(int(srvs[0].Port))))
	}
	return Resolve(ctx, r, net.JoinHostPort(host, strconv.Itoa(port)))
}

// Exchange implements Exchanger over a fresh TCP connection. Sent counts
// the writes, Received the messages fed to q; Capped says the reply
// reached its cap. A server that closes before the reply is complete
// ends the exchange with Done false and no error, as a UDP server that
// stops answering does, unless it stopped inside a message
// (ErrIncomplete); a malformed framing is ErrBadFraming.
func (t *TCP) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (Result, error) {
	var res Result
	d, err := codecs.LookupDescription(protocol)
	if err != nil {
		return res, err
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	dialTimeout := t.DialTimeout
	if dialTimeout <= 0 {
		dialTimeout = 3 * time.Second
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr, err := ResolveStream(ctx, t.Resolver, d, target)
	if err != nil {
		return res, err
	}
	dctx, dcancel := context.WithTimeout(ctx, dialTimeout)
	var dialer net.Dialer
	conn, err := dialer.DialContext(dctx, "tcp", addr.String())
	dcancel()
	if err != nil {
		if parent.Err() != nil {
			return res, parent.Err()
		}
		return res, err
	}
	defer conn.Close()
	res, err = Converse(ctx, conn, protocol, d.MessageLen, d.ReplyCap, q)
	if !res.Done && parent.Err() != nil {
		return res, parent.Err()
	}
	return res, err
}

// Converse runs q over conn, a connection to a stream protocol's server
// or master, until q says the reply is complete, the reply reaches cap
// (cut into messages by messageLen), the peer closes, ctx ends (which
// stops the reads) or the framing is malformed (ErrBadFraming); it does
// not close conn. It writes q's first messages (none for a peer that
// speaks first) and whatever Feed asks. A peer that closes, or a ctx that
// ends, before the reply is complete gives Done false and no error, unless
// the stream stopped inside a message (ErrIncomplete). Result counts the
// writes and the messages fed. protocol names the errors.
func Converse(ctx context.Context, conn net.Conn, protocol string, messageLen func([]byte) int, cap codecs.ReplyCap, q codecs.Query) (Result, error) {
	var res Result
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()

	s := codecs.NewStream(q, messageLen, cap)
	write := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		res.Sent++
		_, err := conn.Write(b)
		return err
	}
	sentAt := time.Now()
	if err := write(s.Start()); err != nil {
		return res, err
	}
	bp := readBufs.Get().(*[readBufSize]byte)
	defer readBufs.Put(bp)
	buf := bp[:]
	for s.Stop() == codecs.StreamOn {
		n, rerr := conn.Read(buf)
		if n > 0 {
			if s.Bytes() == 0 {
				res.RTT = time.Since(sentAt)
			}
			_, send := s.Take(buf[:n])
			res.Received = s.Messages()
			if err := write(send); err != nil {
				return res, err
			}
		}
		if rerr != nil {
			if s.Stop() != codecs.StreamOn {
				break
			}
			if ctx.Err() != nil || errors.Is(rerr, io.EOF) {
				// Out of time, or the peer closed first: a message
				// begun and not finished says so (a length that
				// promised more than came).
				if s.Pending() > 0 {
					return res, incompleteError{at: s.Bytes() - s.Pending(), have: s.Pending()}
				}
				return res, nil
			}
			return res, rerr
		}
	}
	switch s.Stop() {
	case codecs.StreamDone:
		res.Done = true
	case codecs.StreamCap:
		res.Capped = true
	case codecs.StreamBadFraming:
		return res, &codecs.Error{Protocol: protocol, Field: "stream", Offset: s.Bytes() - s.Pending(), Err: ErrBadFraming}
	}
	return res, nil
}

// readBufSize is the size of Converse's read buffer: a read takes what
// the socket holds, up to this; the Stream keeps its own copy of it.
const readBufSize = 32 << 10

// readBufs holds Converse's read buffers between conversations: a
// fresh 32 KiB each was most of what a conversation allocated.
var readBufs = sync.Pool{New: func() any { return new([readBufSize]byte) }}

// Direct asks servers directly, each protocol over its own transport:
// datagrams with UDP, a stream with TCP. The zero value is usable.
type Direct struct {
	UDP UDP
	TCP TCP
}

// Exchange implements Exchanger.
func (x *Direct) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (Result, error) {
	if d, err := codecs.LookupDescription(protocol); err == nil && d.Transport == codecs.TCP {
		return x.TCP.Exchange(ctx, protocol, target, q)
	}
	return x.UDP.Exchange(ctx, protocol, target, q)
}
