package relay

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

// Resolution results are shared for a while so that hundreds of pages
// asking for the same master's name cause one lookup, and a name that does
// not resolve is not looked up again for every query.
const (
	resolveTTL         = 30 * time.Second
	resolveNegativeTTL = 5 * time.Second
	resolveMaxNames    = 4096
)

type lookup struct {
	done    chan struct{}
	addrs   []netip.Addr
	err     error
	expires time.Time
}

type resolver struct {
	r       Resolver
	timeout time.Duration
	wg      *sync.WaitGroup // the server's, so that Shutdown waits for lookups
	mu      sync.Mutex
	m       map[string]*lookup
}

// lookup resolves name, sharing results and lookups in progress. The
// lookup runs on its own goroutine, bounded by the resolver's timeout
// rather than by any caller's context, because other callers may be
// waiting for it; ctx bounds only this caller's wait.
func (rs *resolver) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	now := time.Now()
	rs.mu.Lock()
	l := rs.m[name]
	if l != nil {
		select {
		case <-l.done:
			if now.After(l.expires) {
				l = nil
			}
		default:
		}
	}
	if l == nil {
		rs.forgetLocked(now)
		l = &lookup{done: make(chan struct{})}
		if rs.m == nil {
			rs.m = make(map[string]*lookup)
		}
		rs.m[name] = l
		rs.wg.Add(1) // the caller holds a count of the same group
		go rs.run(name, l)
	}
	rs.mu.Unlock()
	select {
	case <-l.done:
		return l.addrs, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forgetLocked makes room when the table is full: expired results first,
// then any finished one.
func (rs *resolver) forgetLocked(now time.Time) {
	if len(rs.m) < resolveMaxNames {
		return
	}
	for k, x := range rs.m {
		select {
		case <-x.done:
			if now.After(x.expires) || len(rs.m) >= resolveMaxNames {
				delete(rs.m, k)
			}
		default:
		}
	}
}

func (rs *resolver) run(name string, l *lookup) {
	defer rs.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), rs.timeout)
	addrs, err := rs.r.LookupNetIP(ctx, "ip", name)
	cancel()
	ttl := resolveTTL
	if err != nil || len(addrs) == 0 {
		ttl = resolveNegativeTTL
	}
	rs.mu.Lock()
	l.addrs, l.err, l.expires = addrs, err, time.Now().Add(ttl)
	rs.mu.Unlock()
	close(l.done)
}
