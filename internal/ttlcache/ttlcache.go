// Package ttlcache is a bounded cache of values that are costly to make
// (a rendered card, a probe's report): each is kept for a time to live,
// the whole cache for at most a number of bytes, and concurrent askers of
// a missing key wait for one fill (golang.org/x/sync/singleflight) instead
// of each making it.
//
// The relay keeps its own in-flight table: it streams replies to askers
// who join mid-exchange and follows other instances, which a cache of
// finished values does not do.
package ttlcache

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cache maps string keys to values of type V. The zero value is not
// usable: call New.
type Cache[V any] struct {
	max  int
	size func(V) int
	now  func() time.Time

	mu      sync.Mutex
	m       map[string]entry[V]
	bytes   int
	flights singleflight.Group
}

type entry[V any] struct {
	v       V
	size    int
	expires time.Time
}

// New returns a cache that holds at most max bytes, as size counts a
// value. now is the clock (time.Now when nil).
func New[V any](max int, size func(V) int, now func() time.Time) *Cache[V] {
	if now == nil {
		now = time.Now
	}
	return &Cache[V]{max: max, size: size, now: now, m: make(map[string]entry[V])}
}

// Get returns key's value, calling fill to make it when it is absent or
// has expired; a value made is kept for ttl. Concurrent calls for one key
// share one fill, whose result (value or error) they all get. An error is
// not kept: the next Get fills again. fill runs on the goroutine of the
// first asker and should not depend on its context being alive, as others
// may be waiting.
func (c *Cache[V]) Get(key string, ttl time.Duration, fill func() (V, error)) (V, error) {
	if v, ok := c.lookup(key); ok {
		return v, nil
	}
	v, err, _ := c.flights.Do(key, func() (any, error) {
		if v, ok := c.lookup(key); ok { // filled while this one waited to fly
			return v, nil
		}
		v, err := fill()
		if err == nil {
			c.put(key, v, ttl)
		}
		return v, err
	})
	return v.(V), err
}

func (c *Cache[V]) lookup(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	if c.now().After(e.expires) {
		c.bytes -= e.size
		delete(c.m, key)
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *Cache[V]) put(key string, v V, ttl time.Duration) {
	n := c.size(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		c.bytes -= old.size
	}
	now := c.now()
	c.m[key] = entry[V]{v: v, size: n, expires: now.Add(ttl)}
	c.bytes += n
	if c.bytes > c.max {
		c.evict(now)
	}
}

// evict drops expired values, then the ones expiring soonest, until the
// cache fits its bound (the caller holds c.mu).
func (c *Cache[V]) evict(now time.Time) {
	for k, e := range c.m {
		if now.After(e.expires) {
			c.bytes -= e.size
			delete(c.m, k)
		}
	}
	for c.bytes > c.max && len(c.m) > 0 {
		var oldest string
		var at time.Time
		first := true
		for k, e := range c.m {
			if first || e.expires.Before(at) {
				oldest, at, first = k, e.expires, false
			}
		}
		c.bytes -= c.m[oldest].size
		delete(c.m, oldest)
	}
}

// Len is the number of values held, and Bytes their size.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Bytes is the size of the values held, as the size function counts.
func (c *Cache[V]) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
