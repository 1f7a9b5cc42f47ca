//go:build js && wasm

package ident

// CanonicalAddr checks a "host:port" and returns it in canonical form: the
// relay's syntax (wire.ParseTarget, checked here by parseTarget, without
// net/netip), port 0 refused. See addr.go.
func CanonicalAddr(s string) (string, bool) {
	t, ok := parseTarget(s)
	if !ok || t[len(t)-2:] == ":0" {
		return "", false
	}
	return t, true
}
