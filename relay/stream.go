package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay/wire"
)

// Stream exchanges: one conversation of a TCP protocol
// (codecs.Description.Transport), asked with an EXCHANGE frame by its
// protocol, target and options, and held by the relay itself, never
// piped. Admission takes the stages of a QUERY (admit.go) with these
// differences:
//
//  1. checkStream: the protocol is a stream one; the target is
//     "host:port", or a bare name where the protocol has an SRV record;
//     the options name the target's host and port where the query carries
//     them (TargetOptions), and the codec builds a query from them
//     (NewQuery), which is the only thing ever written.
//  2. the asker's own limits, as for a QUERY (a stream exchange counts in
//     the connection's and the client's budgets).
//  3. routeStream: a bare name is looked up as its SRV record, then as
//     the name on the protocol's default port; every address the target
//     resolves to must pass the policy, and the exchange connects to the
//     address checked, never resolving again.
//  4. dispatch, keyed by protocol, address and options: joins an
//     identical exchange in flight or a cached reply; otherwise the
//     connections in progress (streamSlots: in the relay, per client, per
//     target host) and the upstream admission of a QUERY must allow it.
//
// The exchange (fetch.exchangeStream) connects within
// StreamConnectTimeout, writes what the codec built, reads until the
// codec says the reply is complete or the reply reaches its cap, all
// within StreamDeadline, and closes. The askers get the bytes as CHUNKs,
// with their offsets, then END with the reason.

// SRVResolver looks up SRV records; *net.Resolver satisfies it. A
// Config.Resolver that implements it is asked for the SRV records of
// bare names; one that does not makes the relay try the name on the
// protocol's default port alone.
type SRVResolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// streamJob is what a stream exchange needs beyond a fetch's fields: the
// codec that builds its query, and the options to build it with.
type streamJob struct {
	codec codecs.Codec
	desc  codecs.Description
	opts  map[string]string
}

// streamRequest is an EXCHANGE that passed stage 1.
type streamRequest struct {
	job    *streamJob
	target wire.Target // Port 0: a bare name, looked up as its SRV record
}

// checkStream is stage 1 of an EXCHANGE.
func (s *Server) checkStream(proto, target string, opts map[string]string) (streamRequest, *wire.RefusedError) {
	codec, err := codecs.Lookup(proto)
	if err != nil {
		return streamRequest{}, s.refusal(wire.CodeUnknownProtocol, wire.RuleUnknownProtocol, strconv.Quote(proto))
	}
	d := codecs.DescriptionOf(codec)
	if d.Transport != codecs.TCP {
		return streamRequest{}, s.refusal(wire.CodeNotAQuery, wire.RuleNotStream, codec.Name()+" travels over UDP: send a QUERY")
	}
	var t wire.Target
	if d.SRV != "" {
		t, err = wire.ParseStreamTarget(target)
	} else {
		t, err = wire.ParseTarget(target)
	}
	if err != nil {
		return streamRequest{}, s.refusal(wire.CodeBadFrame, wire.RuleTarget, err.Error())
	}
	port := int(t.Port)
	if port == 0 && len(d.Ports) > 0 {
		port = d.Ports[0]
	}
	full, err := d.TargetOptions(givenHost(target, t), port, opts)
	if err != nil {
		return streamRequest{}, s.refusal(wire.CodeNotAQuery, wire.RuleTargetInQuery, err.Error())
	}
	if err := s.tryQuery(codec, full); err != nil {
		return streamRequest{}, s.refusal(wire.CodeNotAQuery, wire.RuleOptions, err.Error())
	}
	return streamRequest{job: &streamJob{codec: codec, desc: d, opts: full}, target: t}, nil
}

