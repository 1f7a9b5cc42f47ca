package relay

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Shared state: several relays behind one load balancer act as one when
// Config.SharedCache and Config.SharedLimiter point at one store (package
// relay/redisstore). The relay only sees the small interfaces below; the
// in-process cache and limits stay in front of them and take over whenever
// the store fails, so a store outage degrades sharing, never service.
//
// One upstream exchange across all relays:
//
//	relay A                       store                        relay B
//	Claim(k) ------------------>  k absent: create, owner
//	send UDP, reply arrives
//	Publish(k, replies) ------->  k: [start, reply]  <-------- Claim(k): not owner, entries so far
//	Publish(k, end, ttl) ------>  k: [..., end]; expires ttl   Wait(k, cursor): the rest, then end
//
// The owner publishes in batches: replies wait up to publishDelay for more
// replies or the end of the exchange, so that an exchange that ends soon
// after its reply (the usual case: the asker has what it needs and
// cancels) costs one write to the store, not two.
//
// A relay that claims a key is the only one that queries the game server
// for it until the entry expires; the others stream its replies as they
// come (coalesced) or read them whole (cached). Keys are hashes of the
// relay's cache key (protocol, target, Config.CacheKey of the datagram).

// Dependency is an external store the relay depends on.
type Dependency interface {
	// Name identifies the store in logs, /metrics and /healthz ("redis").
	Name() string
	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
}

// SharedStatus is the state of a shared cache entry.
type SharedStatus uint8

const (
	SharedPending   SharedStatus = iota // the owner's exchange is in flight
	SharedDone                          // replies arrived; the entry is a cache entry until it expires
	SharedTimeout                       // the owner got no reply within its window
	SharedLimited                       // the owner's upstream query was refused by a shared rate limit
	SharedAbandoned                     // the owner stopped before any reply (its clients left, or it shut down)
)

// SharedReply is one reply datagram held by the shared cache.
type SharedReply struct {
	Data []byte
	RTT  uint32 // µs, as measured by the owner
}

// SharedEntry is what a non-owner sees of a shared cache entry.
type SharedEntry struct {
	Replies []SharedReply // new since the previous cursor
	Status  SharedStatus
	TTL     time.Duration // with SharedDone: how long the entry stays cached
	Cursor  string        // where Wait continues
}

// SharedCache shares upstream exchanges and their replies between relays.
// Every method must be safe for concurrent use and honour ctx's deadline.
type SharedCache interface {
	Dependency
	// Claim makes the caller the owner of key for at most hold when no
	// relay holds it and every bucket in charge has a token (they are
	// taken, atomically with the claim). Owner: query upstream and
	// Publish the replies, then the end. When another relay holds key,
	// Claim returns its entry as it is; when a bucket is empty, its index.
	Claim(ctx context.Context, key string, hold time.Duration, charge []SharedBucket) (SharedClaim, error)
	// Publish appends the owner's replies in order and, with p.End, ends
	// the entry: a SharedDone entry stays cached for p.TTL; others go soon
	// after the waiters saw them. An entry that is gone (it outlived its
	// hold) is left alone.
	Publish(ctx context.Context, key string, p SharedPublish) error
	// Wait returns what was added after cursor, waiting until something is
	// or ctx ends (then it returns ctx's error).
	Wait(ctx context.Context, key, cursor string) (SharedEntry, error)
}

// SharedPublish is what an owner adds to its entry.
type SharedPublish struct {
	Replies []SharedReply
	End     bool
	Status  SharedStatus  // with End
	TTL     time.Duration // with End and SharedDone
}

// SharedClaim is the result of SharedCache.Claim.
type SharedClaim struct {
	Owner   bool
	Refused int         // index of the empty bucket that refused the claim, or -1
	Entry   SharedEntry // another relay's entry (not Owner, Refused -1)
}

// SharedBucket names one shared token bucket and its rate.
type SharedBucket struct {
	Key  string
	Rate Rate
}

// SharedLimiter keeps token buckets shared by the relays.
type SharedLimiter interface {
	Dependency
	// Take takes one token from every bucket, atomically all or none. It
	// returns the index of the first bucket that had none, or -1.
	Take(ctx context.Context, buckets []SharedBucket) (refused int, err error)
	// Lease takes up to n tokens (as many as the bucket has, up to n) and
	// returns how many: 0 when it had none.
	Lease(ctx context.Context, b SharedBucket, n int) (int, error)
}

