package relay

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// sink receives what happens to an asker's query. The connection and the
// in-process Exchange implement it. Calls for one asker come in order:
// replies, then exactly one end or fail (unless the asker finished first).
type sink interface {
	reply(a *asker, r reply, flags wire.ReplyFlags)
	end(a *asker, reason wire.EndReason)
	fail(a *asker, code wire.Code, msg string)
}

// asker is one query id waiting for replies.
type asker struct {
	sink       sink
	id         uint32
	client     netip.Addr // the client key (clientKey); invalid for Exchange
	cacheOnly  bool       // ExchangeCached: served from the cache or a flight, never starts one
	coalesced  bool       // set under the fetch's lock before the asker is visible
	fetch      atomic.Pointer[fetch]
	done       atomic.Bool
	replies    int    // REPLY (or CHUNK) frames delivered; guarded by the sink
	stream     bool   // an EXCHANGE: its replies are CHUNKs of one stream
	maxStreams int    // the client's MaxStreams (ClientLimits); 0: Config.MaxStreamsPerClient
	offset     uint32 // the stream's bytes delivered; guarded by the sink
}

// finish marks a done once; it reports whether this call did it.
func (s *Server) finish(a *asker) bool {
	if a.done.CompareAndSwap(false, true) {
		s.inflight.Add(-1)
		return true
	}
	return false
}

// leave detaches a from its upstream exchange, if it has one.
func (a *asker) leave() {
	if f := a.fetch.Load(); f != nil {
		f.leave(a)
	}
}

// reply is one datagram from upstream with the RTT measured for it.
// data is shared by every asker and the cache: never modify it.
type reply struct {
	data []byte
	rtt  uint32 // microseconds
}

// fetch is one upstream exchange: a query sent once to one target and the
// replies that came back within the window. While it runs, identical
// queries join it (coalesced); after it ends with replies, its answer
// stays in the cache until it expires.
type fetch struct {
	s      *Server
	key    string
	target netip.AddrPort
	query  []byte
	ttl    time.Duration
	limit  ReplyCap   // the protocol's (Config.replyCap)
	client netip.Addr // whose upstream slot the exchange holds (upstreamSlots)
	stream *streamJob // a stream exchange (stream.go); nil for a datagram query

	mu       sync.Mutex
	askers   []*asker
	replies  []reply
	size     int
	complete bool
	reason   wire.EndReason
	sock     *net.UDPConn
	stopped  bool // every asker left, or the relay is shutting down
	shutdown bool

	// slotFreed says the exchange's upstream slot was given back
	// (freeSlot): when its last asker left, or when it ended.
	slotFreed atomic.Bool

	// Shared cache (shared.go): the flags of replies streamed from
	// another relay, how to stop streaming them, and, while this relay
	// owns the exchange for every relay, its publisher.
	sharedFlags wire.ReplyFlags
	stopFollow  func()
	pub         *shared.Publisher
}

// join attaches a to f: it replays the replies so far, then either keeps a
// for what comes next or, when f is complete, ends it at once. It reports
// false when f cannot serve a: it completed without a reply, or it is
// stopping because its askers all left; the caller then starts afresh.
func (f *fetch) join(a *asker, coalesced bool) bool {
	f.mu.Lock()
	if f.complete && len(f.replies) == 0 || f.stopped && !f.complete {
		f.mu.Unlock()
		return false
	}
	flags := wire.ReplyFlags(0)
	switch {
	case f.complete:
		flags = wire.FlagCached
	case coalesced:
		flags = wire.FlagCoalesced
		a.coalesced = true
	}
	a.fetch.Store(f)
	for _, r := range f.replies {
		a.sink.reply(a, r, flags)
	}
	if !f.complete {
		f.askers = append(f.askers, a)
		f.mu.Unlock()
		if a.done.Load() {
			f.leave(a)
		}
		return true
	}
	reason := f.reason
	f.mu.Unlock()
	if reason == wire.EndCancelled {
		reason = wire.EndWindow
	}
	a.sink.end(a, reason)
	return true
}

