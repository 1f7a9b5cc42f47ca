package relay

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// The relay's use of its shared stores (store.go): claiming an exchange
// and charging the shared per-target buckets. Following another relay's
// exchange is in follow.go, publishing an owned one in publisher.go, the
// per-client leases in lease.go and the stores' health in dependency.go.

// Shared-store outcomes counted in querylens_relay_shared_total.
const (
	sharedHit       = "hit"       // a complete entry another relay (or this one) cached
	sharedCoalesced = "coalesced" // joined another relay's exchange in flight
	sharedOwner     = "owner"     // this relay queried upstream for everyone
	sharedLocal     = "local"     // the store was down: asked upstream without it
	sharedFallback  = "fallback"  // the store failed mid-wait or the owner gave up: asked upstream itself
)

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

// targetBuckets are the shared per-target buckets an owner charges for
// client before it queries upstream, in the order of targetRules. A
// bucket of a target or host that client asks more often than its share
// (as this relay's own shareLimiter sees it) keeps half its burst for the
// others.
func (s *Server) targetBuckets(target netip.AddrPort, client netip.Addr) []SharedBucket {
	if s.shared.limiter == nil {
		return nil
	}
	now := s.now()
	keep := func(greedy bool, r Rate) int {
		if greedy {
			return r.Burst / 2
		}
		return 0
	}
	return []SharedBucket{
		{Key: "t:" + target.String(), Rate: s.cfg.TargetRate, Keep: keep(s.targetRate.greedy(target, client, now), s.cfg.TargetRate)},
		{Key: "h:" + target.Addr().String(), Rate: s.cfg.TargetHostRate, Keep: keep(s.hostRate.greedy(target.Addr(), client, now), s.cfg.TargetHostRate)},
	}
}

var targetRules = []wire.Rule{wire.RulePerTarget, wire.RulePerTargetHost}

// sharedTargetRule charges the shared per-target buckets with Take; it
// names the rule that refused, or "". A store that is down or fails
// refuses nothing: the local buckets, charged first, hold the line.
func (s *Server) sharedTargetRule(target netip.AddrPort, client netip.Addr) wire.Rule {
	sh := s.shared
	if sh.limiter == nil || !sh.limitDep.usable() {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
	defer cancel()
	i, err := sh.limiter.Take(ctx, s.targetBuckets(target, client))
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
		if rule := s.sharedTargetRule(f.target, f.client); rule != "" {
			return outcome{code: wire.CodeRateLimited, rule: rule, msg: f.target.String()}, true
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
		charge = s.targetBuckets(f.target, f.client)
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
		return outcome{code: wire.CodeRateLimited, rule: targetRules[c.Refused], msg: f.target.String()}, true
	case c.Owner:
		sh.outcomes.add(sharedOwner, 1)
		f.sharedKey = key
		f.startPublisher()
		return outcome{}, false
	}
	return f.follow(key, c.Entry)
}
