package shared

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	k := Key("zandronum\x00192.0.2.1:10666\x00\x01\x02")
	if len(k) != 24 || k != Key("zandronum\x00192.0.2.1:10666\x00\x01\x02") || k == Key("zandronum\x00192.0.2.1:10667\x00\x01\x02") {
		t.Errorf("Key = %q: want 24 URL-safe characters, the same for the same key, not for another", k)
	}
}

func TestTargetBuckets(t *testing.T) {
	target := netip.MustParseAddrPort("192.0.2.1:10666")
	tr, hr := Rate{PerSecond: 2, Burst: 16}, Rate{PerSecond: 20, Burst: 40}
	for _, tc := range []struct {
		greedyTarget, greedyHost bool
		keep                     [2]int
	}{{false, false, [2]int{0, 0}}, {true, false, [2]int{8, 0}}, {false, true, [2]int{0, 20}}, {true, true, [2]int{8, 20}}} {
		bs := TargetBuckets(target, tr, hr, tc.greedyTarget, tc.greedyHost)
		want := []Bucket{{Key: "t:192.0.2.1:10666", Rate: tr, Keep: tc.keep[0]}, {Key: "h:192.0.2.1", Rate: hr, Keep: tc.keep[1]}}
		if !slices.Equal(bs, want) {
			t.Errorf("greedy %v/%v: %+v, want %+v", tc.greedyTarget, tc.greedyHost, bs, want)
		}
	}
}

func TestTake(t *testing.T) {
	charge := []Bucket{{Key: "t:x"}, {Key: "h:x"}}
	f := newFake()
	s, _ := newStores(t, f)
	calls := 0
	buckets := func() []Bucket { calls++; return charge }
	if i := s.Take(buckets); i != -1 {
		t.Errorf("Take = %d, want -1", i)
	}
	f.refuse = 1
	if i := s.Take(buckets); i != 1 {
		t.Errorf("Take = %d, want 1", i)
	}
	f.takeErr = errBoom
	if i := s.Take(buckets); i != -1 || s.LimitHealth.Usable() {
		t.Errorf("Take = %d with the limiter usable %v, want -1 and down", i, s.LimitHealth.Usable())
	}
	if i := s.Take(buckets); i != -1 || calls != 3 {
		t.Errorf("Take = %d after %d charges, want -1 without charging a limiter that is down", i, calls)
	}
	if i := (&Stores{}).Take(buckets); i != -1 || calls != 3 {
		t.Errorf("Take without a limiter = %d, charged %d, want -1 and none", i, calls)
	}
}

func TestClaim(t *testing.T) {
	charge := []Bucket{{Key: "t:x"}, {Key: "h:x"}}
	entry := Entry{Status: Pending, Replies: []Reply{{Data: []byte("a")}}, Cursor: "1"}
	tests := []struct {
		name        string
		claim       Claim
		err         error
		cacheDown   bool
		limiterDown bool
		want        ClaimResult
		wantCharged bool
		wantEvents  []Event
		wantDown    bool
	}{
		{name: "owner", claim: Claim{Owner: true, Refused: -1}, want: ClaimResult{Kind: ClaimOwner},
			wantCharged: true, wantEvents: []Event{EventOwner}},
		{name: "follow", claim: Claim{Refused: -1, Entry: entry}, want: ClaimResult{Kind: ClaimFollow, Entry: entry},
			wantCharged: true},
		{name: "refused", claim: Claim{Refused: 1}, want: ClaimResult{Kind: ClaimRefused, Refused: 1}, wantCharged: true},
		{name: "refused out of range follows", claim: Claim{Refused: 2, Entry: entry}, want: ClaimResult{Kind: ClaimFollow, Entry: entry},
			wantCharged: true},
		{name: "store fails", err: errBoom, want: ClaimResult{Kind: ClaimLocal}, wantCharged: true,
			wantEvents: []Event{EventLocal}, wantDown: true},
		{name: "cache down", cacheDown: true, want: ClaimResult{Kind: ClaimLocal}, wantEvents: []Event{EventLocal}, wantDown: true},
		{name: "limiter down", limiterDown: true, claim: Claim{Owner: true, Refused: -1}, want: ClaimResult{Kind: ClaimOwner},
			wantEvents: []Event{EventOwner}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.claim, f.claimErr = tc.claim, tc.err
			// The cache and the limiter apart, so that either may be down.
			lim := newFake()
			ev := &events{}
			s := NewStores(f, namedFake{lim}, time.Second, func(string, ...any) {}, ev.count)
			t.Cleanup(s.Close)
			if tc.cacheDown {
				s.CacheHealth.Fail(errBoom)
			}
			if tc.limiterDown {
				s.LimitHealth.Fail(errBoom)
			}
			got := s.Claim("key", time.Second, func() []Bucket { return charge })
			if tc.want.Kind != ClaimLocal {
				tc.want.Key = Key("key")
			}
			if got.Kind != tc.want.Kind || got.Key != tc.want.Key || got.Refused != tc.want.Refused ||
				got.Entry.Cursor != tc.want.Entry.Cursor || len(got.Entry.Replies) != len(tc.want.Entry.Replies) {
				t.Errorf("Claim = %+v, want %+v", got, tc.want)
			}
			charged := len(f.claims) == 1 && len(f.claims[0]) == len(charge)
			if !tc.cacheDown && len(f.claims) != 1 || charged != tc.wantCharged {
				t.Errorf("claims %v, want one, charged %v", f.claims, tc.wantCharged)
			}
			if e := ev.list(); !slices.Equal(e, tc.wantEvents) {
				t.Errorf("counted %v, want %v", e, tc.wantEvents)
			}
			if down := !s.CacheHealth.Usable(); down != tc.wantDown {
				t.Errorf("cache down %v, want %v", down, tc.wantDown)
			}
		})
	}
}

// namedFake is a fakeStore under another name: a second store.
type namedFake struct{ *fakeStore }

func (namedFake) Name() string { return "fake2" }

func TestNewStores(t *testing.T) {
	if s := NewStores(nil, nil, time.Second, nil, nil); s != nil {
		t.Errorf("NewStores(nil, nil) = %v, want nil", s)
	}
	f := newFake()
	s, _ := newStores(t, f)
	if len(s.Deps()) != 1 || s.CacheHealth != s.LimitHealth {
		t.Errorf("one store as cache and limiter tracked as %d", len(s.Deps()))
	}
	s2 := NewStores(f, namedFake{newFake()}, time.Second, nil, nil)
	defer s2.Close()
	if len(s2.Deps()) != 2 {
		t.Errorf("two stores tracked as %d", len(s2.Deps()))
	}
	var none *Stores
	none.Close() // a relay without stores shuts down too
}
