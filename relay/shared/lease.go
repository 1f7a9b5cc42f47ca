package shared

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

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

// Leases charges each client's shared bucket ("ip:" and its address)
// through leases.
type Leases struct {
	s     *Stores
	rate  Rate
	clock func() time.Time

	mu sync.Mutex
	m  map[netip.Addr]*lease
}

// NewLeases charges clients' shared buckets of rate, telling time by
// clock.
func (s *Stores) NewLeases(rate Rate, clock func() time.Time) *Leases {
	return &Leases{s: s, rate: rate, clock: clock, m: make(map[netip.Addr]*lease)}
}

// Allow charges the client's shared bucket, after its local one allowed a
// query. A limiter that is absent, down or fails allows everything: the
// local bucket, charged first, holds the line.
func (l *Leases) Allow(client netip.Addr) bool {
	s := l.s
	if s.Limiter == nil || !s.LimitHealth.Usable() {
		return true
	}
	now := l.clock()
	l.mu.Lock()
	if x := l.m[client]; x != nil && x.n > 0 && now.Before(x.until) {
		x.n--
		l.mu.Unlock()
		return true
	}
	l.mu.Unlock()
	want := min(max(l.rate.Burst/8, 1), maxLease)
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	got, err := s.Limiter.Lease(ctx, Bucket{Key: "ip:" + client.String(), Rate: l.rate}, want)
	cancel()
	if err != nil {
		s.LimitHealth.Fail(err)
		return true
	}
	if got == 0 {
		return false
	}
	l.mu.Lock()
	if len(l.m) >= maxLeased {
		for k, x := range l.m {
			if !now.Before(x.until) || x.n == 0 {
				delete(l.m, k)
			}
		}
		if len(l.m) >= maxLeased {
			clear(l.m)
		}
	}
	l.m[client] = &lease{n: got - 1, until: now.Add(leaseTTL)}
	l.mu.Unlock()
	return true
}
