package web

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestVisitorsLimit(t *testing.T) {
	v := newVisitors(1, 3, []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")})
	clock := time.Unix(1_700_000_000, 0)
	v.now = func() time.Time { return clock }
	req := func(remote, xff string) bool {
		r := httptest.NewRequest("GET", "/s/zandronum/203.0.113.7:10666", nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		return v.allow(r)
	}
	for i := 0; i < 3; i++ {
		if !req("192.0.2.1:5000", "") {
			t.Fatalf("request %d refused within the burst", i)
		}
	}
	if req("192.0.2.1:5001", "") {
		t.Fatal("fourth request allowed beyond the burst")
	}
	if !req("192.0.2.2:5000", "") {
		t.Fatal("another client refused")
	}
	clock = clock.Add(time.Second)
	if !req("192.0.2.1:5000", "") {
		t.Fatal("no token after a second")
	}
	// IPv6: one /64 shares a bucket.
	for i := 0; i < 3; i++ {
		req("[2001:db8::1]:1", "")
	}
	if req("[2001:db8::ffff]:1", "") {
		t.Fatal("another address of the same /64 has its own bucket")
	}
	// X-Forwarded-For counts only from a trusted proxy.
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
