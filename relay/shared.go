package relay

import (
	"context"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// The relay's use of its shared stores. Package shared coordinates them
// (claiming an exchange, following another relay's, publishing an owned
// one, leasing client tokens, each store's health); this file maps its
// results onto the relay's exchanges, outcomes and metrics.

// Shared-store outcomes counted in querylens_relay_shared_total.
const (
	sharedHit       = "hit"       // a complete entry another relay (or this one) cached
	sharedCoalesced = "coalesced" // joined another relay's exchange in flight
	sharedOwner     = "owner"     // this relay queried upstream for everyone
	sharedLocal     = "local"     // the store was down: asked upstream without it
	sharedFallback  = "fallback"  // the store failed mid-wait or the owner gave up: asked upstream itself
)

// sharedState is the relay's view of its stores and its counts of how
// they served.
type sharedState struct {
	*shared.Stores
	outcomes  counterSet
	abandoned atomic.Uint64
}

var sharedLabels = [...]string{
	shared.EventHit:       sharedHit,
	shared.EventCoalesced: sharedCoalesced,
	shared.EventOwner:     sharedOwner,
	shared.EventLocal:     sharedLocal,
	shared.EventFallback:  sharedFallback,
}

func (sh *sharedState) count(e shared.Event) {
	if e == shared.EventAbandoned {
		sh.abandoned.Add(1)
		return
	}
	sh.outcomes.add(sharedLabels[e], 1)
}

// close stops the probers (Shutdown).
func (sh *sharedState) close() {
	if sh == nil {
		return
	}
	sh.Close()
}

func newShared(cfg *Config, log func(string, ...any)) *sharedState {
	sh := &sharedState{}
	sh.Stores = shared.NewStores(cfg.SharedCache, cfg.SharedLimiter, cfg.SharedTimeout, log, sh.count)
	if sh.Stores == nil {
		return nil
	}
	return sh
}

// targetBuckets are the shared per-target buckets an owner charges for
// client before it queries upstream, in the order of targetRules. A
// bucket of a target or host that client asks more often than its share
// (as this relay's own shareLimiter sees it) keeps half its burst for the
// others.
func (s *Server) targetBuckets(target netip.AddrPort, client netip.Addr) []shared.Bucket {
	if s.shared.Limiter == nil {
		return nil
	}
	now := s.now()
	return shared.TargetBuckets(target, s.cfg.TargetRate, s.cfg.TargetHostRate,
		s.targetRate.greedy(target, client, now), s.hostRate.greedy(target.Addr(), client, now))
}

var targetRules = []wire.Rule{wire.RulePerTarget, wire.RulePerTargetHost}

// sharedTargetRule charges the shared per-target buckets with Take; it
// names the rule that refused, or "". A store that is down or fails
// refuses nothing: the local buckets, charged first, hold the line.
func (s *Server) sharedTargetRule(target netip.AddrPort, client netip.Addr) wire.Rule {
	i := s.shared.Take(func() []shared.Bucket { return s.targetBuckets(target, client) })
	if i >= 0 && i < len(targetRules) {
		return targetRules[i]
	}
	return ""
}

// viaShared runs the shared-cache part of an exchange. handled is false
// when the relay must query upstream itself: it owns the key (f.pub is
// then set and the replies are published), or the store is down.
func (f *fetch) viaShared() (out outcome, handled bool) {
	s := f.s
	sh := s.shared
	if sh == nil {
		return outcome{}, false
	}
	if sh.Cache == nil {
		// Shared limits without a shared cache: charge the target's
		// buckets on their own.
		if rule := s.sharedTargetRule(f.target, f.client); rule != "" {
			return outcome{code: wire.CodeRateLimited, rule: rule, msg: f.target.String()}, true
		}
		return outcome{}, false
	}
	c := sh.Claim(f.key, f.window()+2*sh.Timeout, func() []shared.Bucket { return s.targetBuckets(f.target, f.client) })
	switch c.Kind {
	case shared.ClaimLocal:
		return outcome{}, false
	case shared.ClaimRefused:
		return outcome{code: wire.CodeRateLimited, rule: targetRules[c.Refused], msg: f.target.String()}, true
	case shared.ClaimOwner:
		f.pub = sh.NewPublisher(c.Key, &s.wg)
		return outcome{}, false
	}
	return f.follow(c.Key, c.Entry)
}

// follow streams another relay's exchange (or its cached replies) into f.
func (f *fetch) follow(key string, e shared.Entry) (outcome, bool) {
	s := f.s
	ctx, cancel := context.WithTimeout(context.Background(), f.window())
	defer cancel()
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return outcome{reason: wire.EndCancelled}, true
	}
	f.stopFollow = cancel
	if e.Status == shared.Pending {
		f.sharedFlags = wire.FlagCoalesced
	} else {
		f.sharedFlags = wire.FlagCached
	}
	f.mu.Unlock()
	r := s.shared.Follow(ctx, key, e, shared.FollowHooks{
		OnReply: func(r shared.Reply) bool {
			if f.stream != nil {
				f.addChunk(r.Data, time.Duration(r.RTT)*time.Microsecond)
				return false
			}
			return f.add(r.Data, time.Duration(r.RTT)*time.Microsecond)
		},
		Stopped: func() (bool, bool) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.stopped, f.shutdown
		},
	})
	return f.followOutcome(r)
}

