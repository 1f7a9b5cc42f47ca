//go:build !(js && wasm)

package ident

import "github.com/querylens/querylens/relay/wire"

// CanonicalAddr checks a "host:port" and returns it in canonical form. The
// syntax is the relay's (wire.ParseTarget), so that what is accepted here
// is what the relay would be asked: an IPv4-mapped IPv6 address stays IPv6
// and the relay's policy judges it as written. Port 0 is not a server.
// (The browser module checks the same syntax without net/netip:
// addr_js.go, target.go.)
func CanonicalAddr(s string) (string, bool) {
	t, err := wire.ParseTarget(s)
	if err != nil || t.Port == 0 {
		return "", false
	}
	return t.String(), true
}
