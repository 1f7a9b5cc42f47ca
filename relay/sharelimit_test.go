package relay

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// TestTargetBudgetsShared: the per-host and per-target budgets are shared
// between the clients asking, as the upstream slots are. Two clients that
// each stay within their own limits (40 queries/s each, IPRate) but
// together ask a host (or one target) faster than its budget take only
// their shares of it; a third client that asks within its share (once a
// second of a host's 20/s, once every 2 s of a target's 2/s) keeps
// getting through once the pair has asked for 5 s. On a fake clock, for
// 25 s; every exchange ends at once.
func TestTargetBudgetsShared(t *testing.T) {
	for _, tc := range []struct {
		name         string
		target, host shared.Rate
		greedy       time.Duration // mean interval between each greedy client's asks
		third        time.Duration // interval between the third client's asks, within its share
		port         func(i int) uint16
	}{
		{
			name: "per-target-host", target: shared.Rate{PerSecond: 1e6, Burst: 1e6}, host: DefaultTargetHostRate,
			greedy: time.Second / 40, third: time.Second, port: func(i int) uint16 { return uint16(20000 + i%1000) }, // silent ports of one host
		},
		{
			name: "per-target", target: DefaultTargetRate, host: shared.Rate{PerSecond: 1e6, Burst: 1e6},
			// 2/s between three clients: the third's share is 0.67/s.
			greedy: time.Second / 4, third: 2 * time.Second, port: func(int) uint16 { return 10666 },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.TargetRate, cfg.TargetHostRate = tc.target, tc.host
			clock := newFakeClock()
			cfg.Clock = clock.now
			s := New(cfg, nil)
			host := netip.MustParseAddr("127.0.0.7")
			ask := func(client netip.Addr, i int) bool {
				_, rule := s.upstream.reserve(client, netip.AddrPortFrom(host, tc.port(i)))
				if rule == "" {
					s.upstream.release(client)
					return true
				}
				if rule != wire.RulePerTarget && rule != wire.RulePerTargetHost {
					t.Fatalf("refused by %s", rule)
				}
				return false
			}
			a, b, c := simKey(1), simKey(2), simKey(3)
			const step = time.Second / 1000
			var greedyOK, greedyAsked, ok, asked int
			// The greedy clients ask at random moments (a fixed seed), on
			// average once every tc.greedy each.
			rng := rand.New(rand.NewPCG(1, 2))
			for at := time.Duration(0); at < 25*time.Second; at += step {
				for _, k := range []netip.Addr{a, b} {
					if rng.Float64() < float64(step)/float64(tc.greedy) {
						greedyAsked++
						if ask(k, greedyAsked) {
							greedyOK++
						}
					}
				}
				if at >= 5*time.Second && at%tc.third == 512*time.Millisecond {
					asked++
					if ask(c, int(at/time.Millisecond)) {
						ok++
					}
				}
				clock.advance(step)
			}
			budget := tc.host
			if tc.target.PerSecond < budget.PerSecond {
				budget = tc.target
			}
			t.Logf("third client %d/%d; greedy pair %d/%d", ok, asked, greedyOK, greedyAsked)
			if ok*100 < asked*95 {
				t.Errorf("the third client got %d of %d through, want >= 95%%", ok, asked)
			}
			if max := int(25*budget.PerSecond) + budget.Burst; ok+greedyOK > max {
				t.Errorf("%d queries went through, the budget allows %d", ok+greedyOK, max)
			}
		})
	}
}

// recordingLimiter is a shared.Limiter that grants everything and records
// the buckets it was asked to charge.
type recordingLimiter struct {
	mu      sync.Mutex
	charged [][]shared.Bucket
}

func (r *recordingLimiter) Name() string { return "recording" }

func (r *recordingLimiter) Ping(ctx context.Context) error { return nil }

func (r *recordingLimiter) Take(ctx context.Context, b []shared.Bucket) (int, error) {
	r.mu.Lock()
	r.charged = append(r.charged, append([]shared.Bucket(nil), b...))
	r.mu.Unlock()
	return -1, nil
}

func (r *recordingLimiter) Lease(ctx context.Context, b shared.Bucket, n int) (int, error) {
	return n, nil
}

// TestSharedTargetBudgetsKeep: with a shared limiter, the per-target and
// per-host buckets are shared between clients across relays the way they
// are in one: a client that asks a host more often than its share charges
// the shared bucket with half of it kept for the others; a client within
// its share charges it plainly.
func TestSharedTargetBudgetsKeep(t *testing.T) {
	cfg := testConfig()
	cfg.TargetRate, cfg.TargetHostRate = DefaultTargetRate, DefaultTargetHostRate
	clock := newFakeClock()
	cfg.Clock = clock.now
	rec := &recordingLimiter{}
	cfg.SharedLimiter = rec
	s := New(cfg, nil)
	host := netip.MustParseAddr("127.0.0.7")
	greedy, light := simKey(1), simKey(2)
	// The greedy client asks a port a millisecond for a second; the light
	// one, once.
	for i := range 1000 {
		s.upstream.reserve(greedy, netip.AddrPortFrom(host, uint16(20000+i)))
		s.upstream.release(greedy)
		clock.advance(time.Millisecond)
	}
	s.upstream.reserve(light, netip.AddrPortFrom(host, 10666))
	s.upstream.release(light)
	keep := func(client netip.Addr, port uint16) []int {
		var ks []int
		for _, b := range s.targetBuckets(netip.AddrPortFrom(host, port), client) {
			ks = append(ks, b.Keep)
		}
		return ks
	}
	if got := keep(greedy, 20999); len(got) != 2 || got[1] != DefaultTargetHostRate.Burst/2 {
		t.Errorf("greedy client's buckets keep %v, want the host's half (%d) kept", got, DefaultTargetHostRate.Burst/2)
	}
	if got := keep(light, 10666); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Errorf("light client's buckets keep %v, want none", got)
	}
}
