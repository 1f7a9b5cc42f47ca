package relay

import "net/netip"

// Peek returns the reply datagrams this relay's cache holds for the query
// datagram d to target in protocol, as a page asking it now would get
// them, and false when it holds none (never cached, or expired). It never
// sends, waits, joins an exchange in flight or asks the shared store, and
// leaves the cache as it was: for views that must not cause a query, such
// as a master's list showing the state of each server it lists. The
// datagrams are copies.
func (s *Server) Peek(protocol string, target netip.AddrPort, d []byte) ([][]byte, bool) {
	ans, ok := s.cache.peek(s.cacheKey(protocol, target, d))
	if !ok || len(ans.replies) == 0 {
		return nil, false
	}
	out := make([][]byte, len(ans.replies))
	for i, r := range ans.replies {
		out[i] = append([]byte(nil), r.data...)
	}
	return out, true
}
