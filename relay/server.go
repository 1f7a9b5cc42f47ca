package relay

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/codecs"
)

// Server is the relay. It implements http.Handler for the WebSocket
// endpoint and never listens on its own.
type Server struct {
	cfg      Config
	log      *slog.Logger
	policy   *Policy
	resolver resolver
	metrics  metrics
	cache    cache
	shared   *shared // nil without a shared store
	epoch    time.Time

	ipRate      *limiter[netip.Addr]
	visitorRate *limiter[netip.Addr]
	targetRate  *limiter[netip.AddrPort]
	hostRate    *limiter[netip.Addr]

	frameBufs sync.Pool // *[]byte of the read limit, for client frames
	udpBufs   sync.Pool // *[]byte of MaxDatagram+1, for upstream reads

	inflight atomic.Int64 // askers not yet finished
	wg       sync.WaitGroup

	closing atomic.Bool // set under mu, read anywhere

	mu        sync.Mutex
	conns     map[*conn]struct{}
	perIP     map[netip.Addr]int
	reporters []HealthReporter // see ReportHealth
}

// New returns a relay with cfg's zero fields set to their defaults. It
// panics if cfg fails Validate. A nil logger discards logs.
func New(cfg Config, logger *slog.Logger) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CacheKey == nil {
		cfg.CacheKey = func(_ string, d []byte) []byte { return d }
	}
	var r Resolver = cfg.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	s := &Server{
		cfg:         cfg,
		log:         logger,
		policy:      NewPolicy(cfg.AllowTargets, cfg.AllowPorts),
		resolver:    resolver{r: r, timeout: cfg.ResolveTimeout},
		epoch:       time.Now(),
		ipRate:      newLimiter[netip.Addr](cfg.IPRate, 1<<16),
		visitorRate: newLimiter[netip.Addr](cfg.VisitorRate, 1<<16),
		targetRate:  newLimiter[netip.AddrPort](cfg.TargetRate, 1<<16),
		hostRate:    newLimiter[netip.Addr](cfg.TargetHostRate, 1<<16),
		conns:       make(map[*conn]struct{}),
		perIP:       make(map[netip.Addr]int),
	}
	s.resolver.wg = &s.wg
	s.shared = newShared(&cfg, logger.Warn)
	s.metrics.shared = s.appendDependencyMetrics
	s.cache = cache{m: make(map[string]*fetch), maxEntries: cfg.MaxCacheEntries, maxBytes: cfg.MaxCacheBytes}
	s.metrics.cacheEntries = s.cache.stats
	readLimit := s.readLimit()
	s.frameBufs.New = func() any { b := make([]byte, readLimit+1); return &b }
	s.udpBufs.New = func() any { b := make([]byte, cfg.MaxDatagram+1); return &b }
	return s
}

// readLimit is the largest client frame: a QUERY with both names at their
// longest and a datagram of MaxDatagram bytes.
func (s *Server) readLimit() int { return queryHeaderMax + s.cfg.MaxDatagram }

// now is the monotonic clock the rate limiters run on.
func (s *Server) now() time.Duration { return time.Since(s.epoch) }

// RefusedError is a refusal or failure reported by a relay, in the ERROR
// frame's terms. The relay client and the in-process Exchange return it.
type RefusedError struct {
	ID      uint32
	Code    Code
	Message string // "rule: detail"
}

func (e *RefusedError) Error() string {
	return "relay: " + e.Code.String() + ": " + e.Message
}

// Rule names the rule that refused: the part of Message before ": ".
func (e *RefusedError) Rule() string {
	if i := strings.Index(e.Message, ": "); i >= 0 {
		return e.Message[:i]
	}
	return e.Message
}

// refuse finishes a with an ERROR naming rule.
func (s *Server) refuse(a *asker, code Code, rule, detail string) {
	s.count(code, rule)
	a.sink.fail(a, code, rule+": "+detail)
}

func (s *Server) count(code Code, rule string) {
	if code == CodeTimeout {
		s.metrics.timeouts.add(rule, 1)
		return
	}
	s.metrics.refusals.add(rule, 1)
}

// request is a query that passed the checks that need no lookup.
type request struct {
	proto    string
	addr     netip.AddrPort // valid for IP literals
	name     string         // host name to resolve, otherwise ""
	port     uint16
	datagram []byte
}

