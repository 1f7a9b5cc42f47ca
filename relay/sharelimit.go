package relay

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/querylens/querylens/relay/shared"
)

// shareLimiter is a set of token buckets, one per key (a target, or a
// target's host), whose tokens are shared between the clients that ask,
// as the upstream slots are (slots.go). Every client may take tokens while
// the bucket holds more than half its burst. Below that, only a client
// that asks the key less often than an equal share of the key's rate
// between the clients asking it (itself included) may take one: so two
// clients that ask one host faster than its budget share what a third
// leaves, and the third, asking within its share, finds a token whenever
// the bucket has one. A client alone gets the whole budget, as before;
// the total never exceeds the rate.
//
// A client's rate on a key is a moving average of its asks, granted or
// not (its demand: a client refused counts as asking), with the bucket's
// refill time (Burst/PerSecond) as time constant; clients whose rate fell
// under an eighth of an ask per time constant stop counting. At most
// maxUsers clients are tracked per key: beyond them, a client is taken
// for a new one (light).
type shareLimiter[K comparable] struct {
	mu        sync.Mutex
	rate      shared.Rate
	tau       float64 // seconds: the time constant of the clients' rates
	max       int
	m         map[K]*shareBucket
	lastSweep time.Duration
}

// shareBucket is one key's bucket and its clients' recent rates.
type shareBucket struct {
	bucket
	users map[netip.Addr]*shareUse
}

type shareUse struct {
	rate float64 // tokens per second, decayed to last
	last time.Duration
}

const maxUsers = 64

func newShareLimiter[K comparable](r shared.Rate, max int) *shareLimiter[K] {
	return &shareLimiter[K]{rate: r, tau: float64(r.Burst) / r.PerSecond, max: max, m: make(map[K]*shareBucket)}
}

// allow takes one token of key's bucket for client at now, if the bucket
// has one and client may have it.
func (l *shareLimiter[K]) allow(key K, client netip.Addr, now time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[key]
	if b == nil {
		if len(l.m) >= l.max || now-l.lastSweep > time.Minute {
			l.sweep(now)
		}
		if len(l.m) >= l.max {
			return false
		}
		b = &shareBucket{bucket: bucket{last: now}}
		l.m[key] = b
	}
	// Bring every client's rate to now, forget the quiet ones, and count
	// those asking, this one included.
	quiet := 1 / (8 * l.tau)
	for a, u := range b.users {
		if now > u.last {
			u.rate *= math.Exp(-(now - u.last).Seconds() / l.tau)
			u.last = now
		}
		if u.rate < quiet {
			delete(b.users, a)
		}
	}
	u := b.users[client]
	n := len(b.users)
	if u == nil {
		n++
		if len(b.users) < maxUsers {
			if b.users == nil {
				b.users = make(map[netip.Addr]*shareUse)
			}
			u = &shareUse{last: now}
			b.users[client] = u
		}
	}
	over := u != nil && u.rate >= l.rate.PerSecond/float64(n)
	if u != nil {
		u.rate += 1 / l.tau // this ask, granted or not: the client's demand
	}
	b.refill(now, l.rate)
	switch {
	case b.used+1 > float64(l.rate.Burst):
		return false
	case over && b.used > float64(l.rate.Burst)/2:
		return false // less than half left, and this client asks for more than its share
	}
	b.used++
	return true
}

// greedy reports whether client asks key more often than an equal share
// of its rate between the clients asking it, as allow judges (without
// counting an ask).
func (l *shareLimiter[K]) greedy(key K, client netip.Addr, now time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[key]
	if b == nil {
		return false
	}
	u := b.users[client]
	if u == nil {
		return false
	}
	rate := u.rate
	if now > u.last {
		rate *= math.Exp(-(now - u.last).Seconds() / l.tau)
	}
	return rate >= l.rate.PerSecond/float64(len(b.users))
}

// sweep forgets full buckets: nobody took a token for a refill time, so
// their clients' rates count for little.
func (l *shareLimiter[K]) sweep(now time.Duration) {
	l.lastSweep = now
	for k, b := range l.m {
		if b.full(now, l.rate) {
			delete(l.m, k)
		}
	}
}
