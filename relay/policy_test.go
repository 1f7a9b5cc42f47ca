package relay

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// TestPolicyCheck decides on every refused range without sending anything.
func TestPolicyCheck(t *testing.T) {
	p := NewPolicy(nil, nil)
	cases := []struct {
		addr string
		rule wire.Rule // "" means allowed
	}{
		// Public unicast passes.
		{"1.1.1.1:10666", ""},
		{"8.8.8.8:27960", ""},
		{"100.63.255.255:10666", ""},
		{"100.128.0.0:10666", ""},
		{"172.32.0.1:10666", ""},
		{"[2a00:1450:4001::1]:10666", ""},
		{"[2606:4700::1111]:10666", ""},
		// IPv4 special ranges.
		{"0.0.0.0:10666", wire.RuleUnspecified},
		{"0.1.2.3:10666", wire.RuleUnspecified},
		{"10.0.0.1:10666", wire.RulePrivate},
		{"10.255.255.255:10666", wire.RulePrivate},
		{"100.64.0.1:10666", wire.RuleCGNAT},
		{"100.127.255.254:10666", wire.RuleCGNAT},
		{"127.0.0.1:10666", wire.RuleLoopback},
		{"127.255.0.9:10666", wire.RuleLoopback},
		{"169.254.169.254:10666", wire.RuleLinkLocal},
		{"172.16.0.1:10666", wire.RulePrivate},
		{"172.31.255.255:10666", wire.RulePrivate},
		{"192.0.0.170:10666", wire.RuleReserved},
		{"192.0.2.1:10666", wire.RuleDocumentation},
		{"192.88.99.1:10666", wire.Rule6to4},
		{"192.168.1.1:10666", wire.RulePrivate},
		{"198.18.0.1:10666", wire.RuleBenchmarking},
		{"198.19.255.255:10666", wire.RuleBenchmarking},
		{"198.51.100.7:10666", wire.RuleDocumentation},
		{"203.0.113.9:10666", wire.RuleDocumentation},
		{"224.0.0.1:10666", wire.RuleMulticast},
		{"239.255.255.250:10666", wire.RuleMulticast},
		{"240.0.0.1:10666", wire.RuleReserved},
		{"255.255.255.255:10666", wire.RuleBroadcast},
		// IPv6 special ranges.
		{"[::]:10666", wire.RuleUnspecified},
		{"[::1]:10666", wire.RuleLoopback},
		{"[::ffff:1.1.1.1]:10666", wire.RuleV4Mapped},
		{"[::ffff:127.0.0.1]:10666", wire.RuleV4Mapped},
		{"[::ffff:0:10.0.0.1]:10666", wire.RuleV4Mapped},
		{"[::10.0.0.1]:10666", wire.RuleV4Compatible},
		{"[64:ff9b::a00:1]:10666", wire.RuleNAT64},
		{"[64:ff9b::101:101]:10666", wire.RuleNAT64},
		{"[64:ff9b:1::1]:10666", wire.RuleNAT64},
		{"[100::1]:10666", wire.RuleDiscard},
		{"[2001::1]:10666", wire.RuleTeredo},
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:10666", wire.RuleTeredo},
		{"[2001:2::1]:10666", wire.RuleBenchmarking},
		{"[2001:10::1]:10666", wire.RuleReserved},
		{"[2001:db8::1]:10666", wire.RuleDocumentation},
		{"[2002:a00:1::1]:10666", wire.Rule6to4},
		{"[3fff::1]:10666", wire.RuleDocumentation},
		{"[fc00::1]:10666", wire.RuleUniqueLocal},
		{"[fd12:3456::1]:10666", wire.RuleUniqueLocal},
		{"[fe80::1]:10666", wire.RuleLinkLocal},
		{"[fec0::1]:10666", wire.RuleSiteLocal},
		{"[ff02::1]:10666", wire.RuleMulticast},
		{"[4000::1]:10666", wire.RuleReserved},
		{"[5f00::1]:10666", wire.RuleReserved},
		// Ports.
		{"1.1.1.1:0", wire.RulePortZero},
		{"1.1.1.1:1", wire.RuleWellKnownPort},
		{"1.1.1.1:53", wire.RuleWellKnownPort},
		{"1.1.1.1:1023", wire.RuleWellKnownPort},
		{"1.1.1.1:1024", ""},
		{"1.1.1.1:65535", ""},
		// The address rule wins over the port rule.
		{"10.0.0.1:53", wire.RulePrivate},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			checkRule(t, p, netip.MustParseAddrPort(tc.addr), tc.rule)
		})
	}
	t.Run("zoned", func(t *testing.T) {
		a := netip.AddrPortFrom(netip.MustParseAddr("fe80::1%eth0"), 10666)
		checkRule(t, p, a, wire.RuleZoned)
	})
	t.Run("invalid", func(t *testing.T) { checkRule(t, p, netip.AddrPort{}, wire.RuleInvalid) })
}