// givenHost is the host of target as the client wrote it (its case kept,
// brackets off), for the query of a protocol that carries it.
func givenHost(target string, t wire.Target) string {
	if t.Port == 0 {
		return target
	}
	h := target[:strings.LastIndexByte(target, ':')]
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// tryQuery builds the query once, so that options the codec refuses cost
// nothing; a codec that panics refuses them.
func (s *Server) tryQuery(codec codecs.Codec, opts map[string]string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("relay: NewQuery panicked", "protocol", codec.Name(), "panic", p)
			err = errors.New(codec.Name() + ": the codec failed on these options")
		}
	}()
	_, err = codec.NewQuery(opts)
	return err
}

// admitStream runs one EXCHANGE through admission (see above); like
// admit, it returns a refusal of stages 1 and 2 and reports the rest
// through the asker's sink.
func (s *Server) admitStream(ctx context.Context, from admitter, id uint32, proto, target string, opts map[string]string) (*asker, *wire.RefusedError) {
	req, ref := s.checkStream(proto, target, opts)
	if ref != nil {
		return nil, ref
	}
	a, ref := from.open(id)
	if ref != nil {
		return nil, ref
	}
	a.stream = true
	if req.target.Name == "" {
		s.routeStream(ctx, a, req)
		return a, nil
	}
	s.wg.Add(1) // the caller holds a count of the same group
	go func() {
		defer s.wg.Done()
		s.routeStream(ctx, a, req)
	}()
	return a, nil
}

// routeStream is stage 3 of an EXCHANGE.
func (s *Server) routeStream(ctx context.Context, a *asker, req streamRequest) {
	t := req.target
	if t.Port == 0 {
		var code wire.Code
		var rule wire.Rule
		var detail string
		if t, code, rule, detail = s.lookupSRV(ctx, req.job.desc, t.Name); rule != "" {
			s.refuse(a, code, rule, detail)
			return
		}
	}
	addr, code, rule, detail := s.resolveTarget(ctx, t)
	if rule != "" {
		s.refuse(a, code, rule, detail)
		return
	}
	s.dispatchKey(a, s.streamKey(req.job.codec.Name(), addr, req.job.opts), req.job.codec.Name(), addr, nil, req.job)
}

// lookupSRV turns a bare name into the target its SRV record names (the
// first, as the resolver orders them), or the name on the protocol's
// default port when it has none. The record's target is a target like
// any other: its addresses are judged by the policy.
func (s *Server) lookupSRV(ctx context.Context, d codecs.Description, name string) (wire.Target, wire.Code, wire.Rule, string) {
	port := 0
	if len(d.Ports) > 0 {
		port = d.Ports[0]
	}
	if r, ok := s.cfg.Resolver.(SRVResolver); ok || s.cfg.Resolver == nil {
		if !ok {
			r = net.DefaultResolver
		}
		lctx, cancel := context.WithTimeout(ctx, s.cfg.ResolveTimeout)
		_, recs, err := r.LookupSRV(lctx, "", "", d.SRV+"."+name)
		cancel()
		if err == nil && len(recs) > 0 {
			host := strings.TrimSuffix(recs[0].Target, ".")
			t, err := wire.ParseTarget(net.JoinHostPort(host, strconv.Itoa(int(recs[0].Port))))
			if err != nil {
				return t, wire.CodeResolve, wire.RuleResolve, "the SRV record of " + name + " names a bad target"
			}
			return t, 0, "", ""
		}
	}
	t, err := wire.ParseTarget(net.JoinHostPort(name, strconv.Itoa(port)))
	if err != nil {
		return t, wire.CodeBadFrame, wire.RuleTarget, err.Error()
	}
	return t, 0, "", ""
}

// streamKey is the cache key of a stream exchange: protocol, address and
// the options in one encoding (EXCHANGE's, whose keys are in order).
func (s *Server) streamKey(proto string, target netip.AddrPort, opts map[string]string) string {
	b := make([]byte, 0, 64)
	b = append(b, proto...)
	b = append(b, 0)
	b = target.AppendTo(b)
	b = append(b, 0, 't', 0)
	b = wire.AppendExchange(b, 0, "", "", opts)
	return string(b)
}