// followOutcome maps how following ended onto the exchange's outcome;
// handled is false when the relay must query upstream itself.
func (f *fetch) followOutcome(r shared.FollowResult) (out outcome, handled bool) {
	switch r.End {
	case shared.FollowFull:
		return outcome{reason: wire.EndByteCap}, true
	case shared.FollowDone:
		if r.TTL > 0 && r.TTL < f.ttl {
			f.ttl = r.TTL
		}
		if f.stream != nil {
			return outcome{reason: wire.EndDone}, true // the owner shares only a whole stream
		}
		return outcome{reason: wire.EndWindow}, true
	case shared.FollowTimeout, shared.FollowExpired:
		if f.stream != nil {
			return outcome{reason: wire.EndTimeout}, true
		}
		return f.timeoutOutcome(), true
	case shared.FollowLimited:
		return outcome{code: wire.CodeRateLimited, rule: wire.RulePerTarget, msg: f.target.String()}, true
	case shared.FollowShutdown:
		return outcome{reason: wire.EndCancelled, code: wire.CodeBusy, rule: wire.RuleShuttingDown, msg: "the relay is shutting down"}, true
	case shared.FollowCancelled:
		return outcome{reason: wire.EndCancelled}, true
	case shared.FollowAbandonedFallback, shared.FollowStoreFallback:
		return outcome{}, false
	}
	if f.stream != nil {
		return outcome{reason: wire.EndClosed}, true // FollowAbandoned, FollowStoreFailed
	}
	return outcome{reason: wire.EndWindow}, true // FollowAbandoned, FollowStoreFailed
}

// window is how long the exchange may take: the reply window of a
// datagram query, the deadline of a stream exchange.
func (f *fetch) window() time.Duration {
	if f.stream != nil {
		return f.s.cfg.StreamDeadline
	}
	return f.s.cfg.ReplyWindow
}

func (f *fetch) timeoutOutcome() outcome {
	return outcome{reason: wire.EndWindow, code: wire.CodeTimeout, rule: wire.RuleTimeout,
		msg: "no reply within " + strconv.FormatInt(f.s.cfg.ReplyWindow.Milliseconds(), 10) + " ms"}
}

// ownerStatus maps how the owner's exchange ended to the shared status.
// A stream is shared only whole (END done): the others ask again rather
// than take one cut short.
func ownerStatus(out outcome, got, stream bool) shared.Status {
	switch {
	case stream && got && out.reason == wire.EndDone:
		return shared.Done
	case stream && out.reason == wire.EndTimeout:
		return shared.Timeout
	case stream:
		return shared.Abandoned
	case got:
		return shared.Done
	case out.code == wire.CodeTimeout:
		return shared.Timeout
	}
	return shared.Abandoned
}

// sharedClientRate is the per-client limiter with a shared store: the
// local bucket first (it alone decides while the store is down), then the
// shared one, through a lease.
type sharedClientRate struct {
	local  rateLimiter[netip.Addr]
	leases *shared.Leases
}

func (r sharedClientRate) allow(k netip.Addr, now time.Duration) bool {
	return r.local.allow(k, now) && r.leases.Allow(k)
}
