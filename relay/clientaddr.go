package relay

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// The client's address, which the per-client limits and connection caps
// are kept by: the peer, or behind a trusted proxy (Config.TrustedProxies)
// the client its X-Forwarded-For names.

// ClientAddr is the address the relay takes r to come from: RemoteAddr,
// or behind a trusted proxy the client X-Forwarded-For names (an error
// when that hop does not parse). The pages match operator-named clients
// (serve --probe-allow) against it, so that they see what the limits see.
func (s *Server) ClientAddr(r *http.Request) (netip.Addr, error) { return s.clientIP(r) }

// clientIP is the peer's address, or, when the peer is a trusted proxy,
// the first address in X-Forwarded-For (read right to left) that is not
// one. A hop may carry a port ("192.0.2.7:5000", "[2001:db8::7]:5000").
// A hop that must be read and does not parse ("unknown", empty, a bad
// port) is an error: falling back to the proxy's own address would give
// every such client the proxy's limits (loopback ones, often) and one
// bucket between them. Without the header, the proxy is the client.
func (s *Server) clientIP(r *http.Request) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, nil
	}
	ip := ap.Addr().Unmap().WithZone("")
	if !s.trusted(ip) {
		return ip, nil
	}
	values := r.Header.Values("X-Forwarded-For")
	if len(values) == 0 {
		return ip, nil
	}
	hops := strings.Split(strings.Join(values, ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h, ok := parseHop(strings.TrimSpace(hops[i]))
		if !ok {
			return netip.Addr{}, &forwardedError{hop: hops[i], proxy: ip}
		}
		ip = h
		if !s.trusted(ip) {
			break
		}
	}
	return ip, nil
}

// parseHop reads one X-Forwarded-For hop: an address, an IPv4 address
// and port, or a bracketed IPv6 address with or without a port. The
// address comes back unmapped, without a zone.
func parseHop(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		if a, err := netip.ParseAddr(h[1 : len(h)-1]); err == nil && a.Is6() {
			return a.Unmap().WithZone(""), true
		}
		return netip.Addr{}, false
	}
	// "1.2.3.4:5" or "[2001:db8::1]:5"; ParseAddrPort refuses brackets
	// around IPv4 and IPv6 without them.
	ap, err := netip.ParseAddrPort(h)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap().WithZone(""), true
}

// forwardedError is a trusted proxy's X-Forwarded-For hop that does not
// parse.
type forwardedError struct {
	hop   string
	proxy netip.Addr
}

func (e *forwardedError) Error() string {
	return "X-Forwarded-For hop " + strconv.Quote(e.hop) + " from trusted proxy " + e.proxy.String() + " is not an address"
}

func (s *Server) trusted(ip netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// the client's IPv4 address, or its IPv6 /64.
func clientKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// AllowVisitor reports whether the client of r (RemoteAddr, or