// Defaults for the shared store.
const (
	DefaultSharedTimeout = 250 * time.Millisecond
	sharedProbeEvery     = time.Second
)

// Shared-store outcomes counted in querylens_relay_shared_total.
const (
	sharedHit       = "hit"       // a complete entry another relay (or this one) cached
	sharedCoalesced = "coalesced" // joined another relay's exchange in flight
	sharedOwner     = "owner"     // this relay queried upstream for everyone
	sharedLocal     = "local"     // the store was down: asked upstream without it
	sharedFallback  = "fallback"  // the store failed mid-wait or the owner gave up: asked upstream itself
)

// dependency tracks one store's health. It starts up; an error marks it
// down, and while it is down the relay works without it and a prober pings
// it every sharedProbeEvery until it answers or the relay shuts down.
type dependency struct {
	d       Dependency
	timeout time.Duration
	log     func(msg string, args ...any)
	stop    <-chan struct{} // closed when the relay shuts down

	up     atomic.Bool
	errors atomic.Uint64

	mu      sync.Mutex
	since   time.Time
	lastErr string
	probing bool
	wg      sync.WaitGroup
}

func newDependency(d Dependency, timeout time.Duration, log func(string, ...any), stop <-chan struct{}) *dependency {
	x := &dependency{d: d, timeout: timeout, log: log, stop: stop}
	x.up.Store(true)
	return x
}

// usable reports whether the store may be used now.
func (x *dependency) usable() bool { return x.up.Load() }

// probe pings the store and records the result; it reports whether the
// store answered.
func (x *dependency) probe() bool {
	ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
	defer cancel()
	if err := x.d.Ping(ctx); err != nil {
		x.fail(err) // from the prober: it is already marked, and probing
		return false
	}
	x.ok()
	return true
}

func (x *dependency) fail(err error) {
	x.errors.Add(1)
	x.mu.Lock()
	x.lastErr = err.Error()
	was := x.up.Swap(false)
	if was {
		x.since = time.Now()
	}
	start := !x.probing
	select {
	case <-x.stop:
		start = false
	default:
	}
	if start {
		x.probing = true
		x.wg.Add(1)
	}
	x.mu.Unlock()
	if was {
		x.log("relay: shared store down, serving with the local cache and limits", "dependency", x.d.Name(), "err", err.Error())
	}
	if start {
		go x.prober()
	}
}

// prober pings the store until it answers or the relay shuts down.
func (x *dependency) prober() {
	defer x.wg.Done()
	t := time.NewTicker(sharedProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-x.stop:
			x.mu.Lock()
			x.probing = false
			x.mu.Unlock()
			return
		case <-t.C:
		}
		if x.probe() {
			x.mu.Lock()
			x.probing = false
			x.mu.Unlock()
			return
		}
	}
}

func (x *dependency) ok() {
	x.mu.Lock()
	was := x.up.Swap(true)
	since := x.since
	x.mu.Unlock()
	if !was {
		x.log("relay: shared store back", "dependency", x.d.Name(), "down_for", time.Since(since).Round(time.Millisecond).String())
	}
}

