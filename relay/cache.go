package relay

import (
	"container/list"
	"sync"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// answer is what a finished exchange brought back: its replies, in order,
// and how it ended. Replies are shared: never modify them.
type answer struct {
	replies []reply
	size    int // bytes of the replies
	reason  wire.EndReason
}

// replyCache keeps the answers of finished exchanges by cache key (see
// Server.cacheKey) until their TTL ends, so that identical queries share
// them (Config.CacheTTL). Its one implementation is memCache, in memory
// and bounded. A store shared by several relays (Config.SharedCache) does
// not replace it: it is asked after this cache missed, by the exchange
// that would otherwise query upstream (fetch.viaShared), and what it
// returns lands here too. Exchanges still in flight are coalesced apart
// from it (flights), always locally.
type replyCache interface {
	get(key string) (answer, bool)
	// peek is get for a reader that must not change what the cache
	// keeps: it leaves the entry's place in the eviction order alone.
	peek(key string) (answer, bool)
	put(key string, a answer, ttl time.Duration)
	stats() (entries, bytes int) // for the metrics
}

// memCache is a replyCache bounded in entries and bytes that evicts the
// least recently used entries.
type memCache struct {
	mu         sync.Mutex
	m          map[string]*list.Element // of *cacheEntry
	lru        list.List                // most recently used first
	bytes      int
	maxEntries int
	maxBytes   int
	now        func() time.Time // Config.Clock
}

type cacheEntry struct {
	key     string
	a       answer
	expires time.Time
	cost    int
}

func newMemCache(maxEntries, maxBytes int, now func() time.Time) *memCache {
	return &memCache{m: make(map[string]*list.Element), maxEntries: maxEntries, maxBytes: maxBytes, now: now}
}

func (c *memCache) get(key string) (answer, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[key]
	if el == nil {
		return answer{}, false
	}
	e := el.Value.(*cacheEntry)
	if now.After(e.expires) {
		c.removeLocked(el)
		return answer{}, false
	}
	c.lru.MoveToFront(el)
	return e.a, true
}

func (c *memCache) peek(key string) (answer, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[key]
	if el == nil {
		return answer{}, false
	}
	e := el.Value.(*cacheEntry)
	if now.After(e.expires) {
		return answer{}, false
	}
	return e.a, true
}

func (c *memCache) put(key string, a answer, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[key]; el != nil {
		c.removeLocked(el)
	}
	// What an entry counts against MaxCacheBytes: its bytes, its key, and
	// the bookkeeping of each reply and of the entry.
	e := &cacheEntry{key: key, a: a, expires: c.now().Add(ttl), cost: a.size + len(key) + 64*len(a.replies) + 256}
	c.m[key] = c.lru.PushFront(e)
	c.bytes += e.cost
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.lru.Back())
	}
}

func (c *memCache) removeLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.m, e.key)
	c.bytes -= e.cost
}

func (c *memCache) stats() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

// flights is the table of exchanges in flight by cache key, which
// identical queries join.
type flights struct {
	mu sync.Mutex
	m  map[string]*fetch
}

// remove takes f out of the table if it is still there.
func (fl *flights) remove(f *fetch) {
	fl.mu.Lock()
	if fl.m[f.key] == f {
		delete(fl.m, f.key)
	}
	fl.mu.Unlock()
}

// stopAll stops every exchange in flight (shutdown).
func (fl *flights) stopAll() {
	fl.mu.Lock()
	running := make([]*fetch, 0, len(fl.m))
	for _, f := range fl.m {
		running = append(running, f)
	}
	fl.mu.Unlock()
	for _, f := range running {
		f.mu.Lock()
		f.stopLocked(true)
		f.mu.Unlock()
	}
}

// serveCached answers a from a cached answer: its replies flagged cached,
// then END as the exchange ended (a cancelled exchange's answer ends like
// a window that closed: the asker did not cancel).
func serveCached(a *asker, ans answer) {
	for _, r := range ans.replies {
		a.sink.reply(a, r, wire.FlagCached)
	}
	reason := ans.reason
	if reason == wire.EndCancelled {
		reason = wire.EndWindow
	}
	a.sink.end(a, reason)
}
