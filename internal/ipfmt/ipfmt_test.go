package ipfmt

import (
	"net/netip"
	"testing"
)

func TestAppendIPv6(t *testing.T) {
	for _, s := range []string{
		"::", "::1", "1::", "2001:db8::1", "2001:db8:0:1:1:1:1:1", "2001:0:0:1::1", "fe80::1:0:0:1",
		"1:2:3:4:5:6:7:8", "0:1:0:1:0:1:0:1", "2001:db8::ffff:0:1", "::ffff:0.0.0.1",
	} {
		a := netip.MustParseAddr(s)
		ip := a.As16()
		want := a.String() // RFC 5952; an IPv4-mapped address is written in hex groups here
		if a.Is4In6() {
			want = "::ffff:0:1"
		}
		if got := string(AppendIPv6(nil, &ip)); got != want {
			t.Errorf("%s: got %s, want %s", s, got, want)
		}
	}
}

func TestAppendIPv4Port(t *testing.T) {
	for _, tc := range []struct {
		ip   [4]byte
		port uint16
		want string
	}{
		{[4]byte{}, 0, "0.0.0.0:0"},
		{[4]byte{127, 0, 0, 1}, 27015, "127.0.0.1:27015"},
		{[4]byte{255, 255, 255, 255}, 65535, "255.255.255.255:65535"},
		{[4]byte{10, 1, 20, 100}, 80, "10.1.20.100:80"},
	} {
		if got := string(AppendIPv4Port([]byte("x"), &tc.ip, tc.port)); got != "x"+tc.want {
			t.Errorf("%v:%d: got %s, want x%s", tc.ip, tc.port, got, tc.want)
		}
	}
}
