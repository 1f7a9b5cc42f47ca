package relay

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestClientAddr checks the address the pages match operator-named
// clients against: the peer, or behind a trusted proxy the hop it names;
// a hop that does not parse is an error, never the proxy's address.
func TestClientAddr(t *testing.T) {
	cfg := testConfig()
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}
	s := New(cfg, nil)
	for _, tc := range []struct {
		name, remote, xff, want string
		err                     bool
	}{
		{name: "peer", remote: "192.0.2.7:5000", want: "192.0.2.7"},
		{name: "peer ignores XFF", remote: "192.0.2.7:5000", xff: "198.51.100.1", want: "192.0.2.7"},
		{name: "IPv4-mapped peer", remote: "[::ffff:192.0.2.7]:5000", want: "192.0.2.7"},
		{name: "trusted proxy", remote: "10.0.0.1:5000", xff: "198.51.100.1", want: "198.51.100.1"},
		{name: "trusted proxy, no header", remote: "10.0.0.1:5000", want: "10.0.0.1"},
		{name: "trusted proxy, bad hop", remote: "10.0.0.1:5000", xff: "unknown", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/probe", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			got, err := s.ClientAddr(r)
			if tc.err {
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}
