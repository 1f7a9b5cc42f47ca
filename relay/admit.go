package relay

import (
	"context"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay/wire"
)

// Admission of one query. Every query, whether it came in a QUERY frame
// (conn.query) or through the in-process Exchange (local.send), takes the
// same path, in this order; the first stage that refuses ends the query
// with an ERROR naming its rule, and nothing after it is charged:
//
//  1. checkRequest: the protocol is known, the datagram is at most
//     MaxDatagram bytes, the codec's CheckQuery accepts it, and the target
//     is "host:port" (wire.ParseTarget). These cost nothing and come before any
//     limit is charged.
//  2. admitter.open: the asker's own limits. A connection checks the id is
//     free, MaxInFlight, ConnRate and IPRate; the in-process Exchange has
//     none here (its callers limit their visitors with AllowVisitor).
//  3. route: policy on the address and port (Policy.Check); a name is
//     resolved and every address it resolves to must pass.
//  4. dispatch: the cache key (protocol, address, Config.CacheKey of the
//     datagram) finds an identical exchange in flight to join (flights) or
//     a cached answer (replyCache); a question left unanswered the last
//     times is cooling down (silence: timeout without sending);
//     otherwise the upstream admission
//     decides (upstreamSlots.reserve: shutting down, MaxUpstream, the
//     asker's fair share of it, TargetRate, TargetHostRate) and the
//     exchange starts. An asker of ExchangeCached stops before the
//     cooldown: what is neither cached nor in flight is refused
//     (not-cached), and nothing is charged upstream.
//
// Stages 3 and 4 report through the asker's sink; stages 1 and 2 return
// the refusal to the caller, because no asker exists yet.

// rateLimiter takes one token for key at now (Server.now) if it has one.
// The relay's own is an in-memory table of token buckets (limiter); a
// backend shared by several relays can stand in for it.
type rateLimiter[K comparable] interface {
	allow(key K, now time.Duration) bool
}

// admitter is the asker's side of stage 2.
type admitter interface {
	// open registers a new asker for id (0: the admitter picks one) if the
	// admitter's own limits allow it, or returns the refusal.
	open(id uint32) (*asker, *wire.RefusedError)
}

// admit runs one query through admission. On success the query is under
// way and its outcome reaches the returned asker's sink; a refusal in
// stage 1 or 2 is returned instead. ctx bounds only the name resolution.
func (s *Server) admit(ctx context.Context, from admitter, id uint32, proto, target string, d []byte) (*asker, *wire.RefusedError) {
	req, ref := s.checkRequest(proto, target, d)
	if ref != nil {
		return nil, ref
	}
	a, ref := from.open(id)
	if ref != nil {
		return nil, ref
	}
	if req.target.Name == "" {
		s.route(ctx, a, req)
		return a, nil
	}
	// A lookup may wait: the caller (a connection's read loop) goes on.
	req.datagram = append([]byte(nil), req.datagram...)
	s.wg.Add(1) // the caller holds a count of the same group
	go func() {
		defer s.wg.Done()
		s.route(ctx, a, req)
	}()
	return a, nil
}

// request is a query that passed stage 1.
type request struct {
	proto    string // the codec's name
	target   wire.Target
	datagram []byte
}

// checkRequest is stage 1.
func (s *Server) checkRequest(proto, target string, d []byte) (request, *wire.RefusedError) {
	codec, err := codecs.Lookup(proto)
	if err != nil {
		return request{}, s.refusal(wire.CodeUnknownProtocol, wire.RuleUnknownProtocol, strconv.Quote(proto))
	}
	if codecs.DescriptionOf(codec).Transport == codecs.TCP {
		// The relay holds a stream protocol's conversation itself: a
		// client's bytes never reach its servers.
		return request{}, s.refusal(wire.CodeNotAQuery, wire.RuleNotStream, codec.Name()+" travels over TCP: send an EXCHANGE")
	}
	if len(d) > s.cfg.MaxDatagram {
		return request{}, s.refusal(wire.CodeBadFrame, wire.RuleDatagramSize, strconv.Itoa(len(d))+" bytes, the limit is "+strconv.Itoa(s.cfg.MaxDatagram))
	}
	if err := s.checkQuery(codec, d); err != nil {
		return request{}, s.refusal(wire.CodeNotAQuery, wire.RuleNotAQuery, err.Error())
	}
	t, err := wire.ParseTarget(target)
	if err != nil {
		return request{}, s.refusal(wire.CodeBadFrame, wire.RuleTarget, err.Error())
	}
	return request{proto: codec.Name(), target: t, datagram: d}, nil
}

// checkQuery asks the codec, turning a codec bug that panics into a
// refusal so that one hostile datagram cannot take the relay down.
func (s *Server) checkQuery(codec codecs.Codec, d []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("relay: CheckQuery panicked", "protocol", codec.Name(), "datagram", hex.EncodeToString(d), "panic", p)
			err = errors.New(codec.Name() + ": the codec failed on this datagram")
		}
	}()
	return codec.CheckQuery(d)
}

// route is stage 3: it turns the target into the one address to query,
// or refuses, then hands over to dispatch.
func (s *Server) route(ctx context.Context, a *asker, req request) {
	addr, code, rule, detail := s.resolveTarget(ctx, req.target)
	if rule != "" {
		s.refuse(a, code, rule, detail)
		return
	}
	s.dispatch(a, req.proto, addr, req.datagram)
}