// status is one line for /healthz: "redis: up" or "redis: down since
// 2026-01-02T15:04:05Z: dial tcp ...: connection refused".
func (x *dependency) status() (string, bool) {
	if x.up.Load() {
		return x.d.Name() + ": up", true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.d.Name() + ": down since " + x.since.UTC().Format(time.RFC3339) + ": " + x.lastErr, false
}

// shared is the relay's view of its stores.
type shared struct {
	cache     SharedCache
	limiter   SharedLimiter
	deps      []*dependency // distinct stores, each tracked once
	cacheDep  *dependency
	limitDep  *dependency
	timeout   time.Duration
	outcomes  counterSet
	abandoned atomic.Uint64
	stop      chan struct{}
	stopOnce  sync.Once

	leaseMu sync.Mutex
	leases  map[netip.Addr]*lease
}

// close stops the probers (Shutdown).
func (sh *shared) close() {
	if sh == nil {
		return
	}
	sh.stopOnce.Do(func() { close(sh.stop) })
	for _, x := range sh.deps {
		x.wg.Wait()
	}
}

func newShared(cfg *Config, log func(string, ...any)) *shared {
	if cfg.SharedCache == nil && cfg.SharedLimiter == nil {
		return nil
	}
	sh := &shared{cache: cfg.SharedCache, limiter: cfg.SharedLimiter, timeout: cfg.SharedTimeout, stop: make(chan struct{}),
		leases: make(map[netip.Addr]*lease)}
	byName := map[string]*dependency{}
	track := func(d Dependency) *dependency {
		if x := byName[d.Name()]; x != nil {
			return x
		}
		x := newDependency(d, cfg.SharedTimeout, log, sh.stop)
		byName[d.Name()] = x
		sh.deps = append(sh.deps, x)
		return x
	}
	if sh.cache != nil {
		sh.cacheDep = track(sh.cache)
	}
	if sh.limiter != nil {
		sh.limitDep = track(sh.limiter)
	}
	return sh
}

// sharedKey turns a cache key (up to a few KiB, binary) into a short store
// key.
func sharedKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return base64.RawURLEncoding.EncodeToString(h[:18])
}

// Leases of per-client tokens. Asking the store for every query of every
// client would add a round trip to each, cache hits included; instead a
// relay takes a few tokens at a time (an eighth of the burst, at most
// maxLease) and spends them locally for up to leaseTTL. Tokens a relay
// leased and did not spend are lost, never returned: the shared limit can
// only be stricter than one bucket, never looser.
const (
	maxLease  = 32
	leaseTTL  = time.Second
	maxLeased = 1 << 16 // clients with a lease at once; beyond, expired ones are dropped
)

type lease struct {
	n     int
	until time.Time
}

// sharedClientRate is the per-client limiter with a shared store: the
// local bucket first (it alone decides while the store is down), then the
// shared one, through a lease.
type sharedClientRate struct {
	local rateLimiter[netip.Addr]
	s     *Server
}

func (r sharedClientRate) allow(k netip.Addr, now time.Duration) bool {
	return r.local.allow(k, now) && r.s.allowClientShared(k)
}

// allowClientShared charges the client's shared bucket after its local
// one allowed a query.
func (s *Server) allowClientShared(key netip.Addr) bool {
	sh := s.shared
	if sh.limiter == nil || !sh.limitDep.usable() {
		return true
	}
	now := time.Now()
	sh.leaseMu.Lock()
	if l := sh.leases[key]; l != nil && l.n > 0 && now.Before(l.until) {
		l.n--
		sh.leaseMu.Unlock()
		return true
	}
	sh.leaseMu.Unlock()
	want := min(max(s.cfg.IPRate.Burst/8, 1), maxLease)
	ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
	got, err := sh.limiter.Lease(ctx, SharedBucket{Key: "ip:" + key.String(), Rate: s.cfg.IPRate}, want)
	cancel()
	if err != nil {
		sh.limitDep.fail(err)
		return true // the local bucket, charged first, holds the line
	}
	if got == 0 {
		return false
	}
	sh.leaseMu.Lock()
	if len(sh.leases) >= maxLeased {
		for k, l := range sh.leases {
			if !now.Before(l.until) || l.n == 0 {
				delete(sh.leases, k)
			}
		}
		if len(sh.leases) >= maxLeased {
			clear(sh.leases)
		}
	}
	sh.leases[key] = &lease{n: got - 1, until: now.Add(leaseTTL)}
	sh.leaseMu.Unlock()
	return true
}

// targetBuckets are the shared per-target buckets an owner charges before
// it queries upstream, in the order of targetRules.
func (s *Server) targetBuckets(target netip.AddrPort) []SharedBucket {
	if s.shared.limiter == nil {
		return nil
	}
	return []SharedBucket{
		{Key: "t:" + target.String(), Rate: s.cfg.TargetRate},
		{Key: "h:" + target.Addr().String(), Rate: s.cfg.TargetHostRate},
	}
}

var targetRules = []string{"per-target", "per-target-host"}

