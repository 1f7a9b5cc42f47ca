package demo

import (
	"net/netip"
	"time"
)

// Rate limiting shared by the emulated servers: one answer per client IP
// per window, as Zandronum's sv_queryignoretime does (docs/protocols/zandronum.md 2.9).
const (
	rateWindow = 10 * time.Second // one answer per client IP per window
	maxTracked = 4096             // client IPs remembered at once
)

// ipWindow remembers when each client IP was last answered. Its table is
// bounded: expired entries are dropped when it is full, and a full table
// of recent clients refuses newcomers (a flood cannot grow it).
type ipWindow struct {
	seen map[netip.Addr]time.Time
}

func newIPWindow() ipWindow { return ipWindow{seen: map[netip.Addr]time.Time{}} }

// admit reports whether ip may have an answer at now, and records it. A
// clock that went backwards does not lock a client out.
func (w *ipWindow) admit(ip netip.Addr, now time.Time) bool {
	last, known := w.seen[ip]
	if known && now.Sub(last) < rateWindow && !now.Before(last) {
		return false
	}
	if !known && len(w.seen) >= maxTracked {
		for k, t := range w.seen {
			if now.Sub(t) >= rateWindow || now.Before(t) {
				delete(w.seen, k)
			}
		}
		if len(w.seen) >= maxTracked {
			return false
		}
	}
	w.seen[ip] = now
	return true
}
