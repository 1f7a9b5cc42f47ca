// Package redisstore keeps the relay's shared state in Redis or Valkey
// (relay.SharedCache and relay.SharedLimiter), so that several querylens
// instances behind one load balancer query each game server once per
// cache TTL between them and share their rate limits.
//
// # Keys
//
// Every key starts with Options.Prefix (default "querylens:").
//
//	r:<hash>   a stream: one exchange and, once it ended with replies, its
//	           cache entry. Entries, in order:
//	             s=""                    the owner claimed it (Claim)
//	             d=<datagram> r=<rtt µs> one reply per entry (Append)
//	             e=<status> t=<ttl ms>   the end (Finish)
//	           It expires hold after the claim while in flight, then ttl
//	           after a reply-bearing end, or endLinger after another end.
//	b:<name>   a hash: one token bucket, u (tokens used, float) and
//	           t (Redis server time of the last take, µs). It expires once
//	           full again.
//
// The claim and the buckets are Lua scripts, so each is one atomic step on
// the server: two relays cannot both own an exchange, and two takes cannot
// both spend the last token. Buckets run on the Redis server's clock
// (TIME), so the relays' clocks need not agree. Waiting for another
// relay's replies is XREAD BLOCK on the stream, which returns what the
// owner appended since the caller's cursor, so a relay that arrives late
// still receives every reply from the first.
package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/querylens/querylens/relay"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// endLinger is how long an entry that ended without replies stays, so that
// relays waiting on it see its end; the next query after it asks again.
const endLinger = 500 * time.Millisecond

// blockGrace is how long past its block a blocked read may take.
const blockGrace = 250 * time.Millisecond

// Options configures a Store.
type Options struct {
	// Prefix starts every key, so that deployments can share one Redis.
	// Default "querylens:".
	Prefix string
	// PoolSize caps the connections to Redis. Each relay waiting for
	// another's replies holds one for up to the reply window. Default 256.
	PoolSize int
}

// Store is a relay.SharedCache and relay.SharedLimiter on one Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
}

var (
	_ relay.SharedCache   = (*Store)(nil)
	_ relay.SharedLimiter = (*Store)(nil)
)

// Open parses a redis:// (or rediss://, unix://) URL and returns a Store
// on it. It does not connect: the relay finds out whether Redis answers on
// first use, and keeps serving without it while it does not.
func Open(url string, o Options) (*Store, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("redisstore: bad URL: " + err.Error())
	}
	if o.Prefix == "" {
		o.Prefix = "querylens:"
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 256
	}
	opt.PoolSize = o.PoolSize
	// The relay bounds every call with its context and falls back to its
	// local state on the first failure; retrying inside the client would
	// only make a Redis outage slower to notice.
	opt.MaxRetries = -1
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = time.Second
	opt.PoolTimeout = time.Second
	opt.DisableIdentity = true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &Store{rdb: redis.NewClient(opt), prefix: o.Prefix}, nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.rdb.Close() }

// Name is "redis".
func (s *Store) Name() string { return "redis" }

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// claimScript creates the stream with its start entry when absent (the
// caller owns the exchange), or returns its entries and remaining TTL.
// An entry that ended without being cached (no replies, or no TTL) lingers
// only for the relays already waiting on it; a new claim takes it over.
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
  local f = last and last[2]
  if not (f and f[1] == 'e' and (f[2] ~= '1' or f[4] == '0')) then
    return {0, redis.call('XRANGE', KEYS[1], '-', '+'), redis.call('PTTL', KEYS[1])}
  end
  redis.call('DEL', KEYS[1])
