package masters

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/querylens/querylens/relay/shared"
)

// DefaultInterval is the least time between two requests to one master
// address: Steam's master answers about thirty requests a minute from one
// address and then ignores it for a while; dpmaster-family masters
// throttle a client that asks faster than a few times a second.
const DefaultInterval = 2 * time.Second

// Pacer spaces the requests to each master address. Reserve either claims
// the next request to addr (it returns 0: send now) or says how long to
// wait before asking again. Every method must be safe for concurrent use.
type Pacer interface {
	Reserve(ctx context.Context, addr string) time.Duration
}

// LocalPacer paces within this process: one request per Interval per
// address, on the time Now gives.
type LocalPacer struct {
	Interval time.Duration
	Now      func() time.Time

	mu   sync.Mutex
	next map[string]time.Time
}

// NewLocalPacer returns a pacer allowing one request per interval per
// address (DefaultInterval when 0) on now (time.Now when nil).
func NewLocalPacer(interval time.Duration, now func() time.Time) *LocalPacer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if now == nil {
		now = time.Now
	}
	return &LocalPacer{Interval: interval, Now: now, next: map[string]time.Time{}}
}

// Reserve implements Pacer.
func (p *LocalPacer) Reserve(_ context.Context, addr string) time.Duration {
	now := p.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.next[addr]; ok && now.Before(n) {
		return n.Sub(now)
	}
	// The map holds one entry per configured master address (and per
	// address a list was asked of): it stays as small as the master list.
	p.next[addr] = now.Add(p.Interval)
	return 0
}

// SharedPacer paces across every instance sharing one store (a
// shared.Limiter: Redis with --redis): the local pacer first, then a token
// bucket per master address in the store ("master:" + address, one token
// per Interval, a burst of one). When the store fails the local pacer
// alone decides, as the relay's own limits do, so an outage degrades
// sharing, never the pacing of this instance.
type SharedPacer struct {
	Local   *LocalPacer
	Limiter shared.Limiter
	Timeout time.Duration // bounds one call to the store; 0: shared.DefaultTimeout
	Logger  *slog.Logger
}

// Reserve implements Pacer.
func (p *SharedPacer) Reserve(ctx context.Context, addr string) time.Duration {
	if d := p.Local.Reserve(ctx, addr); d > 0 {
		return d
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = shared.DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b := shared.Bucket{Key: "master:" + addr, Rate: shared.Rate{PerSecond: 1 / p.Local.Interval.Seconds(), Burst: 1}}
	refused, err := p.Limiter.Take(cctx, []shared.Bucket{b})
	if err != nil {
		if p.Logger != nil {
			p.Logger.Warn("masters: the shared pacing store failed; pacing locally", "store", p.Limiter.Name(), "err", err)
		}
		return 0
	}
	if refused >= 0 {
		// Another instance asked this master within the interval.
		return p.Local.Interval
	}
	return 0
}

// wait blocks until p lets a request to addr go, sleeping with sleep.
func wait(ctx context.Context, p Pacer, addr string, sleep func(context.Context, time.Duration) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := p.Reserve(ctx, addr)
		if d <= 0 {
			return nil
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}
