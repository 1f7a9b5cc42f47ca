package relay

import (
	"sync"
	"time"

	"github.com/querylens/querylens/relay/shared"
)

// bucket is a token bucket; the zero value is full. It is not safe for
// concurrent use: its owner locks.
type bucket struct {
	used float64 // tokens taken and not yet refilled; 0 means full
	last time.Duration
}

// allow takes one token at time now (any monotonic clock) if there is one.
func (b *bucket) allow(now time.Duration, r shared.Rate) bool {
	b.refill(now, r)
	if b.used+1 > float64(r.Burst) {
		return false
	}
	b.used++
	return true
}

func (b *bucket) refill(now time.Duration, r shared.Rate) {
	if now > b.last {
		b.used -= (now - b.last).Seconds() * r.PerSecond
		if b.used < 0 {
			b.used = 0
		}
		b.last = now
	}
}

// full reports whether the bucket has refilled completely, so that
// forgetting it changes nothing.
func (b *bucket) full(now time.Duration, r shared.Rate) bool {
	b.refill(now, r)
	return b.used == 0
}

// limiter is a set of token buckets, one per key, with a bounded number of
// keys: full buckets are forgotten when the table fills up or once a
// minute. When every bucket in a full table is in use, new keys are refused
// (the relay fails closed).
type limiter[K comparable] struct {
	mu        sync.Mutex
	rate      shared.Rate
	max       int
	m         map[K]*bucket
	lastSweep time.Duration
}

func newLimiter[K comparable](r shared.Rate, max int) *limiter[K] {
	return &limiter[K]{rate: r, max: max, m: make(map[K]*bucket)}
}

func (l *limiter[K]) allow(k K, now time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[k]
	if b == nil {
		if len(l.m) >= l.max || now-l.lastSweep > time.Minute {
			l.sweep(now)
		}
		if len(l.m) >= l.max {
			return false
		}
		b = &bucket{last: now}
		l.m[k] = b
	}
	return b.allow(now, l.rate)
}

func (l *limiter[K]) sweep(now time.Duration) {
	l.lastSweep = now
	for k, b := range l.m {
		if b.full(now, l.rate) {
			delete(l.m, k)
		}
	}
}

func (l *limiter[K]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