// sharedTargetRule charges the shared per-target buckets with Take; it
// names the rule that refused, or "". A store that is down or fails
// refuses nothing: the local buckets, charged first, hold the line.
func (s *Server) sharedTargetRule(target netip.AddrPort) string {
	sh := s.shared
	if sh.limiter == nil || !sh.limitDep.usable() {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
	defer cancel()
	i, err := sh.limiter.Take(ctx, s.targetBuckets(target))
	if err != nil {
		sh.limitDep.fail(err)
		return ""
	}
	if i >= 0 && i < len(targetRules) {
		return targetRules[i]
	}
	return ""
}

// viaShared runs the shared-cache part of an exchange. handled is false
// when the relay must query upstream itself: it owns the key (f.sharedKey
// is then set and the replies are published), or the store is down.
func (f *fetch) viaShared() (out outcome, handled bool) {
	s := f.s
	sh := s.shared
	if sh == nil {
		return outcome{}, false
	}
	if sh.cache == nil {
		// Shared limits without a shared cache: charge the target's
		// buckets on their own.
		if rule := s.sharedTargetRule(f.target); rule != "" {
			return outcome{code: CodeRateLimited, rule: rule, msg: f.target.String()}, true
		}
		return outcome{}, false
	}
	if !sh.cacheDep.usable() {
		sh.outcomes.add(sharedLocal, 1)
		return outcome{}, false
	}
	key := sharedKey(f.key)
	var charge []SharedBucket
	if sh.limitDep == nil || sh.limitDep.usable() {
		charge = s.targetBuckets(f.target)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
	c, err := sh.cache.Claim(ctx, key, s.cfg.ReplyWindow+2*sh.timeout, charge)
	cancel()
	switch {
	case err != nil:
		sh.cacheDep.fail(err)
		sh.outcomes.add(sharedLocal, 1)
		return outcome{}, false
	case c.Refused >= 0 && c.Refused < len(charge):
		return outcome{code: CodeRateLimited, rule: targetRules[c.Refused], msg: f.target.String()}, true
	case c.Owner:
		sh.outcomes.add(sharedOwner, 1)
		f.sharedKey = key
		f.startPublisher()
		return outcome{}, false
	}
	return f.follow(key, c.Entry)
}

// follow streams another relay's exchange (or its cached replies) into f.
func (f *fetch) follow(key string, e SharedEntry) (outcome, bool) {
	s := f.s
	sh := s.shared
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ReplyWindow)
	defer cancel()
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return outcome{reason: EndCancelled}, true
	}
	f.stopFollow = cancel
	if e.Status == SharedPending {
		f.sharedFlags = FlagCoalesced
	} else {
		f.sharedFlags = FlagCached
	}
	f.mu.Unlock()
	if e.Status == SharedPending {
		sh.outcomes.add(sharedCoalesced, 1)
	} else {
		sh.outcomes.add(sharedHit, 1)
	}
	got := 0
	for {
		for _, r := range e.Replies {
			got++
			if f.add(r.Data, time.Duration(r.RTT)*time.Microsecond) {
				return outcome{reason: EndByteCap}, true
			}
		}
		switch e.Status {
		case SharedDone:
			if e.TTL > 0 && e.TTL < f.ttl {
				f.ttl = e.TTL
			}
			return outcome{reason: EndWindow}, true
		case SharedTimeout:
			return f.timeoutOutcome(), true
		case SharedLimited:
			return outcome{code: CodeRateLimited, rule: "per-target", msg: f.target.String()}, true
		case SharedAbandoned:
			sh.abandoned.Add(1)
			if got == 0 && ctx.Err() == nil {
				sh.outcomes.add(sharedFallback, 1)
				return outcome{}, false
			}
			return outcome{reason: EndWindow}, true
		}
		// Wait in slices so that a stopped exchange (its askers left, or
		// shutdown) is noticed even if the store cannot interrupt a
		// blocked read.
		wctx, wcancel := context.WithTimeout(ctx, 250*time.Millisecond)
		next, err := sh.cache.Wait(wctx, key, e.Cursor)
		wcancel()
		switch {
		case err == nil:
			e = next
			continue
		case ctx.Err() != nil && (wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)):
			f.mu.Lock()
			stopped, shutdown := f.stopped, f.shutdown
			f.mu.Unlock()
			switch {
			case shutdown:
				return outcome{reason: EndCancelled, code: CodeBusy, rule: "shutting-down", msg: "the relay is shutting down"}, true
			case stopped || got > 0:
				return outcome{reason: EndCancelled}, true
			}
			return f.timeoutOutcome(), true
		case wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			e = SharedEntry{Cursor: e.Cursor}
			continue
		}
		// The store failed while this relay waited for another's replies:
		// ask upstream itself if nothing came yet and the window is open.
		sh.cacheDep.fail(err)
		if got == 0 {
			sh.outcomes.add(sharedFallback, 1)
			return outcome{}, false
		}
		return outcome{reason: EndWindow}, true
	}
}