// resolveTarget applies the policy to t: to its address as written, or to
// every address its name resolves to, unmapped (so that a name cannot
// smuggle a refused address next to an allowed one, and ::ffff:127.0.0.1
// from a resolver is judged as the 127.0.0.1 it reaches; see doc.go). It
// returns the address to query, or the refusal's code, rule and detail.
func (s *Server) resolveTarget(ctx context.Context, t wire.Target) (addr netip.AddrPort, code wire.Code, rule wire.Rule, detail string) {
	if t.Name == "" {
		if err := s.policy.Check(t.Addr); err != nil {
			return addr, wire.CodeDenied, err.(*PolicyError).Rule, t.Addr.String()
		}
		return t.Addr, 0, "", ""
	}
	if rule := s.policy.checkPort(t.Port); rule != "" {
		return addr, wire.CodeDenied, rule, t.String()
	}
	addrs, err := s.resolver.lookup(ctx, t.Name)
	if err != nil || len(addrs) == 0 {
		// The resolver's own words may name the internal DNS server
		// ("lookup x on 10.0.0.2:53: ..."): the client gets a fixed
		// sentence, the log gets the rest.
		s.log.Debug("relay: resolve failed", "name", t.Name, "err", err)
		return addr, wire.CodeResolve, "resolve", "could not resolve " + t.Name + resolveReason(err)
	}
	for _, x := range addrs {
		ap := netip.AddrPortFrom(x.Unmap(), t.Port)
		if err := s.policy.Check(ap); err != nil {
			return addr, wire.CodeResolve, err.(*PolicyError).Rule, t.Name + " resolves to " + ap.Addr().String()
		}
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), t.Port), 0, "", ""
}

// resolveReason classifies a lookup failure in words that hold nothing
// from the resolver's configuration.
func resolveReason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		return " (no address)"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return " (timed out)"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return " (no such host)"
	case errors.As(err, &dnsErr) && dnsErr.IsTimeout:
		return " (timed out)"
	}
	return ""
}

// dispatch is stage 4: it answers a from the cache, joins it to an
// identical exchange in flight, or starts one if upstream admission
// allows. Every outcome reaches a through its sink.
func (s *Server) dispatch(a *asker, proto string, target netip.AddrPort, d []byte) {
	s.dispatchKey(a, s.cacheKey(proto, target, d), proto, target, d, nil)
}

// dispatchKey is dispatch for the exchange of key: a datagram query d, or
// the stream exchange job.
func (s *Server) dispatchKey(a *asker, key, proto string, target netip.AddrPort, d []byte, job *streamJob) {
	for range 3 {
		step := s.place(a, key, proto, target, d, job)
		switch {
		case step.join != nil:
			if step.join.join(a, true) {
				s.metrics.coalesced.Add(1)
				return
			}
			// It cannot serve a (see join): forget it and start afresh.
			s.flights.remove(step.join)
			continue
		case step.cached:
			s.metrics.cacheHits.Add(1)
			serveCached(a, step.answer)
		case step.rule != "":
			s.refuse(a, step.code, step.rule, step.detail)
		default:
			go step.start.run()
			if a.done.Load() {
				step.start.leave(a)
			}
		}
		return
	}
	s.refuse(a, wire.CodeBusy, wire.RuleCacheChurn, target.String())
}

// placement is what dispatch does with a query; exactly one is set.
type placement struct {
	join   *fetch // an identical exchange in flight
	cached bool   // answer is the cached answer
	answer answer
	start  *fetch    // a new exchange, registered: run it
	code   wire.Code // a refusal
	rule   wire.Rule
	detail string
}

// place decides under the lock of the exchanges in flight, so that two
// identical queries never both start one. The deferred unlock keeps the
// relay working if a check panics.
func (s *Server) place(a *asker, key, proto string, target netip.AddrPort, d []byte, job *streamJob) placement {
	s.flights.mu.Lock()
	defer s.flights.mu.Unlock()
	if f := s.flights.m[key]; f != nil {
		return placement{join: f}
	}
	if ans, ok := s.cache.get(key); ok {
		return placement{cached: true, answer: ans}
	}
	if a.cacheOnly {
		return placement{code: wire.CodeRateLimited, rule: wire.RuleNotCached, detail: target.String()}
	}
	if left, ok := s.silence.cooling(key, s.now()); ok {
		return placement{code: wire.CodeTimeout, rule: wire.RuleCooldown, detail: target.String() + ": " + cooldownMessage(left)}
	}
	if job != nil {
		// Connections in progress first: the one check that can be undone.
		if rule := s.streams.reserve(&s.cfg, a.client, a.maxStreams, target.Addr(), s.policy.own(target)); rule != "" {
			code := wire.CodeRateLimited
			if rule == wire.RuleTCPCap {
				code = wire.CodeBusy
			}
			return placement{code: code, rule: rule, detail: target.String()}
		}
	}
	if code, rule := s.upstream.reserve(a.client, target); rule != "" {
		if job != nil {
			s.streams.release(a.client, target.Addr())
		}
		return placement{code: code, rule: rule, detail: target.String()}
	}
	f := &fetch{
		s: s, key: key, target: target, query: append([]byte(nil), d...),
		ttl: s.cfg.cacheTTL(proto), limit: s.cfg.replyCap(proto), askers: []*asker{a}, client: a.client,
	}
	if job != nil {
		f.stream, f.limit = job, s.cfg.streamCap(proto)
	}
	a.fetch.Store(f)
	s.flights.m[key] = f
	s.metrics.cacheMisses.Add(1)
	s.wg.Add(1)
	return placement{start: f}
}

// cacheKey is protocol, target and the query's sharing key, separated so
// that no two distinct triples collide.
func (s *Server) cacheKey(proto string, target netip.AddrPort, d []byte) string {
	k := s.cfg.CacheKey(proto, d)
	b := make([]byte, 0, len(proto)+len(k)+32)
	b = append(b, proto...)
	b = append(b, 0)
	b = target.AppendTo(b)
	b = append(b, 0)
	b = append(b, k...)
	return string(b)
}
