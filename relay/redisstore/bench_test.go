package redisstore

import (
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/internal/testredis"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/client"
	"github.com/querylens/querylens/relay/shared"
)

func percentile(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// wsRelay serves s over a loopback WebSocket and dials it.
func wsRelay(b *testing.B, ctx context.Context, s *relay.Server) *client.Client {
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close)
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func ask(b *testing.B, ctx context.Context, c *client.Client, target, tag string) time.Duration {
	d, _ := askCached(b, ctx, c, target, tag)
	return d
}

func askCached(b *testing.B, ctx context.Context, c *client.Client, target, tag string) (time.Duration, bool) {
	q, _ := sharedCodec{}.NewQuery(map[string]string{"tag": tag})
	start := time.Now()
	res, err := c.Exchange(ctx, sharedProto, target, q)
	d := time.Since(start)
	if err != nil || !res.Done {
		b.Fatalf("query %s: done=%v err=%v", tag, res.Done, err)
	}
	return d, res.FromCache
}

// BenchmarkSharedRTT measures one query and its reply through a relay over
// a loopback WebSocket, alternating in one loop: a cache hit in an
// in-process relay (the baseline); a cache hit on a relay with Redis (its
// local cache answers, the client's tokens come from its lease); a hit in
// the shared cache only, on a relay with Redis that has not seen the entry
// itself (another relay fetched it: one round trip to Redis); and cache
// misses on both.
func BenchmarkSharedRTT(b *testing.B) {
	srv := testredis.Start(b)
	st, err := Open(srv.URL(), Options{Prefix: "bench" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	up := newResponder(b, 0)
	mod := func(c *relay.Config) {
		c.TargetRate = shared.Rate{PerSecond: 1e6, Burst: 1e6}
		c.TargetHostRate, c.IPRate, c.ConnRate = c.TargetRate, c.TargetRate, c.TargetRate
	}
	local := wsRelay(b, ctx, newRelay(b, nil, mod))
	filler := newRelay(b, st, mod) // fetches the entries the shared relay then hits
	shared := wsRelay(b, ctx, newRelay(b, st, mod))
	ask(b, ctx, local, up.addr(), "hot")
	ask(b, ctx, shared, up.addr(), "hot")
	// Let both exchanges settle into their caches: a query that arrives
	// while its predecessor's exchange is still stopping starts afresh.
	time.Sleep(100 * time.Millisecond)
	var hit, redisHit, sharedHit, miss, sharedMiss []time.Duration
	fill := func(i int) {
		q, _ := sharedCodec{}.NewQuery(map[string]string{"tag": "h" + strconv.Itoa(i)})
		if _, err := filler.Exchange(ctx, sharedProto, up.addr(), q); err != nil {
			b.Fatal(err)
		}
	}
	var notHits int
	expectHit := func(d time.Duration, cached bool) time.Duration {
		if !cached {
			notHits++
		}
		return d
	}
	fill(1)
	i := 0
	for b.Loop() {
		i++
		// The entry for the shared hit was fetched by the other relay one
		// iteration earlier, so it is complete. The five measurements run
		// in a random order: a query right after a miss pays for that
		// miss's clean-up (its exchange stopping), so a fixed order would
		// charge it to whichever comes next.
		fill(i + 1)
		tag := strconv.Itoa(i)
		steps := []func(){
			func() { hit = append(hit, expectHit(askCached(b, ctx, local, up.addr(), "hot"))) },
			func() { redisHit = append(redisHit, expectHit(askCached(b, ctx, shared, up.addr(), "hot"))) },
			func() { sharedHit = append(sharedHit, expectHit(askCached(b, ctx, shared, up.addr(), "h"+tag))) },
			func() { miss = append(miss, ask(b, ctx, local, up.addr(), "m"+tag)) },
			func() { sharedMiss = append(sharedMiss, ask(b, ctx, shared, up.addr(), "m"+tag+"r")) },
		}
		for _, j := range rand.Perm(len(steps)) {
			steps[j]()
		}
	}
	h50, s50 := percentile(hit, 0.5), percentile(sharedHit, 0.5)
	m50, sm50 := percentile(miss, 0.5), percentile(sharedMiss, 0.5)
	b.ReportMetric(float64(notHits), "hits-missed")
	b.ReportMetric(us(h50), "hit-p50-µs")
	b.ReportMetric(us(percentile(redisHit, 0.5)), "redis-hit-p50-µs")
	b.ReportMetric(us(percentile(redisHit, 0.5))/us(h50), "redis-hit/hit")
	b.ReportMetric(us(s50), "shared-hit-p50-µs")
	b.ReportMetric(us(s50)/us(h50), "shared-hit/hit")
	b.ReportMetric(us(m50), "miss-p50-µs")
	b.ReportMetric(us(sm50), "shared-miss-p50-µs")
	b.ReportMetric(us(sm50-m50), "added-miss-p50-µs")
}

// BenchmarkSharedThroughput pushes cache misses (every query new) through
// one relay from 8 WebSocket clients with 16 queries open each, in process
// and with Redis, and reports queries per second.
func BenchmarkSharedThroughput(b *testing.B) {
	srv := testredis.Start(b)
	st, err := Open(srv.URL(), Options{Prefix: "bench" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, mode := range []string{"in-process", "redis"} {
		b.Run(mode, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			up := newResponder(b, 0)
			var store *Store
			if mode == "redis" {
				store = st
			}
			s := newRelay(b, store, func(c *relay.Config) {
				c.TargetRate = shared.Rate{PerSecond: 1e6, Burst: 1e6}
				c.TargetHostRate = c.TargetRate
				c.IPRate = c.TargetRate
				c.ConnRate = c.TargetRate
				c.MaxUpstream = 4096
			})
			const conns, window = 8, 16
			clients := make([]*client.Client, conns)
			for i := range clients {
				clients[i] = wsRelay(b, ctx, s)
			}
			var issued atomic.Int64
			run := strconv.FormatInt(time.Now().UnixNano(), 36)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for ci, c := range clients {
				for w := range window {
					wg.Go(func() {
						for {
							n := issued.Add(1)
							if n > int64(b.N) {
								return
							}
							ask(b, ctx, c, up.addr(), run+"."+strconv.Itoa(ci)+"."+strconv.Itoa(w)+"."+strconv.FormatInt(n, 10))
						}
					})
				}
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "queries/s")
		})
	}
}

// BenchmarkUpstreamQueries runs 1, 2 and 3 relays sharing one Redis; 4
// clients per relay ask the same 8 servers over and over for 2 s with a
// 500 ms cache TTL. It reports the queries the servers received, which
// should be one per server per TTL whatever the number of relays (8 × 4 =
// 32, give or take one period at the edges). Run it with -benchtime 1x.
func BenchmarkUpstreamQueries(b *testing.B) {
	srv := testredis.Start(b)
	for _, n := range []int{1, 2, 3} {
		b.Run("instances="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				st, err := Open(srv.URL(), Options{Prefix: "up" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"})
				if err != nil {
					b.Fatal(err)
				}
				servers := make([]*responder, 8)
				for i := range servers {
					servers[i] = newResponder(b, 0)
				}
				var relays []*relay.Server
				for range n {
					relays = append(relays, newRelay(b, st, func(c *relay.Config) { c.CacheTTL = 500 * time.Millisecond }))
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				var asked atomic.Int64
				var wg sync.WaitGroup
				deadline := time.Now().Add(2 * time.Second)
				for _, r := range relays {
					for range 4 {
						wg.Go(func() {
							for i := 0; time.Now().Before(deadline); i++ {
								q, _ := sharedCodec{}.NewQuery(map[string]string{"tag": "s"})
								if _, err := r.Exchange(ctx, sharedProto, servers[i%len(servers)].addr(), q); err != nil {
									b.Error(err)
									return
								}
								asked.Add(1)
								time.Sleep(5 * time.Millisecond)
							}
						})
					}
				}
				wg.Wait()
				cancel()
				var total int64
				for _, s := range servers {
					total += s.count.Load()
				}
				b.ReportMetric(float64(total), "upstream-queries")
				b.ReportMetric(float64(asked.Load()), "client-queries")
				st.Close()
			}
		})
	}
}