func (f *fetch) timeoutOutcome() outcome {
	return outcome{reason: EndWindow, code: CodeTimeout, rule: "timeout",
		msg: "no reply within " + strconv.FormatInt(f.s.cfg.ReplyWindow.Milliseconds(), 10) + " ms"}
}

// publishDelay is how long the owner holds a reply for more replies or
// the end of its exchange before writing it to the store.
const publishDelay = 2 * time.Millisecond

// publisher writes one owned exchange to the store, in order, batching
// what arrives within publishDelay. Its goroutine ends with the end.
type publisher struct {
	f    *fetch
	wake chan struct{}

	mu      sync.Mutex
	pending []SharedReply
	end     bool
	status  SharedStatus
	ttl     time.Duration
}

// startPublisher starts the publisher of an exchange f owns.
func (f *fetch) startPublisher() {
	p := &publisher{f: f, wake: make(chan struct{}, 1)}
	f.pub = p
	f.s.wg.Add(1)
	go p.run()
}

func (p *publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *publisher) run() {
	s := p.f.s
	defer s.wg.Done()
	sh := s.shared
	for {
		<-p.wake
		p.mu.Lock()
		end := p.end
		p.mu.Unlock()
		if !end {
			t := time.NewTimer(publishDelay)
			select {
			case <-t.C:
			case <-p.wake: // the end, or more replies: either way, go
				p.mu.Lock()
				end = p.end
				p.mu.Unlock()
				if !end {
					<-t.C
				}
			}
			t.Stop()
		}
		p.mu.Lock()
		batch := SharedPublish{Replies: p.pending, End: p.end, Status: p.status, TTL: p.ttl}
		p.pending = nil
		p.mu.Unlock()
		if len(batch.Replies) > 0 || batch.End {
			if sh.cacheDep.usable() {
				ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
				if err := sh.cache.Publish(ctx, p.f.sharedKey, batch); err != nil {
					sh.cacheDep.fail(err)
				}
				cancel()
			}
		}
		if batch.End {
			return
		}
	}
}

// publish hands one reply the owner received to the other relays.
func (f *fetch) publish(b []byte, rtt time.Duration) {
	p := f.pub
	p.mu.Lock()
	p.pending = append(p.pending, SharedReply{Data: append([]byte(nil), b...), RTT: uint32(min(rtt/time.Microsecond, 1<<32-1))})
	p.mu.Unlock()
	p.poke()
}

// sharedFinish ends the owner's shared entry.
func (f *fetch) sharedFinish(status SharedStatus) {
	p := f.pub
	ttl := f.ttl
	if status != SharedDone || ttl <= 0 {
		ttl = 0
	}
	p.mu.Lock()
	p.end, p.status, p.ttl = true, status, ttl
	p.mu.Unlock()
	p.poke()
}

// ownerStatus maps how the owner's exchange ended to the shared status.
func ownerStatus(out outcome, got bool) SharedStatus {
	switch {
	case got:
		return SharedDone
	case out.code == CodeTimeout:
		return SharedTimeout
	}
	return SharedAbandoned
}

// HealthReporter is a dependency outside the relay (the history database)
// whose state the relay's /healthz, /readyz and /metrics report along with
// its shared stores.
type HealthReporter interface {
	Name() string
	// Healthy reports whether it works, and a short detail ("up", or why
	// not and since when).
	Healthy() (ok bool, detail string)
}

