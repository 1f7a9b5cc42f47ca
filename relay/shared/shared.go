package shared

import (
	"context"
	"time"
)

// Dependency is an external store the relay depends on.
type Dependency interface {
	// Name identifies the store in logs, /metrics and /healthz ("redis").
	Name() string
	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
}

// Status is the state of a shared cache entry.
type Status uint8

const (
	Pending   Status = iota // the owner's exchange is in flight
	Done                    // replies arrived; the entry is a cache entry until it expires
	Timeout                 // the owner got no reply within its window
	Limited                 // the owner's upstream query was refused by a shared rate limit
	Abandoned               // the owner stopped before any reply (its clients left, or it shut down)
)

// Reply is one reply datagram held by the shared cache.
type Reply struct {
	Data []byte
	RTT  uint32 // µs, as measured by the owner
}

// Entry is what a non-owner sees of a shared cache entry.
type Entry struct {
	Replies []Reply // new since the previous cursor
	Status  Status
	TTL     time.Duration // with Done: how long the entry stays cached
	Cursor  string        // where Wait continues
}

// Cache shares upstream exchanges and their replies between relays.
// Every method must be safe for concurrent use and honour ctx's deadline.
type Cache interface {
	Dependency
	// Claim makes the caller the owner of key for at most hold when no
	// relay holds it and every bucket in charge has a token beyond its
	// Keep (they are taken, atomically with the claim). Owner: query
	// upstream and Publish the replies, then the end. When another relay holds key,
	// Claim returns its entry as it is; when a bucket is empty, its index.
	Claim(ctx context.Context, key string, hold time.Duration, charge []Bucket) (Claim, error)
	// Publish appends the owner's replies in order and, with p.End, ends
	// the entry: a Done entry stays cached for p.TTL; others go soon
	// after the waiters saw them. An entry that is gone (it outlived its
	// hold) is left alone.
	Publish(ctx context.Context, key string, p Publish) error
	// Wait returns what was added after cursor, waiting until something is
	// or ctx ends (then it returns ctx's error).
	Wait(ctx context.Context, key, cursor string) (Entry, error)
}

// Publish is what an owner adds to its entry.
type Publish struct {
	Replies []Reply
	End     bool
	Status  Status        // with End
	TTL     time.Duration // with End and Done
}

// Claim is the result of Cache.Claim.
type Claim struct {
	Owner   bool
	Refused int   // index of the empty bucket that refused the claim, or -1
	Entry   Entry // another relay's entry (not Owner, Refused -1)
}

// Bucket names one shared token bucket and its rate.
type Bucket struct {
	Key  string
	Rate Rate
	// Keep is how many tokens a take must leave in the bucket: a bucket
	// with fewer than Keep+1 refuses. The relay sets half the burst when
	// the client it charges for asks that target or host more often than
	// its share (the relay's sharelimit.go), so that the budget is shared
	// between the clients across relays as within one. Lease ignores it.
	Keep int
}

// Limiter keeps token buckets shared by the relays.
type Limiter interface {
	Dependency
	// Take takes one token from every bucket, atomically all or none. It
	// returns the index of the first bucket that had none beyond its
	// Keep, or -1.
	Take(ctx context.Context, buckets []Bucket) (refused int, err error)
	// Lease takes up to n tokens (as many as the bucket has, up to n) and
	// returns how many: 0 when it had none.
	Lease(ctx context.Context, b Bucket, n int) (int, error)
}

// DefaultTimeout bounds one call to a shared store (the relay's
// Config.SharedTimeout, and the kept master lists' pace).
const DefaultTimeout = 250 * time.Millisecond

// Rate is a token bucket: PerSecond tokens are added each second, up to
// Burst. Each query takes one token.
type Rate struct {
	PerSecond float64
	Burst     int
}
