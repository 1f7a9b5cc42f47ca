package shared

import (
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestLeases(t *testing.T) {
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	type step struct {
		client  netip.Addr
		n       int           // Allow calls
		advance time.Duration // before them
	}
	tests := []struct {
		name       string
		burst      int
		tokens     int
		steps      []step
		wantOK     int
		wantLeases []int // n asked at each Lease call
		wantLeft   int   // tokens left in the store
	}{
		{
			name: "spends a lease before asking again", burst: 80, tokens: 25,
			steps: []step{{client: a, n: 26}}, wantOK: 25, wantLeases: []int{10, 10, 10, 10}, wantLeft: 0,
		},
		{
			name: "a lease expires", burst: 80, tokens: 100,
			steps:  []step{{client: a, n: 1}, {client: a, n: 1, advance: leaseTTL}},
			wantOK: 2, wantLeases: []int{10, 10}, wantLeft: 80,
		},
		{
			name: "a lease holds within its time", burst: 80, tokens: 100,
			steps:  []step{{client: a, n: 1}, {client: a, n: 9, advance: leaseTTL - time.Nanosecond}},
			wantOK: 10, wantLeases: []int{10}, wantLeft: 90,
		},
		{
			name: "each client its own", burst: 80, tokens: 100,
			steps:  []step{{client: a, n: 2}, {client: b, n: 2}},
			wantOK: 4, wantLeases: []int{10, 10}, wantLeft: 80,
		},
		{
			name: "at least one", burst: 4, tokens: 3,
			steps: []step{{client: a, n: 4}}, wantOK: 3, wantLeases: []int{1, 1, 1, 1}, wantLeft: 0,
		},
		{
			name: "at most maxLease", burst: 1000, tokens: 1000,
			steps: []step{{client: a, n: 1}}, wantOK: 1, wantLeases: []int{maxLease}, wantLeft: 1000 - maxLease,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.tokens = tc.tokens
			s, _ := newStores(t, f)
			clock := &fakeClock{t: time.Unix(1e9, 0)}
			rate := Rate{PerSecond: 1, Burst: tc.burst}
			l := s.NewLeases(rate, clock.now)
			ok := 0
			for _, st := range tc.steps {
				clock.advance(st.advance)
				for range st.n {
					if l.Allow(st.client) {
						ok++
					}
				}
			}
			if ok != tc.wantOK {
				t.Errorf("%d allowed, want %d", ok, tc.wantOK)
			}
			var ns []int
			for _, c := range f.leases {
				ns = append(ns, c.n)
				if c.b.Rate != rate || c.b.Keep != 0 || (c.b.Key != "ip:"+a.String() && c.b.Key != "ip:"+b.String()) {
					t.Errorf("leased from %+v, want ip:<client> at %+v", c.b, rate)
				}
			}
			if !slices.Equal(ns, tc.wantLeases) {
				t.Errorf("leases asked for %v, want %v", ns, tc.wantLeases)
			}
			if f.tokens != tc.wantLeft {
				t.Errorf("%d tokens left, want %d", f.tokens, tc.wantLeft)
			}
		})
	}
}

// TestLeasesStoreFails: a failing limiter allows (the local bucket holds
// the line) and is marked down; while it is down, nothing is asked.
func TestLeasesStoreFails(t *testing.T) {
	f := newFake()
	f.leaseErr = errBoom
	s, _ := newStores(t, f)
	l := s.NewLeases(Rate{PerSecond: 1, Burst: 8}, time.Now)
	c := netip.MustParseAddr("192.0.2.1")
	for i := range 2 {
		if !l.Allow(c) {
			t.Errorf("query %d refused with the limiter failing, want allowed", i)
		}
	}
	if s.LimitHealth.Usable() || len(f.leases) != 1 {
		t.Errorf("limiter usable %v after %d lease calls, want down after 1", s.LimitHealth.Usable(), len(f.leases))
	}
	if ls := (&Stores{}).NewLeases(Rate{Burst: 1}, time.Now); !ls.Allow(c) {
		t.Error("refused without a limiter, want allowed")
	}
}