// ReportHealth adds h to what Health, /healthz, /readyz and /metrics
// report. Call it before serving.
func (s *Server) ReportHealth(h HealthReporter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reporters = append(s.reporters, h)
}

func (s *Server) healthReporters() []HealthReporter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reporters
}

// Health lists the shared stores' and reporters' states, one line each,
// and whether all are up. Without any it is empty and true.
func (s *Server) Health() (lines []string, ok bool) {
	ok = true
	if s.shared != nil {
		for _, x := range s.shared.deps {
			line, up := x.status()
			lines = append(lines, line)
			ok = ok && up
		}
	}
	for _, h := range s.healthReporters() {
		up, detail := h.Healthy()
		lines = append(lines, h.Name()+": "+detail)
		ok = ok && up
	}
	return lines, ok
}

// HealthHandler serves /healthz: 200 while the relay serves, listing each
// shared store ("redis: up", or "redis: down since ...: error"). A store
// that is down does not make the relay unhealthy: it serves with its local
// cache and limits.
func (s *Server) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeHealth(w, false)
	})
}

// ReadyHandler serves /readyz: like /healthz, but it pings every shared
// store first (bounded by SharedTimeout), so that it is current even on an
// instance whose traffic has not needed the store lately, and it answers
// 503 while the relay shuts down. The first line is "ready", "degraded" (a store is down; the relay
// still serves) or "shutting-down".
func (s *Server) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeHealth(w, true)
	})
}

func (s *Server) writeHealth(w http.ResponseWriter, probe bool) {
	if probe && s.shared != nil {
		for _, x := range s.shared.deps {
			x.probe()
		}
	}
	lines, ok := s.Health()
	head, code := "ok", http.StatusOK
	switch {
	case s.isClosing():
		head, code = "shutting-down", http.StatusServiceUnavailable
	case !ok:
		head = "degraded"
	case probe:
		head = "ready"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.Header().Set("X-Querylens-Degraded", strings.Join(s.downNames(), ","))
	}
	w.WriteHeader(code)
	w.Write([]byte(head + "\n" + strings.Join(append(lines, ""), "\n")))
}

func (s *Server) downNames() []string {
	var names []string
	if s.shared != nil {
		for _, x := range s.shared.deps {
			if !x.up.Load() {
				names = append(names, x.d.Name())
			}
		}
	}
	for _, h := range s.healthReporters() {
		if up, _ := h.Healthy(); !up {
			names = append(names, h.Name())
		}
	}
	return names
}

// appendDependencyMetrics writes the shared stores' and reporters'
// metrics.
func (s *Server) appendDependencyMetrics(b []byte) []byte {
	sh := s.shared
	reporters := s.healthReporters()
	if sh == nil && len(reporters) == 0 {
		return b
	}
	const p = "querylens_relay_"
	b = append(b, "# HELP "+p+"dependency_up Whether a shared store or the history database answers (1) or the instance works without it (0).\n# TYPE "+p+"dependency_up gauge\n"...)
	up := func(name string, ok bool) {
		v := "0"
		if ok {
			v = "1"
		}
		b = append(b, p+`dependency_up{name="`+name+`"} `+v+"\n"...)
	}
	for _, h := range reporters {
		ok, _ := h.Healthy()
		up(h.Name(), ok)
	}
	if sh == nil {
		return b
	}
	for _, x := range sh.deps {
		up(x.d.Name(), x.up.Load())
	}
	b = append(b, "# HELP "+p+"dependency_errors_total Failed or timed-out shared store operations.\n# TYPE "+p+"dependency_errors_total counter\n"...)
	for _, x := range sh.deps {
		b = append(b, p+`dependency_errors_total{name="`+x.d.Name()+`"} `+strconv.FormatUint(x.errors.Load(), 10)+"\n"...)
	}
	b = append(b, "# HELP "+p+"shared_total Exchanges by how the shared cache served them (hit, coalesced, owner, local, fallback).\n# TYPE "+p+"shared_total counter\n"...)
	labels, values := sh.outcomes.snapshot()
	for i, l := range labels {
		b = append(b, p+`shared_total{result="`+l+`"} `+strconv.FormatUint(values[i], 10)+"\n"...)
	}
	return b
}
