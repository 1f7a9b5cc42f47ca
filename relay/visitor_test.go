package relay

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/querylens/querylens/relay/shared"
)

func TestAllowVisitor(t *testing.T) {
	s := New(Config{
		VisitorRate:    shared.Rate{PerSecond: 0.001, Burst: 3},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")},
	}, nil)
	req := func(remote, xff string) bool {
		r := httptest.NewRequest("GET", "/s/zandronum/203.0.113.7:10666", nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		return s.AllowVisitor(r)
	}
	for i := 0; i < 3; i++ {
		if !req("192.0.2.1:5000", "") {
			t.Fatalf("request %d refused within the burst", i)
		}
	}
	if req("192.0.2.1:5001", "") {
		t.Fatal("fourth request allowed beyond the burst (another port, same client)")
	}
	if !req("192.0.2.2:5000", "") {
		t.Fatal("another client refused")
	}
	// IPv6: one /64 shares a bucket.
	for i := 0; i < 3; i++ {
		req("[2001:db8::1]:1", "")
	}
	if req("[2001:db8::ffff]:1", "") {
		t.Fatal("another address of the same /64 has its own bucket")
	}
	// X-Forwarded-For names the client only behind a trusted proxy.
	for i := 0; i < 3; i++ {
		if !req("10.0.0.1:1", "198.51.100.9") {
			t.Fatalf("proxied request %d refused", i)
		}
	}
	if req("10.0.0.1:1", "198.51.100.9") {
		t.Fatal("proxied client not limited")
	}
	if !req("10.0.0.1:1", "198.51.100.10") {
		t.Fatal("another proxied client refused")
	}
	for i := 0; i < 3; i++ {
		req("192.0.2.50:1", "198.51.100.77")
	}
	if req("192.0.2.50:1", "198.51.100.78") {
		t.Fatal("an untrusted peer chose its identity with X-Forwarded-For")
	}
}
