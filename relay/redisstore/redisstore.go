// Package redisstore keeps the relay's shared state in Redis or Valkey
// (shared.Cache and shared.Limiter), so that several querylens
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
//	             d=<datagram> r=<rtt µs> one reply per entry (Publish)
//	             e=<status> t=<ttl ms>   the end (Publish with End)
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
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/querylens/querylens/relay/shared"
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

// Store is a shared.Cache and shared.Limiter on one Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
}

var (
	_ shared.Cache   = (*Store)(nil)
	_ shared.Limiter = (*Store)(nil)
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
	opt.MinIdleConns = 4 // the first queries after a quiet spell need not dial
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

// Ping reports whether Redis answers, and loads the scripts (a Redis that
// restarted has forgotten them), so that the first calls after it do not
// pay for loading them.
func (s *Store) Ping(ctx context.Context) error {
	scripts := []*redis.Script{claimScript, publishScript, takeScript, leaseScript}
	hashes := make([]string, len(scripts))
	for i, sc := range scripts {
		hashes[i] = sc.Hash()
	}
	loaded, err := s.rdb.ScriptExists(ctx, hashes...).Result()
	if err != nil {
		return err
	}
	for i, ok := range loaded {
		if !ok && i < len(scripts) {
			if err := scripts[i].Load(ctx, s.rdb).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// bucketLua is the token-bucket arithmetic the scripts share: refill
// returns bucket k's tokens used at now (µs, Redis's clock) at rate
// tokens/s; store writes them back with an expiry of when it is full again.
const bucketLua = `
local function refill(k, now, rate)
  local v = redis.call('HMGET', k, 'u', 't')
  local u = tonumber(v[1]) or 0
  local last = tonumber(v[2]) or now
  if now > last then
    u = u - (now - last) / 1000000 * rate
    if u < 0 then u = 0 end
  end
  return u
end
local function store(k, now, rate, u)
  redis.call('HSET', k, 'u', string.format('%.6f', u), 't', string.format('%.0f', now))
  redis.call('PEXPIRE', k, math.ceil(u / rate * 1000) + 1000)
end
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
-- takeAll takes one token from each bucket in KEYS[first..], all or none;
-- ARGV[argFirst..] holds rate, burst and keep (tokens the take must leave)
-- per bucket. It returns the 0-based index of the first bucket without a
-- token beyond its keep, or -1.
local function takeAll(first, argFirst)
  local now = clock()
  local used = {}
  for i = first, #KEYS do
    local j = argFirst + 3 * (i - first)
    local u = refill(KEYS[i], now, tonumber(ARGV[j]))
    if u + 1 > tonumber(ARGV[j + 1]) - tonumber(ARGV[j + 2]) then return i - first end
    used[i] = u + 1
  end
  for i = first, #KEYS do
    store(KEYS[i], now, tonumber(ARGV[argFirst + 3 * (i - first)]), used[i])
  end
  return -1
end
`

// claimScript: KEYS[1] is the stream, KEYS[2..] the buckets to charge;
// ARGV[1] the hold (ms), then rate, burst and keep per bucket. When the stream
// is live it returns {0, entries, pttl}; otherwise it charges the buckets
// and creates the stream with its start entry ({1}), or returns {2, index
// of the empty bucket}. An entry that ended without being cached (no
// replies, or no TTL) lingers only for the relays already waiting on it: a
// claim takes it over. Status 1 is shared.Done.
var claimScript = redis.NewScript(bucketLua + `
if redis.call('EXISTS', KEYS[1]) == 1 then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
  local f = last and last[2]
  if not (f and f[1] == 'e' and (f[2] ~= '1' or f[4] == '0')) then
    return {0, redis.call('XRANGE', KEYS[1], '-', '+'), redis.call('PTTL', KEYS[1])}
  end
end
local refused = takeAll(2, 2)
if refused >= 0 then return {2, refused} end
redis.call('DEL', KEYS[1])
redis.call('XADD', KEYS[1], '*', 's', '')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {1}
`)

// publishScript appends ARGV[4..] (datagram, rtt pairs) to stream KEYS[1]
// and, when ARGV[1] is not empty, the end entry with status ARGV[1] and
// ttl ARGV[2], and sets the lifetime ARGV[3] (ms); unless the entry is gone
// (it outlived its hold).
var publishScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 4, #ARGV, 2 do
  redis.call('XADD', KEYS[1], '*', 'd', ARGV[i], 'r', ARGV[i + 1])
end
if ARGV[1] ~= '' then
  redis.call('XADD', KEYS[1], '*', 'e', ARGV[1], 't', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
`)

// Claim implements shared.Cache.
func (s *Store) Claim(ctx context.Context, key string, hold time.Duration, charge []shared.Bucket) (shared.Claim, error) {
	keys := make([]string, 1, 1+len(charge))
	keys[0] = s.prefix + "r:" + key
	args := make([]any, 1, 1+3*len(charge))
	args[0] = max(hold.Milliseconds(), 1)
	for _, b := range charge {
		keys = append(keys, s.prefix+"b:"+b.Key)
		args = append(args, strconv.FormatFloat(b.Rate.PerSecond, 'g', -1, 64), b.Rate.Burst, max(b.Keep, 0))
	}
	v, err := claimScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return shared.Claim{}, err
	}
	bad := errors.New("redisstore: claim: unexpected reply")
	if len(v) == 0 {
		return shared.Claim{}, bad
	}
	switch kind, _ := v[0].(int64); {
	case kind == 1:
		return shared.Claim{Owner: true, Refused: -1}, nil
	case kind == 2 && len(v) == 2:
		i, _ := v[1].(int64)
		return shared.Claim{Refused: int(i)}, nil
	case kind != 0 || len(v) != 3:
		return shared.Claim{}, bad
	}
	raw, _ := v[1].([]any)
	e := shared.Entry{Cursor: "0-0"}
	if err := s.decode(&e, raw); err != nil {
		return shared.Claim{}, err
	}
	if pttl, ok := v[2].(int64); ok && e.Status == shared.Done && pttl > 0 {
		e.TTL = time.Duration(pttl) * time.Millisecond
	}
	return shared.Claim{Refused: -1, Entry: e}, nil
}

// decode appends the stream entries in raw (XRANGE's reply) to e.
func (s *Store) decode(e *shared.Entry, raw []any) error {
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
func addEntry(e *shared.Entry, id string, kv []string) error {
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
		e.Replies = append(e.Replies, shared.Reply{Data: []byte(kv[1]), RTT: uint32(rtt)})
	case "e":
		st, err := strconv.ParseUint(kv[1], 10, 8)
		if err != nil {
			return errors.New("redisstore: stream entry " + id + ": bad status " + strconv.Quote(kv[1]))
		}
		e.Status = shared.Status(st)
		if len(kv) >= 4 && kv[2] == "t" {
			ms, _ := strconv.ParseInt(kv[3], 10, 64)
			e.TTL = time.Duration(ms) * time.Millisecond
		}
	default:
		return errors.New("redisstore: stream entry " + id + ": unknown field " + strconv.Quote(kv[0]))
	}
	return nil
}

// Publish implements shared.Cache.
func (s *Store) Publish(ctx context.Context, key string, p shared.Publish) error {
	args := make([]any, 3, 3+2*len(p.Replies))
	args[0], args[1], args[2] = "", "0", "1"
	if p.End {
		life := p.TTL
		if p.Status != shared.Done || p.TTL <= 0 {
			life = endLinger
		}
		args[0] = strconv.Itoa(int(p.Status))
		args[1] = strconv.FormatInt(p.TTL.Milliseconds(), 10)
		args[2] = strconv.FormatInt(max(life.Milliseconds(), 1), 10)
	}
	for _, r := range p.Replies {
		args = append(args, r.Data, strconv.FormatUint(uint64(r.RTT), 10))
	}
	return publishScript.Run(ctx, s.rdb, []string{s.prefix + "r:" + key}, args...).Err()
}

// Wait implements shared.Cache with XREAD BLOCK until ctx's deadline.
func (s *Store) Wait(ctx context.Context, key, cursor string) (shared.Entry, error) {
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
		return shared.Entry{}, context.DeadlineExceeded
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.Add(blockGrace))
	defer cancel()
	res, err := s.rdb.XRead(rctx, &redis.XReadArgs{
		Streams: []string{s.prefix + "r:" + key, cursor}, Block: block, Count: 128,
	}).Result()
	e := shared.Entry{Cursor: cursor}
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
// holds rate (tokens/s), burst and keep per key. It returns the 0-based
// index of the first bucket without a token beyond its keep, or -1.
var takeScript = redis.NewScript(bucketLua + `return takeAll(1, 1)`)

// leaseScript takes up to ARGV[3] tokens from bucket KEYS[1] (rate ARGV[1],
// burst ARGV[2]) and returns how many it took.
var leaseScript = redis.NewScript(bucketLua + `
local now = clock()
local rate = tonumber(ARGV[1])
local u = refill(KEYS[1], now, rate)
local n = math.min(math.floor(tonumber(ARGV[2]) - u), tonumber(ARGV[3]))
if n < 1 then return 0 end
store(KEYS[1], now, rate, u + n)
return n
`)

// Lease implements shared.Limiter.
func (s *Store) Lease(ctx context.Context, b shared.Bucket, n int) (int, error) {
	if n < 1 {
		return 0, errors.New("redisstore: lease of " + strconv.Itoa(n) + " tokens")
	}
	return leaseScript.Run(ctx, s.rdb, []string{s.prefix + "b:" + b.Key},
		strconv.FormatFloat(b.Rate.PerSecond, 'g', -1, 64), b.Rate.Burst, n).Int()
}

// Take implements shared.Limiter.
func (s *Store) Take(ctx context.Context, buckets []shared.Bucket) (int, error) {
	keys := make([]string, len(buckets))
	args := make([]any, 0, 3*len(buckets))
	for i, b := range buckets {
		keys[i] = s.prefix + "b:" + b.Key
		args = append(args, strconv.FormatFloat(b.Rate.PerSecond, 'g', -1, 64), b.Rate.Burst, max(b.Keep, 0))
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

// slogLogger passes the Redis client's own messages (dial failures and
// the like, printf-style) to a slog.Logger at Debug: the relay already
// logs each outage once, at Warn, with the error.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Printf(ctx context.Context, format string, v ...any) {
	s.l.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// SetLogger sends the Redis client's messages, which it otherwise prints to
// standard error, to l at Debug level. It applies to the whole process.
func SetLogger(l *slog.Logger) { redis.SetLogger(slogLogger{l}) }