func checkRule(t *testing.T, p *Policy, a netip.AddrPort, rule wire.Rule) {
	t.Helper()
	err := p.Check(a)
	if rule == "" {
		if err != nil {
			t.Fatalf("Check(%v) = %v, want allowed", a, err)
		}
		return
	}
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Rule != rule {
		t.Fatalf("Check(%v) = %v, want rule %s", a, err, rule)
	}
}

func TestPolicyAllow(t *testing.T) {
	p := NewPolicy([]netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("192.168.1.0/24"),
		netip.MustParsePrefix("fd00::1/128"),
	}, []uint16{53, 80})
	cases := []struct {
		addr string
		rule wire.Rule
	}{
		{"127.0.0.1:10666", ""},
		{"127.8.9.10:10666", ""},
		{"192.168.1.20:10666", ""},
		{"192.168.2.20:10666", wire.RulePrivate},
		{"[fd00::1]:10666", ""},
		{"[fd00::2]:10666", wire.RuleUniqueLocal},
		// Allowing 127/8 does not allow its IPv6 spellings.
		{"[::ffff:127.0.0.1]:10666", wire.RuleV4Mapped},
		{"[::1]:10666", wire.RuleLoopback},
		{"1.1.1.1:53", ""},
		{"1.1.1.1:80", ""},
		{"1.1.1.1:443", wire.RuleWellKnownPort},
		{"127.0.0.1:0", wire.RulePortZero},
		{"127.0.0.1:443", wire.RuleWellKnownPort},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			checkRule(t, p, netip.MustParseAddrPort(tc.addr), tc.rule)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	bad := []struct {
		name string
		cfg  Config
	}{
		{"star origin", Config{OriginPatterns: []string{"*"}}},
		{"star scheme origin", Config{OriginPatterns: []string{"https://*"}}},
		{"stars and dots origin", Config{OriginPatterns: []string{"*.*"}}},
		{"bad origin pattern", Config{OriginPatterns: []string{"[x"}}},
		{"port 0", Config{AllowPorts: []uint16{0}}},
		{"invalid prefix", Config{AllowTargets: []netip.Prefix{{}}}},
		{"tiny datagram", Config{MaxDatagram: 10}},
		{"huge datagram", Config{MaxDatagram: 70000}},
		{"negative window", Config{ReplyWindow: -time.Second}},
		{"negative conns", Config{MaxConns: -1}},
		{"bad rate", Config{ConnRate: Rate{PerSecond: 1}}},
		{"queue too small", Config{QueueBytes: 100}},
		{"in flight too large", Config{MaxInFlight: 70000}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); err == nil {
				t.Fatal("Validate accepted it")
			}
		})
	}
	if err := (Config{OriginPatterns: []string{"*.example.com", "https://play.example.org"}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestClientIP(t *testing.T) {
	s := New(Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, nil)
	cases := []struct {
		remote, xff, want string
	}{
		{"203.0.113.5:4000", "", "203.0.113.5"},
		{"203.0.113.5:4000", "1.2.3.4", "203.0.113.5"}, // untrusted peer: header ignored
		{"10.0.0.2:4000", "1.2.3.4", "1.2.3.4"},
		{"10.0.0.2:4000", "6.6.6.6, 1.2.3.4, 10.0.0.9", "1.2.3.4"}, // rightmost untrusted hop
		{"10.0.0.2:4000", "1.2.3.4:5678", "1.2.3.4"},
		{"10.0.0.2:4000", "[2001:db8::5]:5678", "2001:db8::5"},
		{"10.0.0.2:4000", "[::ffff:1.2.3.4]:5678", "1.2.3.4"},
		{"10.0.0.2:4000", "garbage", "refused"}, // never the proxy's own address
		{"10.0.0.2:4000", "1.2.3.4, unknown", "refused"},
		{"10.0.0.2:4000", "unknown, 1.2.3.4", "1.2.3.4"}, // left of the client: not read
		{"10.0.0.2:4000", "", "10.0.0.2"},                // no header: the proxy is the client
		{"[::ffff:203.0.113.5]:4000", "", "203.0.113.5"},
		{"not an address", "", "invalid IP"},
	}
	for _, tc := range cases {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		ip, err := s.clientIP(r)
		got := ip.String()
		if err != nil {
			got = "refused"
		}
		if got != tc.want {
			t.Errorf("clientIP(%s, %q) = %s, want %s", tc.remote, tc.xff, got, tc.want)
		}
	}
	if k := clientKey(netip.MustParseAddr("2001:db8:1:2:3:4:5:6")); k.String() != "2001:db8:1:2::" {
		t.Errorf("clientKey = %v, want the /64", k)
	}
}

func TestLimiter(t *testing.T) {
	r := Rate{PerSecond: 10, Burst: 3}
	var b bucket
	for i := range 3 {
		if !b.allow(0, r) {
			t.Fatalf("token %d refused", i)
		}
	}
	if b.allow(0, r) {
		t.Fatal("burst exceeded")
	}
	if !b.allow(100*time.Millisecond, r) || b.allow(100*time.Millisecond, r) {
		t.Fatal("one token should come back after 100 ms")
	}
	l := newLimiter[int](r, 2)
	if !l.allow(1, 0) || !l.allow(2, 0) {
		t.Fatal("fresh keys refused")
	}
	if l.allow(3, 0) {
		t.Fatal("a full table of busy buckets must refuse new keys")
	}
	if !l.allow(3, time.Second) || l.len() > 2 {
		t.Fatalf("refilled buckets should be forgotten (len %d)", l.len())
	}
}

// countingResolver counts lookups and holds them until release closes.
type countingResolver struct {
	calls   atomic.Int64
	release chan struct{}
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	select {
	case <-r.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if host == "bad.test" {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
}

// TestResolverShares checks that concurrent lookups of one name make one
// query, that answers and failures are kept for a while, and that a
// waiter's context bounds only its own wait.
func TestResolverShares(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cr := &countingResolver{release: make(chan struct{})}
	rs := resolver{r: cr, timeout: time.Second, wg: new(sync.WaitGroup)}
	defer rs.wg.Wait()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if a, err := rs.lookup(ctx, "game.test"); err != nil || len(a) != 1 {
				t.Errorf("lookup: %v %v", a, err)
			}
		})
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := rs.lookup(short, "game.test"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter with a short context: %v", err)
	}
	close(cr.release)
	wg.Wait()
	rs.lookup(ctx, "game.test")
	if n := cr.calls.Load(); n != 1 {
		t.Fatalf("%d lookups, want 1", n)
	}
	for range 2 {
		if _, err := rs.lookup(ctx, "bad.test"); err == nil {
			t.Fatal("failure not reported")
		}
	}
	if n := cr.calls.Load(); n != 2 {
		t.Fatalf("%d lookups, want the failure kept too", n)
	}
}
