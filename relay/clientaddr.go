package relay

import (
	"net/http"
	"net/netip"
)

// ClientAddr is the address the relay takes r to come from: RemoteAddr,
// or behind a trusted proxy the client X-Forwarded-For names (an error
// when that hop does not parse). The pages match operator-named clients
// (serve --probe-allow) against it, so that they see what the limits see.
func (s *Server) ClientAddr(r *http.Request) (netip.Addr, error) { return s.clientIP(r) }
