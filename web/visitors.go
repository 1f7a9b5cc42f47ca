package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// visitors limits how many status pages and badges one client address may
// ask for, so that the server-side queries behind them cannot be used to
// make the relay query many servers (the relay limits each target; this
// limits each visitor). A token bucket per address (IPv6: per /64), in a
// table bounded by maxVisitors.
type visitors struct {
	rate    float64 // tokens per second
	burst   float64
	trusted []netip.Prefix

	mu  sync.Mutex
	now func() time.Time
	m   map[netip.Addr]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxVisitors = 65536

func newVisitors(rate float64, burst int, trusted []netip.Prefix) *visitors {
	return &visitors{rate: rate, burst: float64(burst), trusted: trusted, now: time.Now, m: map[netip.Addr]*bucket{}}
}

// allow takes one token for the request's client, reporting false when
// its bucket is empty.
func (v *visitors) allow(r *http.Request) bool {
	ip := v.client(r)
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	b, ok := v.m[ip]
	if !ok {
		if len(v.m) >= maxVisitors {
			// Forget buckets that have refilled; they hold no information.
			for k, o := range v.m {
				if now.Sub(o.last).Seconds()*v.rate >= v.burst {
					delete(v.m, k)
				}
			}
			if len(v.m) >= maxVisitors {
				return false
			}
		}
		b = &bucket{tokens: v.burst, last: now}
		v.m[ip] = b
	}
	b.tokens += now.Sub(b.last).Seconds() * v.rate
	if b.tokens > v.burst {
		b.tokens = v.burst
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// client is the request's client address: RemoteAddr, or the last
// X-Forwarded-For hop not added by a trusted proxy. IPv6 addresses are
// reduced to their /64, which one subscriber usually holds whole.
func (v *visitors) client(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	ip = ip.Unmap()
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" && v.isTrusted(ip) {
		hops := strings.Split(xff, ",")
		for i := len(hops) - 1; i >= 0; i-- {
			h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			ip = h.Unmap()
			if !v.isTrusted(ip) {
				break
			}
		}
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

func (v *visitors) isTrusted(ip netip.Addr) bool {
	for _, p := range v.trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
