package relay

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// leakyResolver fails the way real resolvers do, with messages that name
// the internal DNS server. Nothing reaches real DNS.
type leakyResolver struct{}

func (leakyResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	switch host {
	case "missing.test":
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.53.0.2:53", IsNotFound: true}
	case "slow.test":
		return nil, &net.DNSError{Err: "i/o timeout", Name: host, Server: "10.53.0.2:53", IsTimeout: true}
	case "broken.test":
		return nil, errors.New("dial udp 10.53.0.2:53: connect: connection refused")
	case "empty.test":
		return nil, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestResolveErrorsHideResolver checks that a failed lookup tells the
// client which name did not resolve, and nothing about the resolver.
func TestResolveErrorsHideResolver(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.Resolver = leakyResolver{}
	f, ex := exchangers(t, ctx, cfg)
	for _, tc := range []struct{ name, want string }{
		{"missing.test", "resolve: could not resolve missing.test (no such host)"},
		{"slow.test", "resolve: could not resolve slow.test (timed out)"},
		{"broken.test", "resolve: could not resolve broken.test"},
		{"empty.test", "resolve: could not resolve empty.test (no address)"},
	} {
		for via, x := range ex {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				_, err := x.Exchange(ctx, testProto, tc.name+":10666", &testQuery{tag: via})
				var re *wire.RefusedError
				if !errors.As(err, &re) || re.Code != wire.CodeResolve || re.Message != tc.want {
					t.Fatalf("got %v, want code %v message %q", err, wire.CodeResolve, tc.want)
				}
			})
		}
	}
	if got := f.metric(`querylens_relay_refusals_total{rule="resolve"}`); got != 8 {
		t.Fatalf("resolve refusals %v, want 8", got)
	}
}

// TestAdmissionSameForEveryPath checks that the WebSocket path and the
// in-process Exchange refuse the same targets with the same rule: both
// take one admission pipeline. Nothing is sent for a refused target.
func TestAdmissionSameForEveryPath(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	r := newResponder(t, echoReply)
	p := strconv.Itoa(int(netip.MustParseAddrPort(r.addr).Port()))
	cfg := testConfig()
	cfg.AllowTargets = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	cfg.Resolver = fakeResolver{"private.test": {netip.MustParseAddr("10.1.2.3")}}
	_, ex := exchangers(t, ctx, cfg)
	cases := []struct {
		target string
		code   wire.Code
		rule   wire.Rule
	}{
		{"[::ffff:127.0.0.1]:" + p, wire.CodeDenied, wire.RuleV4Mapped},
		{"[::ffff:7f00:1]:" + p, wire.CodeDenied, wire.RuleV4Mapped},
		{"[::127.0.0.1]:" + p, wire.CodeDenied, wire.RuleV4Compatible},
		{"[64:ff9b::7f00:1]:" + p, wire.CodeDenied, wire.RuleNAT64},
		{"127.0.0.2:" + p, wire.CodeDenied, wire.RuleLoopback},
		{"127.0.0.1:0", wire.CodeDenied, wire.RulePortZero},
		{"127.0.0.1:0" + p, wire.CodeBadFrame, "target"},
		{"127.1:" + p, wire.CodeBadFrame, "target"},
		{"private.test:" + p, wire.CodeResolve, wire.RulePrivate},
	}
	for _, tc := range cases {
		for via, x := range ex {
			t.Run(tc.target+"/"+via, func(t *testing.T) {
				_, err := x.Exchange(ctx, testProto, tc.target, &testQuery{tag: via})
				var re *wire.RefusedError
				if !errors.As(err, &re) || re.Code != tc.code || re.Rule() != tc.rule {
					t.Fatalf("got %v, want code %v rule %q", err, tc.code, tc.rule)
				}
				if strings.Contains(re.Message, "10.1.2.3") != (tc.rule == wire.RulePrivate) {
					t.Fatalf("message %q", re.Message)
				}
			})
		}
	}
	if n := r.count.Load(); n != 0 {
		t.Fatalf("the responder received %d datagrams for refused targets", n)
	}
}

// TestResolvedMappedJudgedAsIPv4: an address a resolver returns in the
// IPv4-mapped form (as Go's does for every A record) is judged, and
// queried, as the IPv4 address it is, the same as the IPv4 literal: a name
// that resolves to ::ffff:127.0.0.1 passes where 127.0.0.1 is allowed and
// is refused as loopback where it is not. A mapped literal written by the
// client stays refused (v4-mapped), allowed range or not. Only the policy
// decides here; nothing is sent.
func TestResolvedMappedJudgedAsIPv4(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	resolver := fakeResolver{
		"mapped.test":         {netip.MustParseAddr("::ffff:127.0.0.1")},
		"mapped-private.test": {netip.MustParseAddr("::ffff:10.1.2.3")},
		"plain.test":          {netip.MustParseAddr("127.0.0.1")},
	}
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	for _, tc := range []struct {
		name   string
		allow  []netip.Prefix
		target string
		want   string // the address queried, or the refusing rule
	}{
		{"name to mapped loopback, loopback allowed", allow, "mapped.test:10666", "127.0.0.1:10666"},
		{"name to plain loopback, loopback allowed", allow, "plain.test:10666", "127.0.0.1:10666"},
		{"IPv4 literal, loopback allowed", allow, "127.0.0.1:10666", "127.0.0.1:10666"},
		{"mapped literal, loopback allowed", allow, "[::ffff:127.0.0.1]:10666", string(wire.RuleV4Mapped)},
		{"name to mapped loopback, default policy", nil, "mapped.test:10666", string(wire.RuleLoopback)},
		{"IPv4 literal, default policy", nil, "127.0.0.1:10666", string(wire.RuleLoopback)},
		{"name to mapped private, loopback allowed", allow, "mapped-private.test:10666", string(wire.RulePrivate)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.AllowTargets = tc.allow
			cfg.Resolver = resolver
			s := New(cfg, nil)
			target, err := wire.ParseTarget(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			addr, _, rule, detail := s.resolveTarget(ctx, target)
			got := addr.String()
			if rule != "" {
				got = string(rule)
			}
			if got != tc.want {
				t.Fatalf("%s: got %s (%s), want %s", tc.target, got, detail, tc.want)
			}
		})
	}
}