// streamCap is what one stream exchange of protocol may bring back: its
// ReplyCaps entry, MaxStreamBytes and MaxStreamMessages where it leaves
// a field zero.
func (c *Config) streamCap(protocol string) ReplyCap {
	rc := c.ReplyCaps[protocol]
	if rc.Bytes == 0 {
		rc.Bytes = c.MaxStreamBytes
	}
	if rc.Datagrams == 0 {
		rc.Datagrams = c.MaxStreamMessages
	}
	return rc
}

// streamSlots counts the TCP connections in progress: in the relay, per
// client key and per target address, each under its cap.
type streamSlots struct {
	mu        sync.Mutex
	open      int
	perClient map[netip.Addr]int
	perHost   map[netip.Addr]int
	// The most ever in progress at once, in all and for one client key.
	peak, peakClient int
}

// reserve takes a connection for client (whose cap is perClient; 0:
// MaxStreamsPerClient) to host, or names the cap that refuses it. own says host is the operator's (Config.AllowAddrs): no
// third party's server to protect, so no cap per host.
func (ss *streamSlots) reserve(c *Config, client netip.Addr, perClient int, host netip.Addr, own bool) wire.Rule {
	if perClient <= 0 {
		perClient = c.MaxStreamsPerClient
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.open >= c.MaxStreams:
		return wire.RuleTCPCap
	case ss.perClient[client] >= perClient:
		return wire.RuleTCPPerClient
	case !own && ss.perHost[host] >= c.MaxStreamsPerHost:
		return wire.RuleTCPPerTarget
	}
	if ss.perClient == nil {
		ss.perClient, ss.perHost = make(map[netip.Addr]int), make(map[netip.Addr]int)
	}
	ss.open++
	ss.perClient[client]++
	ss.perHost[host]++
	ss.peak = max(ss.peak, ss.open)
	ss.peakClient = max(ss.peakClient, ss.perClient[client])
	return ""
}

func (ss *streamSlots) release(client, host netip.Addr) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.open--
	if ss.perClient[client]--; ss.perClient[client] <= 0 {
		delete(ss.perClient, client)
	}
	if ss.perHost[host]--; ss.perHost[host] <= 0 {
		delete(ss.perHost, host)
	}
}

// inProgress is how many connections are open (for tests and metrics).
func (ss *streamSlots) inProgress() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.open
}

// exchangeStream holds the conversation: connect to the address checked,
// write what the codec built, read until done, the cap or the deadline,
// close.
func (f *fetch) exchangeStream() outcome {
	s := f.s
	j := f.stream
	q, err := j.codec.NewQuery(j.opts)
	if err != nil {
		return outcome{code: wire.CodeInternal, rule: wire.RuleUpstream, msg: err.Error()}
	}
	start := time.Now()
	deadline := start.Add(s.cfg.StreamDeadline)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return outcome{reason: wire.EndCancelled}
	}
	f.stopFollow = cancel // stopLocked cuts the connect and the reads short
	f.mu.Unlock()

	s.metrics.streamsOpen.Add(1)
	defer s.metrics.streamsOpen.Add(-1)
	s.metrics.streams.Add(1)
	dialer := net.Dialer{Timeout: s.cfg.StreamConnectTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", f.target.String())
	if err != nil {
		return f.streamError(ctx, err)
	}
	defer conn.Close()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	st := codecs.NewStream(q, j.desc.MessageLen, codecs.ReplyCap{Bytes: f.limit.Bytes, Datagrams: f.limit.Datagrams})
	write := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		_, err := conn.Write(b)
		return err
	}
	if err := write(st.Start()); err != nil {
		return f.streamError(ctx, err)
	}
	bp := s.udpBufs.Get().(*[]byte)
	defer s.udpBufs.Put(bp)
	buf := (*bp)[:s.cfg.MaxDatagram] // a CHUNK is at most a REPLY's size
	for st.Stop() == codecs.StreamOn {
		n, rerr := conn.Read(buf)
		if n > 0 {
			k, send := st.Take(buf[:n])
			if k > 0 {
				rtt := time.Since(start)
				f.addChunk(buf[:k], rtt)
				if f.pub != nil {
					f.pub.Add(buf[:k], rtt) // the other relays' askers (shared.go)
				}
			}
			if err := write(send); err != nil {
				return f.streamError(ctx, err)
			}
		}
		if rerr != nil && st.Stop() == codecs.StreamOn {
			return f.streamError(ctx, rerr)
		}
	}
	switch st.Stop() {
	case codecs.StreamDone:
		return outcome{reason: wire.EndDone}
	case codecs.StreamCap:
		s.metrics.drops.add(DropReplyCap, 1)
		return outcome{reason: wire.EndStreamCap}
	}
	return outcome{reason: wire.EndMalformed}
}

