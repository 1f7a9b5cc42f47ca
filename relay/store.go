package relay

import (
	"context"
	"time"
)

// Shared state: several relays behind one load balancer act as one when
// Config.SharedCache and Config.SharedLimiter point at one store (package
// relay/redisstore). The relay only sees the small interfaces below; the
// in-process cache and limits stay in front of them and take over whenever
// the store fails, so a store outage degrades sharing, never service.
//
// One upstream exchange across all relays:
//
//	relay A                       store                        relay B
//	Claim(k) ------------------>  k absent: create, owner
//	send UDP, reply arrives
//	Publish(k, replies) ------->  k: [start, reply]  <-------- Claim(k): not owner, entries so far
//	Publish(k, end, ttl) ------>  k: [..., end]; expires ttl   Wait(k, cursor): the rest, then end
//
// The owner publishes in batches: replies wait up to publishDelay for more
// replies or the end of the exchange, so that an exchange that ends soon
// after its reply (the usual case: the asker has what it needs and
// cancels) costs one write to the store, not two.
//
// A relay that claims a key is the only one that queries the game server
// for it until the entry expires; the others stream its replies as they
// come (coalesced) or read them whole (cached). Keys are hashes of the
// relay's cache key (protocol, target, Config.CacheKey of the datagram).

// Dependency is an external store the relay depends on.
type Dependency interface {
	// Name identifies the store in logs, /metrics and /healthz ("redis").
	Name() string
	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
}

// SharedStatus is the state of a shared cache entry.
type SharedStatus uint8

const (
	SharedPending   SharedStatus = iota // the owner's exchange is in flight
	SharedDone                          // replies arrived; the entry is a cache entry until it expires
	SharedTimeout                       // the owner got no reply within its window
	SharedLimited                       // the owner's upstream query was refused by a shared rate limit
	SharedAbandoned                     // the owner stopped before any reply (its clients left, or it shut down)
)

// SharedReply is one reply datagram held by the shared cache.
type SharedReply struct {
	Data []byte
	RTT  uint32 // µs, as measured by the owner
}

// SharedEntry is what a non-owner sees of a shared cache entry.
type SharedEntry struct {
	Replies []SharedReply // new since the previous cursor
	Status  SharedStatus
	TTL     time.Duration // with SharedDone: how long the entry stays cached
	Cursor  string        // where Wait continues
}

// SharedCache shares upstream exchanges and their replies between relays.
// Every method must be safe for concurrent use and honour ctx's deadline.
type SharedCache interface {
	Dependency
	// Claim makes the caller the owner of key for at most hold when no
	// relay holds it and every bucket in charge has a token beyond its
	// Keep (they are taken, atomically with the claim). Owner: query upstream and
	// Publish the replies, then the end. When another relay holds key,
	// Claim returns its entry as it is; when a bucket is empty, its index.
	Claim(ctx context.Context, key string, hold time.Duration, charge []SharedBucket) (SharedClaim, error)
	// Publish appends the owner's replies in order and, with p.End, ends
	// the entry: a SharedDone entry stays cached for p.TTL; others go soon
	// after the waiters saw them. An entry that is gone (it outlived its
	// hold) is left alone.
	Publish(ctx context.Context, key string, p SharedPublish) error
	// Wait returns what was added after cursor, waiting until something is
	// or ctx ends (then it returns ctx's error).
	Wait(ctx context.Context, key, cursor string) (SharedEntry, error)
}

// SharedPublish is what an owner adds to its entry.
type SharedPublish struct {
	Replies []SharedReply
	End     bool
	Status  SharedStatus  // with End
	TTL     time.Duration // with End and SharedDone
}

// SharedClaim is the result of SharedCache.Claim.
type SharedClaim struct {
	Owner   bool
	Refused int         // index of the empty bucket that refused the claim, or -1
	Entry   SharedEntry // another relay's entry (not Owner, Refused -1)
}

// SharedBucket names one shared token bucket and its rate.
type SharedBucket struct {
	Key  string
	Rate Rate
	// Keep is how many tokens a take must leave in the bucket: a bucket
	// with fewer than Keep+1 refuses. The relay sets half the burst when
	// the client it charges for asks that target or host more often than
	// its share (sharelimit.go), so that the budget is shared between the
	// clients across relays as within one. Lease ignores it.
	Keep int
}

// SharedLimiter keeps token buckets shared by the relays.
type SharedLimiter interface {
	Dependency
	// Take takes one token from every bucket, atomically all or none. It
	// returns the index of the first bucket that had none beyond its
	// Keep, or -1.
	Take(ctx context.Context, buckets []SharedBucket) (refused int, err error)
	// Lease takes up to n tokens (as many as the bucket has, up to n) and
	// returns how many: 0 when it had none.
	Lease(ctx context.Context, b SharedBucket, n int) (int, error)
}

// Defaults for the shared store.
const (
	DefaultSharedTimeout = 250 * time.Millisecond
	sharedProbeEvery     = time.Second
)
