package relay

import (
	"context"
	"encoding/hex"
	"errors"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
)

// Admission of one query. Every query, whether it came in a QUERY frame
// (conn.query) or through the in-process Exchange (local.send), takes the
// same path, in this order; the first stage that refuses ends the query
// with an ERROR naming its rule, and nothing after it is charged:
//
//  1. checkRequest: the protocol is known, the datagram is at most
//     MaxDatagram bytes, the codec's CheckQuery accepts it, and the target
//     is "host:port" (ParseTarget). These cost nothing and come before any
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
//     exchange starts.
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
	open(id uint32) (*asker, *RefusedError)
}

// admit runs one query through admission. On success the query is under
// way and its outcome reaches the returned asker's sink; a refusal in
// stage 1 or 2 is returned instead. ctx bounds only the name resolution.
func (s *Server) admit(ctx context.Context, from admitter, id uint32, proto, target string, d []byte) (*asker, *RefusedError) {
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
	target   Target
	datagram []byte
}

// checkRequest is stage 1.
func (s *Server) checkRequest(proto, target string, d []byte) (request, *RefusedError) {
	codec, err := codecs.Lookup(proto)
	if err != nil {
		return request{}, s.refusal(CodeUnknownProtocol, "unknown-protocol", strconv.Quote(proto))
	}
	if len(d) > s.cfg.MaxDatagram {
		return request{}, s.refusal(CodeBadFrame, "datagram-size", strconv.Itoa(len(d))+" bytes, the limit is "+strconv.Itoa(s.cfg.MaxDatagram))
	}
	if err := s.checkQuery(codec, d); err != nil {
		return request{}, s.refusal(CodeNotAQuery, "not-a-query", err.Error())
	}
	t, err := ParseTarget(target)
	if err != nil {
		return request{}, s.refusal(CodeBadFrame, "target", err.Error())
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

// resolveTarget applies the policy to t: to its address, or to every
// address its name resolves to (so that a name cannot smuggle a refused
// address next to an allowed one). It returns the address to query, or the
// refusal's code, rule and detail.
func (s *Server) resolveTarget(ctx context.Context, t Target) (addr netip.AddrPort, code Code, rule, detail string) {
	if t.Name == "" {
		if err := s.policy.Check(t.Addr); err != nil {
			return addr, CodeDenied, err.(*PolicyError).Rule, t.Addr.String()
		}
		return t.Addr, 0, "", ""
	}
	if rule := s.policy.checkPort(t.Port); rule != "" {
		return addr, CodeDenied, rule, t.String()
	}
	addrs, err := s.resolver.lookup(ctx, t.Name)
	if err != nil || len(addrs) == 0 {
		// The resolver's own words may name the internal DNS server
		// ("lookup x on 10.0.0.2:53: ..."): the client gets a fixed
		// sentence, the log gets the rest.
		s.log.Debug("relay: resolve failed", "name", t.Name, "err", err)
		return addr, CodeResolve, "resolve", "could not resolve " + t.Name + resolveReason(err)
	}
	for _, x := range addrs {
		ap := netip.AddrPortFrom(x.Unmap(), t.Port)
		if err := s.policy.Check(ap); err != nil {
			return addr, CodeResolve, err.(*PolicyError).Rule, t.Name + " resolves to " + ap.Addr().String()
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
	key := s.cacheKey(proto, target, d)
	for range 3 {
		step := s.place(a, key, proto, target, d)
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
	s.refuse(a, CodeBusy, "cache-churn", target.String())
}

// placement is what dispatch does with a query; exactly one is set.
type placement struct {
	join   *fetch // an identical exchange in flight
	cached bool   // answer is the cached answer
	answer answer
	start  *fetch // a new exchange, registered: run it
	code   Code   // a refusal
	rule   string
	detail string
}

// place decides under the lock of the exchanges in flight, so that two
// identical queries never both start one. The deferred unlock keeps the
// relay working if a check panics.
func (s *Server) place(a *asker, key, proto string, target netip.AddrPort, d []byte) placement {
	s.flights.mu.Lock()
	defer s.flights.mu.Unlock()
	if f := s.flights.m[key]; f != nil {
		return placement{join: f}
	}
	if ans, ok := s.cache.get(key, time.Now()); ok {
		return placement{cached: true, answer: ans}
	}
	if left, ok := s.silence.cooling(key, s.now()); ok {
		return placement{code: CodeTimeout, rule: "cooldown", detail: target.String() + ": " + cooldownMessage(left)}
	}
	if code, rule := s.upstream.reserve(a.client, target); rule != "" {
		return placement{code: code, rule: rule, detail: target.String()}
	}
	f := &fetch{
		s: s, key: key, target: target, query: append([]byte(nil), d...),
		ttl: s.cfg.cacheTTL(proto), askers: []*asker{a}, client: a.client,
	}
	a.fetch.Store(f)
	s.flights.m[key] = f
	s.metrics.cacheMisses.Add(1)
	s.wg.Add(1)
	return placement{start: f}
}

// upstreamSlots shares the relay's MaxUpstream exchanges between client
// keys. A key's weight is the larger of the exchanges it has open now and
// the number it held on average lately (a moving average over about one
// reply window): a key whose exchanges have all just ended does not count
// as new, and one whose exchanges end fast weighs little however often it
// asks. Keys that held at least one slot on average lately are heavy. A
// key may start an exchange while its weight is below an equal share of
// all but the last sixteenth of the slots between the heavy keys (itself
// included), (MaxUpstream-kept)/heavy, at least one. Clients that flood
// silent targets (each exchange holds its slot for the whole window)
// therefore hold about their shares between them, the kept slots stay for
// the light keys, and a key that is the only heavy one (a page refreshing
// a long list, among many light ones) still gets nearly all of it. Right
// after a flood starts on an idle relay the first keys may hold more than
// their share, until their exchanges end (one window).
type upstreamSlots struct {
	s      *Server
	max    int
	kept   int           // slots beyond every key's share
	window time.Duration // time constant of the average
	keys   int           // most keys remembered

	mu        sync.Mutex
	open      int
	perKey    map[netip.Addr]*keyUse
	heavy     int           // keys whose average was >= 1 at counted
	countedAt time.Duration // Server.now() of the last count (and sweep)
}

// keyUse is one client key's use of the upstream slots; the in-process
// Exchange is the invalid Addr.
type keyUse struct {
	open int
	avg  float64       // moving average of open, up to last
	last time.Duration // Server.now() of the last update
}

func newUpstreamSlots(s *Server, max int) *upstreamSlots {
	return &upstreamSlots{s: s, max: max, kept: max / 16, window: s.cfg.ReplyWindow, keys: 1 << 16, perKey: make(map[netip.Addr]*keyUse)}
}

// decay brings k's average to now: open has not changed since last, so
// the average moves towards it exponentially, with the reply window as
// time constant.
func (u *upstreamSlots) decay(k *keyUse, now time.Duration) {
	if now > k.last {
		w := math.Exp(-float64(now-k.last) / float64(u.window))
		k.avg = float64(k.open) + (k.avg-float64(k.open))*w
		k.last = now
	}
}

// countLocked counts the heavy keys and forgets the keys with nothing
// open whose average has decayed to almost nothing. It runs at most 16
// times a window: shares follow the load with that delay.
func (u *upstreamSlots) countLocked(now time.Duration, force bool) {
	if !force && now-u.countedAt < u.window/16 {
		return
	}
	u.countedAt = now
	u.heavy = 0
	for a, k := range u.perKey {
		u.decay(k, now)
		switch {
		case k.avg >= 1:
			u.heavy++
		case k.open == 0 && k.avg < 0.05:
			delete(u.perKey, a)
		}
	}
}

// reserve takes a slot for an exchange that client starts to target, or
// names the rule that refuses it. The rules cost nothing and come first;
// the target's rate limits are charged only when they pass.
func (u *upstreamSlots) reserve(client netip.Addr, target netip.AddrPort) (Code, string) {
	s := u.s
	now := s.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.countLocked(now, false)
	k := u.perKey[client]
	if k == nil {
		if len(u.perKey) >= u.keys {
			u.countLocked(now, true)
		}
		if len(u.perKey) >= u.keys {
			return CodeBusy, "upstream-share" // every key remembered is busy: fail closed
		}
		k = &keyUse{last: now}
		u.perKey[client] = k
	}
	u.decay(k, now)
	heavy := u.heavy
	if k.avg < 1 {
		heavy++ // this key, as if it were heavy
	}
	// The count may predate this key turning heavy.
	heavy = max(heavy, 1)
	share := max(float64((u.max-u.kept)/heavy), 1)
	switch {
	case s.isClosing():
		return CodeBusy, "shutting-down"
	case u.open >= u.max:
		return CodeBusy, "upstream-cap"
	case float64(k.open) >= share || k.avg >= share:
		return CodeBusy, "upstream-share"
	case s.policy.own(target):
		// The operator's own server (Config.AllowAddrs): no third party
		// to protect, so no per-target limit.
	case !s.targetRate.allow(target, now):
		return CodeRateLimited, "per-target"
	case !s.hostRate.allow(target.Addr(), now):
		return CodeRateLimited, "per-target-host"
	}
	k.open++
	u.open++
	s.metrics.upstreamOpen.Store(int64(u.open))
	return 0, ""
}

// release returns the slot of an exchange client started.
func (u *upstreamSlots) release(client netip.Addr) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.open--
	if k := u.perKey[client]; k != nil {
		u.decay(k, u.s.now())
		k.open--
	}
	u.s.metrics.upstreamOpen.Store(int64(u.open))
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

// Target is a query's destination as written by the client: an address
// and port, or a DNS name and port.
type Target struct {
	Addr netip.AddrPort // valid when the host is an IP literal
	Name string         // the host name, lower case without a final dot, otherwise ""
	Port uint16
}

// String is the target in canonical form: "1.2.3.4:5", "[2001:db8::1]:5"
// or "name.example:5".
func (t Target) String() string {
	if t.Name == "" {
		return t.Addr.String()
	}
	return t.Name + ":" + strconv.Itoa(int(t.Port))
}

// ParseTarget checks the syntax of "host:port", where host is an IPv4
// literal, a bracketed IPv6 literal or a DNS name, and port is decimal
// without leading zeros. It does not judge the address (Policy.Check does)
// and keeps every spelling as written: an IPv4-mapped IPv6 literal stays
// IPv6, so that the policy refuses it. The relay's WebSocket path, its
// Exchange and the status page all parse targets with it.
func ParseTarget(s string) (Target, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Target{}, targetError(s, "missing :port")
	}
	host, ps := s[:i], s[i+1:]
	if len(ps) == 0 || len(ps) > 5 || strings.Trim(ps, "0123456789") != "" || len(ps) > 1 && ps[0] == '0' {
		return Target{}, targetError(s, "bad port")
	}
	p, _ := strconv.Atoi(ps)
	if p > 65535 {
		return Target{}, targetError(s, "bad port")
	}
	port := uint16(p)
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return Target{}, targetError(s, "bad IPv6 literal")
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return Target{}, targetError(s, "bad IPv6 literal")
		}
		return Target{Addr: netip.AddrPortFrom(a, port), Port: port}, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return Target{}, targetError(s, "IPv6 literals need brackets")
		}
		return Target{Addr: netip.AddrPortFrom(a, port), Port: port}, nil
	}
	if !validName(host) {
		return Target{}, targetError(s, "bad host name")
	}
	return Target{Name: strings.ToLower(strings.TrimSuffix(host, ".")), Port: port}, nil
}

// validName accepts DNS host names: labels of letters, digits, '-' and '_'
// (not starting or ending with '-'), at most 253 bytes, and a last label
// that is not all digits (so that "2130706433" or "127.1" never reach a
// resolver that would read them as addresses).
func validName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	allDigits := false
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		allDigits = true
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_':
				allDigits = false
			default:
				return false
			}
		}
	}
	return !allDigits
}

type targetSyntaxError struct{ target, why string }

func (e *targetSyntaxError) Error() string {
	return "target " + strconv.Quote(e.target) + ": " + e.why
}

func targetError(target, why string) error { return &targetSyntaxError{target, why} }