end
redis.call('XADD', KEYS[1], '*', 's', '')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {1}
`)

// finishScript appends the end entry and sets the entry's lifetime, unless
// the entry is gone (it outlived its hold).
var finishScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('XADD', KEYS[1], '*', 'e', ARGV[1], 't', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// Claim implements relay.SharedCache.
func (s *Store) Claim(ctx context.Context, key string, hold time.Duration) (relay.SharedEntry, bool, error) {
	v, err := claimScript.Run(ctx, s.rdb, []string{s.prefix + "r:" + key}, max(hold.Milliseconds(), 1)).Slice()
	if err != nil {
		return relay.SharedEntry{}, false, err
	}
	if len(v) == 1 {
		return relay.SharedEntry{}, true, nil
	}
	if len(v) != 3 {
		return relay.SharedEntry{}, false, errors.New("redisstore: claim: unexpected reply")
	}
	raw, _ := v[1].([]any)
	e := relay.SharedEntry{Cursor: "0-0"}
	if err := s.decode(&e, raw); err != nil {
		return relay.SharedEntry{}, false, err
	}
	if pttl, ok := v[2].(int64); ok && e.Status == relay.SharedDone && pttl > 0 {
		e.TTL = time.Duration(pttl) * time.Millisecond
	}
	return e, false, nil
}

// decode appends the stream entries in raw (XRANGE's reply) to e.
func (s *Store) decode(e *relay.SharedEntry, raw []any) error {
	for _, m := range raw {
		pair, _ := m.([]any)
		if len(pair) != 2 {
			return errors.New("redisstore: malformed stream entry")
		}
		id, _ := pair[0].(string)
		fields, _ := pair[1].([]any)
		vals := make([]string, len(fields))
		for i, f := range fields {
			vals[i], _ = f.(string)
		}
		if err := addEntry(e, id, vals); err != nil {
			return err
		}
	}
	return nil
}

// addEntry applies one stream entry (flat field/value list) to e.
func addEntry(e *relay.SharedEntry, id string, kv []string) error {
	e.Cursor = id
	if len(kv) < 2 {
		return errors.New("redisstore: stream entry " + id + " has no fields")
	}
	switch kv[0] {
	case "s":
	case "d":
		var rtt uint64
		if len(kv) >= 4 && kv[2] == "r" {
			rtt, _ = strconv.ParseUint(kv[3], 10, 32)
		}
		e.Replies = append(e.Replies, relay.SharedReply{Data: []byte(kv[1]), RTT: uint32(rtt)})
	case "e":
		st, err := strconv.ParseUint(kv[1], 10, 8)
		if err != nil {
			return errors.New("redisstore: stream entry " + id + ": bad status " + strconv.Quote(kv[1]))
		}
		e.Status = relay.SharedStatus(st)
		if len(kv) >= 4 && kv[2] == "t" {
			ms, _ := strconv.ParseInt(kv[3], 10, 64)
			e.TTL = time.Duration(ms) * time.Millisecond
		}
	default:
		return errors.New("redisstore: stream entry " + id + ": unknown field " + strconv.Quote(kv[0]))
	}
	return nil
}

// Append implements relay.SharedCache. A reply for an entry that is gone
// (it outlived its hold) is dropped.
func (s *Store) Append(ctx context.Context, key string, r relay.SharedReply) error {
	err := s.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: s.prefix + "r:" + key, NoMkStream: true, ID: "*",
		Values: []any{"d", r.Data, "r", strconv.FormatUint(uint64(r.RTT), 10)},
	}).Err()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// Finish implements relay.SharedCache.
func (s *Store) Finish(ctx context.Context, key string, status relay.SharedStatus, ttl time.Duration) error {
	life := ttl
	if status != relay.SharedDone || ttl <= 0 {
		life = endLinger
	}
	return finishScript.Run(ctx, s.rdb, []string{s.prefix + "r:" + key},
		int(status), ttl.Milliseconds(), max(life.Milliseconds(), 1)).Err()
}

// Wait implements relay.SharedCache with XREAD BLOCK until ctx's deadline.
func (s *Store) Wait(ctx context.Context, key, cursor string) (relay.SharedEntry, error) {
	// Redis ends a BLOCK on its timer tick (100 ms at the default hz 10),
	// so its "nothing new" may come a tick after ctx's deadline; a read cut
	// by the connection's deadline would cost the connection. The read
	// gets blockGrace more than the block.
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Now().Add(100 * time.Millisecond)
	}
	block := time.Until(d)
	if block < time.Millisecond {
		return relay.SharedEntry{}, context.DeadlineExceeded
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.Add(blockGrace))
	defer cancel()
	res, err := s.rdb.XRead(rctx, &redis.XReadArgs{
		Streams: []string{s.prefix + "r:" + key, cursor}, Block: block, Count: 128,
	}).Result()
	e := relay.SharedEntry{Cursor: cursor}
	switch {
	case errors.Is(err, redis.Nil):
		return e, context.DeadlineExceeded
	case err != nil:
		return e, err
	}
	for _, st := range res {
		for _, m := range st.Messages {
			kv := make([]string, 0, 2*len(m.Values))
			for _, k := range []string{"s", "d", "r", "e", "t"} {
				if v, ok := m.Values[k]; ok {
					str, _ := v.(string)
					kv = append(kv, k, str)
				}
			}
			if err := addEntry(&e, m.ID, kv); err != nil {
				return e, err
			}
		}
	}
	return e, nil
}

// takeScript takes one token from each bucket in KEYS, all or none. ARGV
// holds rate (tokens/s) and burst per key. It returns the 0-based index of
// the first bucket without a token, or -1.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local used = {}
for i, k in ipairs(KEYS) do
  local rate = tonumber(ARGV[2*i-1])
  local burst = tonumber(ARGV[2*i])
  local v = redis.call('HMGET', k, 'u', 't')
  local u = tonumber(v[1]) or 0
  local last = tonumber(v[2]) or now
  if now > last then
    u = u - (now - last) / 1000000 * rate
    if u < 0 then u = 0 end
  end
  if u + 1 > burst then return i - 1 end
  used[i] = u + 1
end
for i, k in ipairs(KEYS) do
  local rate = tonumber(ARGV[2*i-1])
  redis.call('HSET', k, 'u', string.format('%.6f', used[i]), 't', string.format('%.0f', now))
  redis.call('PEXPIRE', k, math.ceil(used[i] / rate * 1000) + 1000)
end
return -1
`)

// Take implements relay.SharedLimiter.
func (s *Store) Take(ctx context.Context, buckets []relay.SharedBucket) (int, error) {
	keys := make([]string, len(buckets))
	args := make([]any, 0, 2*len(buckets))
	for i, b := range buckets {
		keys[i] = s.prefix + "b:" + b.Key
		args = append(args, strconv.FormatFloat(b.Rate.PerSecond, 'g', -1, 64), b.Rate.Burst)
	}
	n, err := takeScript.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return -1, err
	}
	if n >= len(buckets) {
		return -1, errors.New("redisstore: take: bucket index out of range")
	}
	return n, nil
}
