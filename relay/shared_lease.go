package relay

import (
	"context"
	"net/netip"
	"time"

	"github.com/querylens/querylens/relay/shared"
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
	if sh.limiter == nil || !sh.limitDep.Usable() {
		return true
	}
	now := s.cfg.Clock()
	sh.leaseMu.Lock()
	if l := sh.leases[key]; l != nil && l.n > 0 && now.Before(l.until) {
		l.n--
		sh.leaseMu.Unlock()
		return true
	}
	sh.leaseMu.Unlock()
	want := min(max(s.cfg.IPRate.Burst/8, 1), maxLease)
	ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
	got, err := sh.limiter.Lease(ctx, shared.Bucket{Key: "ip:" + key.String(), Rate: s.cfg.IPRate}, want)
	cancel()
	if err != nil {
		sh.limitDep.Fail(err)
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