// precheck runs the checks that cost nothing: protocol, size, CheckQuery,
// target syntax. They come before any rate limit is charged.
func (s *Server) precheck(proto, target string, d []byte) (request, *RefusedError) {
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
	addr, name, port, err := parseTarget(target)
	if err != nil {
		return request{}, s.refusal(CodeBadFrame, "target", err.Error())
	}
	return request{proto: codec.Name(), addr: addr, name: name, port: port, datagram: d}, nil
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

func (s *Server) refusal(code Code, rule, detail string) *RefusedError {
	s.count(code, rule)
	return &RefusedError{Code: code, Message: rule + ": " + detail}
}

// forward applies the target policy (resolving names first), then answers
// a from the cache, joins it to an identical exchange in flight, or starts
// one. Every outcome reaches a through its sink.
func (s *Server) forward(ctx context.Context, a *asker, req request) {
	addr := req.addr
	if req.name == "" {
		if err := s.policy.Check(addr); err != nil {
			s.refuse(a, CodeDenied, err.(*PolicyError).Rule, addr.String())
			return
		}
	} else {
		if err := s.policy.checkPort(req.port); err != "" {
			s.refuse(a, CodeDenied, err, req.name+":"+strconv.Itoa(int(req.port)))
			return
		}
		addrs, err := s.resolver.lookup(ctx, req.name)
		if err != nil || len(addrs) == 0 {
			detail := req.name + ": no address"
			if err != nil {
				detail = req.name + ": " + err.Error()
			}
			s.refuse(a, CodeResolve, "resolve", detail)
			return
		}
		for _, x := range addrs {
			ap := netip.AddrPortFrom(x.Unmap(), req.port)
			if err := s.policy.Check(ap); err != nil {
				s.refuse(a, CodeResolve, err.(*PolicyError).Rule, req.name+" resolves to "+ap.Addr().String())
				return
			}
		}
		addr = netip.AddrPortFrom(addrs[0].Unmap(), req.port)
	}
	s.dispatch(a, req.proto, addr, req.datagram)
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

func (s *Server) dispatch(a *asker, proto string, target netip.AddrPort, d []byte) {
	key := s.cacheKey(proto, target, d)
	for range 3 {
		s.cache.mu.Lock()
		f := s.cache.lookupLocked(key, time.Now())
		if f != nil {
			cached := f.elem != nil
			s.cache.mu.Unlock()
			if f.join(a, true) {
				if cached {
					s.metrics.cacheHits.Add(1)
				} else {
					s.metrics.coalesced.Add(1)
				}
				return
			}
			// It cannot serve a (see join): forget it and start afresh.
			s.cache.mu.Lock()
			if s.cache.m[key] == f {
				s.cache.removeLocked(f)
			}
			s.cache.mu.Unlock()
			continue
		}
		rule := ""
		now := s.now()
		switch {
		case s.isClosing():
			rule = "shutting-down"
		case s.metrics.upstreamOpen.Load() >= int64(s.cfg.MaxUpstream):
			rule = "upstream-cap"
		case !s.targetRate.allow(target, now):
			rule = "per-target"
		case !s.hostRate.allow(target.Addr(), now):
			rule = "per-target-host"
		}
		if rule != "" {
			s.cache.mu.Unlock()
			code := CodeRateLimited
			if rule == "shutting-down" || rule == "upstream-cap" {
				code = CodeBusy
			}
			s.refuse(a, code, rule, target.String())
			return
		}
		f = &fetch{
			s: s, key: key, target: target, query: append([]byte(nil), d...),
			ttl: s.cfg.cacheTTL(proto), askers: []*asker{a},
		}
		a.fetch.Store(f)
		s.cache.m[key] = f
		s.metrics.upstreamOpen.Add(1)
		s.metrics.cacheMisses.Add(1)
		s.wg.Add(1)
		s.cache.mu.Unlock()
		go f.run()
		if a.done.Load() {
			f.leave(a)
		}
		return
	}
	s.refuse(a, CodeBusy, "cache-churn", target.String())
}

func (s *Server) isClosing() bool { return s.closing.Load() }

// clientKey is the address rate limits and connection caps are kept per:
// the client's IPv4 address, or its IPv6 /64.
func clientKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// AllowVisitor reports whether the client of r (RemoteAddr, or
// X-Forwarded-For from TrustedProxies; IPv6 per /64) may have another page
// that makes the server query a game server itself through Exchange (a
// status page, a badge), and takes one token of VisitorRate. Exchange limits
// each target; this limits each visitor, so that shared links and scripts
// cannot make the relay query many servers.
func (s *Server) AllowVisitor(r *http.Request) bool {
	ok := s.visitorRate.allow(clientKey(s.clientIP(r)), s.now())
	if !ok {
		s.count(CodeRateLimited, "visitor-rate")
	}
	return ok
}

// clientIP is the peer's address, or the first address in X-Forwarded-For
// (read right to left) that is not a trusted proxy when the peer is one.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	ip := ap.Addr().Unmap().WithZone("")
	if !s.trusted(ip) {
		return ip
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		ip = h.Unmap().WithZone("")
		if !s.trusted(ip) {
			break
		}
	}
	return ip
}

func (s *Server) trusted(ip netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// originAllowed mirrors the WebSocket library's check (same host always;
// otherwise OriginPatterns) so that the refusal is counted and logged with
// its rule before the handshake.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, p := range s.cfg.OriginPatterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return true
		}
	}
	return false
}