// leave removes a; when no asker is left, the exchange stops early and
// whatever came is cached, and its upstream slot is free at once: its read
// returns without waiting, so it holds nothing another exchange needs, and
// the client that cancelled may start another as soon as it sent its
// CANCEL (the relay reads a connection's frames in order), as it may
// count the query out of its MaxInFlight.
func (f *fetch) leave(a *asker) {
	f.mu.Lock()
	for i, x := range f.askers {
		if x == a {
			f.askers = append(f.askers[:i], f.askers[i+1:]...)
			break
		}
	}
	stop := len(f.askers) == 0 && !f.complete
	if stop {
		f.stopLocked(false)
	}
	f.mu.Unlock()
	if stop {
		f.freeSlot()
	}
}

// freeSlot gives the exchange's upstream slot back, once.
func (f *fetch) freeSlot() {
	if f.slotFreed.CompareAndSwap(false, true) {
		f.s.upstream.release(f.client)
	}
}

// stopLocked makes the exchange's read return at once. It does not close
// the socket: Close waits for the blocked reader to be scheduled, which
// would stall the caller (a connection's read loop) behind every other
// runnable goroutine; the exchange closes its own socket.
func (f *fetch) stopLocked(shutdown bool) {
	f.stopped = true
	f.shutdown = f.shutdown || shutdown
	if f.stopFollow != nil {
		f.stopFollow()
	}
	if f.sock != nil {
		f.sock.SetReadDeadline(time.Unix(1, 0))
	}
}

// outcome is how an exchange ended; code 0 means it ended normally.
type outcome struct {
	reason wire.EndReason
	code   wire.Code
	rule   wire.Rule
	msg    string
}

func (f *fetch) run() {
	s := f.s
	defer s.wg.Done()
	defer f.freeSlot()
	if f.stream != nil {
		defer s.streams.release(f.client, f.target.Addr())
	}
	out := f.exchange()
	f.finish(out)
}

func (f *fetch) exchange() outcome {
	s := f.s
	if out, handled := f.viaShared(); handled {
		return out
	}
	if f.stream != nil {
		return f.exchangeStream()
	}
	us, err := s.sockets.get(f.target)
	if err != nil {
		return outcome{code: wire.CodeInternal, rule: wire.RuleUpstream, msg: err.Error()}
	}
	out := f.exchangeOn(us.c)
	// Detach first: once back in the pool the socket may serve another
	// exchange, whose read a late stopLocked of this one must not cut.
	f.mu.Lock()
	f.sock = nil
	f.mu.Unlock()
	s.sockets.put(us, out.code != wire.CodeInternal)
	return out
}

func (f *fetch) exchangeOn(sock *net.UDPConn) outcome {
	s := f.s
	start := time.Now()
	sock.SetReadDeadline(start.Add(s.cfg.ReplyWindow))
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return outcome{reason: wire.EndCancelled}
	}
	f.sock = sock // from here on, stopLocked can cut the window short
	f.mu.Unlock()

	if _, err := sock.Write(f.query); err != nil {
		return f.readError(err)
	}
	s.metrics.forwarded.Add(1)
	bp := s.udpBufs.Get().(*[]byte)
	defer s.udpBufs.Put(bp)
	buf := *bp
	target := netip.AddrPortFrom(f.target.Addr().Unmap(), f.target.Port())
	for {
		n, from, err := sock.ReadFromUDPAddrPort(buf)
		if err != nil {
			return f.readError(err)
		}
		rtt := time.Since(start)
		// A connected socket only delivers datagrams from the target; the
		// comparison keeps that true whatever the platform does.
		if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != target {
			s.metrics.drops.add(DropWrongSource, 1)
			continue
		}
		if n > s.cfg.MaxDatagram {
			s.metrics.drops.add(DropOversize, 1)
			continue
		}
		before := f.count()
		full := f.add(buf[:n], rtt)
		if f.pub != nil && f.count() > before {
			f.pub.Add(buf[:n], rtt)
		}
		if full {
			return outcome{reason: wire.EndByteCap}
		}
	}
}

// halted is the outcome of a fetch the relay stopped (its clients gone,
// or the relay shutting down), if it was: its socket's error says nothing
// more.
func (f *fetch) halted() (outcome, bool) {
	f.mu.Lock()
	stopped, shutdown := f.stopped, f.shutdown
	f.mu.Unlock()
	switch {
	case shutdown:
		return outcome{reason: wire.EndCancelled, code: wire.CodeBusy, rule: wire.RuleShuttingDown, msg: "the relay is shutting down"}, true
	case stopped:
		return outcome{reason: wire.EndCancelled}, true
	}
	return outcome{}, false
}

