package relay

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// Server is the relay. It implements http.Handler for the WebSocket
// endpoint and never listens on its own.
type Server struct {
	cfg      Config
	log      *slog.Logger
	policy   *Policy
	resolver resolver
	metrics  metrics
	cache    replyCache
	shared   *sharedState // nil without a shared store
	flights  flights
	upstream *upstreamSlots
	sockets  *socketPool
	silence  *silence
	streams  streamSlots // TCP connections in progress (stream.go)
	epoch    time.Time

	ipRate      rateLimiter[netip.Addr]
	localRate   rateLimiter[netip.Addr] // IPRate of loopback clients (Config.Loopback)
	visitorRate rateLimiter[netip.Addr]
	targetRate  *shareLimiter[netip.AddrPort] // shared between the clients asking
	hostRate    *shareLimiter[netip.Addr]

	frameBufs sync.Pool // *[]byte of the read limit, for client frames
	udpBufs   sync.Pool // *[]byte of MaxDatagram+1, for upstream reads

	inflight atomic.Int64 // askers not yet finished
	queued   atomic.Int64 // REPLY bytes queued on all connections (MaxQueuedBytes)
	wg       sync.WaitGroup

	closing atomic.Bool // set under mu, read anywhere

	mu    sync.Mutex
	conns map[*conn]struct{}
	perIP map[netip.Addr]int
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
		policy:      NewPolicy(cfg.AllowTargets, cfg.AllowPorts).allowAddrs(cfg.AllowAddrs),
		resolver:    resolver{r: r, timeout: cfg.ResolveTimeout},
		epoch:       cfg.Clock(),
		ipRate:      newLimiter[netip.Addr](cfg.IPRate, 1<<16),
		localRate:   newLimiter[netip.Addr](cfg.clientLimits(true).IPRate, 1<<16),
		visitorRate: newLimiter[netip.Addr](cfg.VisitorRate, 1<<16),
		targetRate:  newShareLimiter[netip.AddrPort](cfg.TargetRate, 1<<16),
		hostRate:    newShareLimiter[netip.Addr](cfg.TargetHostRate, 1<<16),
		conns:       make(map[*conn]struct{}),
		perIP:       make(map[netip.Addr]int),
	}
	s.resolver.wg = &s.wg
	s.upstream = newUpstreamSlots(s, cfg.MaxUpstream)
	s.sockets = newSocketPool(4 * cfg.largestReplyCap())
	s.silence = newSilence(cfg.SilentCooldown, 1<<16)
	s.cache = newMemCache(cfg.MaxCacheEntries, cfg.MaxCacheBytes, cfg.Clock)
	s.shared = newShared(&cfg, logger.Warn)
	s.metrics.shared = s.appendDependencyMetrics
	if s.shared != nil && s.shared.Limiter != nil {
		s.ipRate = sharedClientRate{local: s.ipRate, leases: s.shared.NewLeases(cfg.IPRate, cfg.Clock)}
	}
	s.flights.m = make(map[string]*fetch)
	s.metrics.cacheEntries = s.cache.stats
	readLimit := s.readLimit()
	s.frameBufs.New = func() any { b := make([]byte, readLimit+1); return &b }
	s.udpBufs.New = func() any { b := make([]byte, cfg.MaxDatagram+1); return &b }
	return s
}

// readLimit is the largest client frame: a QUERY with both names at their
// longest and a datagram of MaxDatagram bytes.
func (s *Server) readLimit() int { return wire.QueryHeaderMax + s.cfg.MaxDatagram }

// now is the time the rate limiters, shares and cooldowns run on:
// Config.Clock since New (monotonic with time.Now).
func (s *Server) now() time.Duration { return s.cfg.Clock().Sub(s.epoch) }

// refuse finishes a with an ERROR naming rule.
func (s *Server) refuse(a *asker, code wire.Code, rule wire.Rule, detail string) {
	s.count(code, rule)
	a.sink.fail(a, code, string(rule)+": "+detail)
}

func (s *Server) count(code wire.Code, rule wire.Rule) {
	if code == wire.CodeTimeout {
		s.metrics.timeouts.add(string(rule), 1)
		return
	}
	s.metrics.refusals.add(string(rule), 1)
}

func (s *Server) refusal(code wire.Code, rule wire.Rule, detail string) *wire.RefusedError {
	s.count(code, rule)
	return &wire.RefusedError{Code: code, Message: string(rule) + ": " + detail}
}