// ServeHTTP accepts one WebSocket connection and serves it until it ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ip := s.clientIP(r)
	log := s.log.With("client", ip.String())
	if !s.originAllowed(r) {
		s.metrics.refusals.add("origin", 1)
		log.Info("relay: origin refused", "origin", r.Header.Get("Origin"))
		http.Error(w, "origin: not allowed", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		s.metrics.refusals.add("shutting-down", 1)
		http.Error(w, "shutting-down: the relay is shutting down", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	hw := &hijackRecorder{ResponseWriter: w}
	ws, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		Subprotocols:    []string{Subprotocol},
		OriginPatterns:  s.cfg.OriginPatterns,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		s.metrics.refusals.add("handshake", 1)
		log.Debug("relay: handshake failed", "err", err)
		return
	}
	if ws.Subprotocol() != Subprotocol {
		s.metrics.refusals.add("subprotocol", 1)
		ws.Close(websocket.StatusPolicyViolation, "subprotocol: "+Subprotocol+" required")
		return
	}
	key := clientKey(ip)
	if rule := s.reserveConn(key); rule != "" {
		s.metrics.refusals.add(rule, 1)
		log.Info("relay: connection refused", "rule", rule)
		ws.Close(websocket.StatusTryAgainLater, rule+": too many connections")
		return
	}
	c := newConn(s, ws, hw.conn, key, log)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.metrics.conns.Add(1)
	s.metrics.connsTotal.Add(1)
	log.Debug("relay: connected")

	c.serve()

	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.releaseConn(key)
	s.metrics.conns.Add(-1)
	log.Debug("relay: disconnected")
}

// reserveConn takes a connection slot for key or names the cap that
// refuses it.
func (s *Server) reserveConn(key netip.Addr) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.conns) >= s.cfg.MaxConns:
		return "conn-cap"
	case s.perIP[key] >= s.cfg.MaxConnsPerIP:
		return "per-ip-conn-cap"
	}
	s.perIP[key]++
	return ""
}

func (s *Server) releaseConn(key netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perIP[key]--; s.perIP[key] <= 0 {
		delete(s.perIP, key)
	}
}

// Shutdown stops the relay gracefully: new connections and queries are
// refused, queries in flight run to the end of their window (their last
// frames are delivered), then every client is closed with status 1001
// (going away) and every socket is closed. If ctx ends first, what is left
// is closed at once and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	s.mu.Unlock()
	s.log.Info("relay: shutting down", "in_flight", s.inflight.Load())

	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 && ctx.Err() == nil {
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var closers sync.WaitGroup
	for _, c := range conns {
		closers.Add(1)
		go func() {
			defer closers.Done()
			c.goAway(ctx)
		}()
	}
	s.cache.stopAll()
	s.shared.close()

	done := make(chan struct{})
	go func() {
		closers.Wait()
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, c := range conns {
			// Closing the socket ends a close handshake that is waiting
			// for an unresponsive client, which CloseNow cannot.
			c.raw.Close()
		}
		s.cache.stopAll()
		<-done
		return ctx.Err()
	}
}

// hijackRecorder keeps the connection the WebSocket library hijacks, so
// that the relay can drop it at once (write stall, forced shutdown) even
// while the library waits in a close handshake.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = c
	return c, rw, err
}
