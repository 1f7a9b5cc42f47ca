package shared

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/netip"
	"sync"
	"time"
)

// Event is something a relay counts about its use of the shared stores
// (Stores' count callback).
type Event uint8

const (
	EventHit       Event = iota // followed a complete entry (cached replies)
	EventCoalesced              // followed another relay's exchange in flight
	EventOwner                  // claimed an exchange: this relay queries upstream for everyone
	EventLocal                  // the cache was down or failed to claim: asked upstream without it
	EventFallback               // the store failed mid-wait or the owner gave up first: asked upstream itself
	EventAbandoned              // a followed owner abandoned its exchange
)

// Stores is a relay's view of its shared stores: the cache and the
// limiter (either may be nil), each distinct store's Health tracked once,
// and the bound on one call to them.
type Stores struct {
	Cache       Cache
	Limiter     Limiter
	CacheHealth *Health // nil without Cache
	LimitHealth *Health // nil without Limiter
	Timeout     time.Duration

	deps     []*Health
	count    func(Event)
	stop     chan struct{}
	stopOnce sync.Once
}

// NewStores tracks cache and limiter (nil when both are), bounding each
// call by timeout, logging with log when a store goes down and comes back,
// and reporting what happens through count.
func NewStores(cache Cache, limiter Limiter, timeout time.Duration, log func(string, ...any), count func(Event)) *Stores {
	if cache == nil && limiter == nil {
		return nil
	}
	s := &Stores{Cache: cache, Limiter: limiter, Timeout: timeout, count: count, stop: make(chan struct{})}
	byName := map[string]*Health{}
	track := func(d Dependency) *Health {
		if x := byName[d.Name()]; x != nil {
			return x
		}
		x := NewHealth(d, timeout, log, s.stop)
		byName[d.Name()] = x
		s.deps = append(s.deps, x)
		return x
	}
	if cache != nil {
		s.CacheHealth = track(cache)
	}
	if limiter != nil {
		s.LimitHealth = track(limiter)
	}
	return s
}

// Deps is the health of each distinct store.
func (s *Stores) Deps() []*Health { return s.deps }

// Close stops the probers and waits for them (the relay's Shutdown).
func (s *Stores) Close() {
	if s == nil {
		return
	}
	s.stopOnce.Do(func() { close(s.stop) })
	for _, x := range s.deps {
		x.Wait()
	}
}

// Key turns a relay's cache key (up to a few KiB, binary) into a short
// store key.
func Key(cacheKey string) string {
	h := sha256.Sum256([]byte(cacheKey))
	return base64.RawURLEncoding.EncodeToString(h[:18])
}

// TargetBuckets are the shared buckets an owner charges before it queries
// target: the target's ("t:" and the address) and its host's ("h:" and
// the IP), in that order. A bucket of a target or host the client asks
// more often than its share keeps half its burst for the others.
func TargetBuckets(target netip.AddrPort, targetRate, hostRate Rate, greedyTarget, greedyHost bool) []Bucket {
	keep := func(greedy bool, r Rate) int {
		if greedy {
			return r.Burst / 2
		}
		return 0
	}
	return []Bucket{
		{Key: "t:" + target.String(), Rate: targetRate, Keep: keep(greedyTarget, targetRate)},
		{Key: "h:" + target.Addr().String(), Rate: hostRate, Keep: keep(greedyHost, hostRate)},
	}
}

// Take charges the buckets charge returns with the limiter, atomically;
// it returns the index of the bucket that refused, or -1. A limiter that
// is absent, down or fails refuses nothing (charge is then not called):
// the relay's local buckets, charged first, hold the line.
func (s *Stores) Take(charge func() []Bucket) int {
	if s.Limiter == nil || !s.LimitHealth.Usable() {
		return -1
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	i, err := s.Limiter.Take(ctx, charge())
	if err != nil {
		s.LimitHealth.Fail(err)
		return -1
	}
	return i
}

// ClaimKind says what Claim found.
type ClaimKind uint8

const (
	ClaimLocal   ClaimKind = iota // the cache is down or failed: query upstream without it
	ClaimRefused                  // a shared bucket refused (ClaimResult.Refused)
	ClaimOwner                    // this relay owns the key: query upstream and publish
	ClaimFollow                   // another relay holds it: Follow its entry
)

// ClaimResult is the result of Stores.Claim.
type ClaimResult struct {
	Kind    ClaimKind
	Key     string // the store key (Owner, Follow)
	Refused int    // the index into the charged buckets (Refused)
	Entry   Entry  // what another relay published so far (Follow)
}

// Claim claims the exchange of cacheKey for at most hold, charging the
// buckets charge returns (not called when the limiter is down). It counts
// EventLocal and EventOwner.
func (s *Stores) Claim(cacheKey string, hold time.Duration, charge func() []Bucket) ClaimResult {
	if !s.CacheHealth.Usable() {
		s.count(EventLocal)
		return ClaimResult{Kind: ClaimLocal}
	}
	key := Key(cacheKey)
	var buckets []Bucket
	if s.LimitHealth == nil || s.LimitHealth.Usable() {
		buckets = charge()
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	c, err := s.Cache.Claim(ctx, key, hold, buckets)
	cancel()
	switch {
	case err != nil:
		s.CacheHealth.Fail(err)
		s.count(EventLocal)
		return ClaimResult{Kind: ClaimLocal}
	case c.Refused >= 0 && c.Refused < len(buckets):
		return ClaimResult{Kind: ClaimRefused, Key: key, Refused: c.Refused}
	case c.Owner:
		s.count(EventOwner)
		return ClaimResult{Kind: ClaimOwner, Key: key}
	}
	return ClaimResult{Kind: ClaimFollow, Key: key, Entry: c.Entry}
}