// streamError is how a stream exchange ends when its connection fails.
func (f *fetch) streamError(ctx context.Context, err error) outcome {
	if o, ok := f.halted(); ok {
		return o
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return outcome{reason: wire.EndRefused}
	case ctx.Err() != nil, errors.As(err, &ne) && ne.Timeout():
		return outcome{reason: wire.EndTimeout}
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return outcome{reason: wire.EndClosed}
	}
	f.s.log.Debug("relay: stream exchange failed", "target", f.target.String(), "err", err)
	return outcome{reason: wire.EndClosed}
}

// addChunk records bytes of the reply stream and hands them to every
// asker. The stream driver has already held them to the cap.
func (f *fetch) addChunk(b []byte, rtt time.Duration) {
	s := f.s
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.replies) == 0 {
		s.metrics.rtt.observe(rtt)
	}
	r := reply{data: append([]byte(nil), b...), rtt: uint32(min(rtt/time.Microsecond, 1<<32-1))}
	f.replies = append(f.replies, r)
	f.size += len(b)
	s.metrics.streamBytes.Add(uint64(len(b)))
	for _, a := range f.askers {
		flags := f.sharedFlags // streamed from another relay (shared.go)
		if a.coalesced {
			flags = wire.FlagCoalesced
		}
		a.sink.reply(a, r, flags)
	}
}

// chunk is conn.reply for a stream asker: a CHUNK at the asker's offset,
// or, when the client's queue has no room for it, END slow-client at
// once, never a silent cut; the asker then leaves the exchange.
func (c *conn) chunk(a *asker, r reply, flags wire.ReplyFlags) {
	fr := wire.AppendChunk(make([]byte, 0, wire.ChunkHeader+len(r.data)), a.id, a.offset, flags, r.data)
	c.mu.Lock()
	if a.done.Load() {
		c.mu.Unlock()
		return
	}
	slow, start := false, false
	if c.pushLocked(fr) {
		a.replies++
		a.offset += uint32(len(r.data))
		start = c.claimWriterLocked()
	} else if c.s.finish(a) {
		slow = true
		if c.active[a.id] == a {
			delete(c.active, a.id)
		}
		start = c.pushLocked(wire.AppendEnd(nil, a.id, wire.EndSlowClient, uint16(a.replies))) && c.claimWriterLocked()
	}
	c.mu.Unlock()
	if start {
		c.startWriter()
	}
	if slow {
		c.s.metrics.streamEnds.add(wire.EndSlowClient.String(), 1)
		// The exchange holds its lock while it hands out chunks: leave it
		// from outside. Its goroutine holds a count of the group.
		c.s.wg.Add(1)
		go func() {
			defer c.s.wg.Done()
			a.leave()
		}()
	}
}

// exchangeFrame reads an EXCHANGE.
func (c *conn) exchangeFrame(f wire.Frame) {
	if !c.streams {
		c.sendError(f.ID, c.s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, "exchange frames need "+wire.SubprotocolStream))
		return
	}
	if f.ID == 0 {
		c.sendError(0, c.s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, "id 0 is reserved"))
		return
	}
	if _, ref := c.s.admitStream(c.ctx, c, f.ID, f.Protocol, f.Target, f.Options); ref != nil {
		c.sendError(f.ID, ref)
	}
}