func (f *fetch) readError(err error) outcome {
	if o, ok := f.halted(); ok {
		return o
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return outcome{reason: wire.EndWindow, code: wire.CodeTimeout, rule: wire.RuleTimeout,
			msg: "no reply within " + strconv.FormatInt(f.s.cfg.ReplyWindow.Milliseconds(), 10) + " ms"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return outcome{reason: wire.EndWindow, code: wire.CodeTimeout, rule: wire.RuleUnreachable, msg: "the target's port is closed (ICMP port unreachable)"}
	}
	return outcome{code: wire.CodeInternal, rule: wire.RuleUpstream, msg: err.Error()}
}

// add records one reply and hands it to every asker. A reply that would
// pass the protocol's cap (f.limit: bytes or datagrams) is dropped and
// counted instead, and add reports true: the exchange must end. A reply
// that fills the cap exactly is kept and the window stays open, so that
// END says byte-cap only when something was cut.
func (f *fetch) add(b []byte, rtt time.Duration) (full bool) {
	s := f.s
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.size+len(b) > f.limit.Bytes || len(f.replies) >= f.limit.Datagrams {
		s.metrics.drops.add(DropReplyCap, 1)
		return true
	}
	if len(f.replies) == 0 {
		s.metrics.rtt.observe(rtt)
	}
	r := reply{data: append([]byte(nil), b...), rtt: uint32(min(rtt/time.Microsecond, 1<<32-1))}
	f.replies = append(f.replies, r)
	f.size += len(b)
	s.metrics.replies.Add(1)
	s.metrics.replyBytes.Add(uint64(len(b)))
	for _, a := range f.askers {
		flags := f.sharedFlags
		if a.coalesced {
			flags = wire.FlagCoalesced
		}
		a.sink.reply(a, r, flags)
	}
	return false
}

// finish ends the exchange: it caches or forgets it, then tells every asker.
func (f *fetch) finish(out outcome) {
	s := f.s
	if out.code == wire.CodeInternal {
		s.log.Warn("relay: upstream exchange failed", "target", f.target.String(), "err", out.msg)
	}
	f.mu.Lock()
	f.reason = out.reason
	got := len(f.replies) > 0
	ans := answer{replies: f.replies, size: f.size, reason: out.reason}
	f.mu.Unlock()
	if f.pub != nil {
		f.pub.Finish(ownerStatus(out, got, f.stream != nil), f.ttl)
	}
	// The answer goes to the cache before the exchange leaves the table of
	// those in flight, so that an identical query finds one or the other.
	// A stream reply is kept only whole or capped: one cut short by the
	// server or the deadline is asked again.
	keep := f.stream == nil || out.reason == wire.EndDone || out.reason == wire.EndStreamCap
	if got && keep && f.ttl > 0 && !f.shutdownNow() {
		s.cache.put(f.key, ans, f.ttl)
	}
	switch {
	case got:
		s.silence.heard(f.key)
	case out.code == wire.CodeTimeout, f.stream != nil && out.reason == wire.EndTimeout:
		s.silence.silent(f.key, s.now())
	}
	if f.stream != nil && out.code == 0 {
		s.metrics.streamEnds.add(out.reason.String(), 1)
	}
	s.flights.remove(f)

	f.mu.Lock()
	f.complete = true
	askers := f.askers
	f.askers = nil
	f.sock = nil
	f.mu.Unlock()
	for _, a := range askers {
		if got || f.stream != nil && out.code == 0 {
			// A stream exchange ends with END and its reason even
			// without a byte.
			a.sink.end(a, out.reason)
			continue
		}
		code, rule, msg := out.code, out.rule, out.msg
		if code == 0 {
			code, rule, msg = wire.CodeBusy, wire.RuleShuttingDown, "the relay is shutting down"
		}
		s.refuse(a, code, rule, msg)
	}
}

// count is how many replies f holds.
func (f *fetch) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.replies)
}

func (f *fetch) shutdownNow() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shutdown
}