// CheckTarget reports whether the relay's policy lets it query addr: nil,
// or the *PolicyError naming the rule that refuses it. For callers that
// act on addresses without asking them (the sampler tracking a master's
// list), so that they follow the relay's one policy.
func (s *Server) CheckTarget(addr netip.AddrPort) error { return s.policy.Check(addr) }

func (s *Server) isClosing() bool { return s.closing.Load() }

// clientKey is the address rate limits and connection caps are kept per:
// X-Forwarded-For from TrustedProxies; IPv6 per /64) may have another page
// that makes the server query a game server itself through Exchange (a
// status page, a badge), and takes one token of VisitorRate. Exchange limits
// each target; this limits each visitor, so that shared links and scripts
// cannot make the relay query many servers.
// A visitor whose trusted proxy sent an X-Forwarded-For hop that does not
// parse is refused (rule forwarded-for): its address is not known.
func (s *Server) AllowVisitor(r *http.Request) bool {
	ip, err := s.clientIP(r)
	if err != nil {
		s.count(wire.CodeDenied, wire.RuleForwardedFor)
		return false
	}
	ok := s.visitorRate.allow(clientKey(ip), s.now())
	if !ok {
		s.count(wire.CodeRateLimited, wire.RuleVisitorRate)
	}
	return ok
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
	ip, err := s.clientIP(r)
	if err != nil {
		s.metrics.refusals.add(string(wire.RuleForwardedFor), 1)
		s.log.Info("relay: client address unknown", "err", err)
		http.Error(w, string(wire.RuleForwardedFor)+": "+err.Error(), http.StatusBadRequest)
		return
	}
	log := s.log.With("client", ip.String())
	if !s.originAllowed(r) {
		s.metrics.refusals.add(string(wire.RuleOrigin), 1)
		log.Info("relay: origin refused", "origin", r.Header.Get("Origin"))
		http.Error(w, string(wire.RuleOrigin)+": not allowed", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		s.metrics.refusals.add(string(wire.RuleShuttingDown), 1)
		http.Error(w, string(wire.RuleShuttingDown)+": the relay is shutting down", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	hw := &hijackRecorder{ResponseWriter: w}
	ws, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		Subprotocols:    []string{wire.SubprotocolStream, wire.SubprotocolBatch, wire.Subprotocol},
		OriginPatterns:  s.cfg.OriginPatterns,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		s.metrics.refusals.add(string(wire.RuleHandshake), 1)
		log.Debug("relay: handshake failed", "err", err)
		return
	}
	if sp := ws.Subprotocol(); sp != wire.Subprotocol && sp != wire.SubprotocolBatch && sp != wire.SubprotocolStream {
		s.metrics.refusals.add(string(wire.RuleSubprotocol), 1)
		ws.Close(websocket.StatusPolicyViolation, string(wire.RuleSubprotocol)+": "+wire.Subprotocol+" required")
		return
	}
	key := clientKey(ip)
	if rule := s.reserveConn(key); rule != "" {
		s.metrics.refusals.add(string(rule), 1)
		log.Info("relay: connection refused", "rule", rule)
		ws.Close(websocket.StatusTryAgainLater, string(rule)+": too many connections")
		return
	}
	s.upstream.connected(key)
	c := newConn(s, ws, hw.conn, key, ip.IsLoopback(), log)
	c.batches = ws.Subprotocol() == wire.SubprotocolBatch || ws.Subprotocol() == wire.SubprotocolStream
	c.streams = ws.Subprotocol() == wire.SubprotocolStream
	c.cork = hw.cork
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
func (s *Server) reserveConn(key netip.Addr) wire.Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.conns) >= s.cfg.MaxConns:
		return wire.RuleConnCap
	case s.perIP[key] >= s.cfg.MaxConnsPerIP:
		return wire.RulePerIPConnCap
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
	s.flights.stopAll()
	s.shared.close()

	done := make(chan struct{})
	go func() {
		closers.Wait()
		s.wg.Wait()
		close(done)
	}()
	defer s.sockets.close()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, c := range conns {
			// Closing the socket ends a close handshake that is waiting
			// for an unresponsive client, which CloseNow cannot.
			c.raw.Close()
		}
		s.flights.stopAll()
		<-done
		return ctx.Err()
	}
}

// hijackRecorder keeps the connection the WebSocket library hijacks, so
// that the relay can drop it at once (write stall, forced shutdown) even
// while the library waits in a close handshake, and puts a corkConn under
// the library's writes.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
	cork *corkConn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = c
	if err == nil {
		// The server flushed the handshake response and emptied rw.Writer
		// before handing it over, so it can change its destination.
		h.cork = &corkConn{Conn: c}
		rw.Writer.Reset(h.cork)
	}
	return c, rw, err
}
