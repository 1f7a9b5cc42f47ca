package relay

import (
	"math"
	"net/netip"
	"sync"
	"time"
)

// upstreamSlots shares the relay's MaxUpstream exchanges between client
// keys. A key's weight is the larger of the exchanges it has open now and
// the number it held on average lately (a moving average over about one
// reply window): a key whose exchanges have all just ended does not count
// as new, and one whose exchanges end fast weighs little however often it
// asks. Keys that held at least one slot on average lately are heavy. A
// key may start an exchange while its weight is below an equal share of
// all but the last sixteenth of the slots between the heavy keys (itself
// included), (MaxUpstream-kept)/heavy, at least one. Clients that flood
// silent targets (each exchange holds its slot for the whole window)
// therefore hold about their shares between them, the kept slots stay for
// the light keys, and a key that is the only heavy one (a page refreshing
// a long list, among many light ones) still gets nearly all of it. Right
// after a flood starts on an idle relay the first keys may hold more than
// their share, until their exchanges end (one window).
type upstreamSlots struct {
	s      *Server
	max    int
	kept   int           // slots beyond every key's share
	window time.Duration // time constant of the average
	keys   int           // most keys remembered

	mu        sync.Mutex
	open      int
	perKey    map[netip.Addr]*keyUse
	heavy     int           // keys whose average was >= 1 at counted
	countedAt time.Duration // Server.now() of the last count (and sweep)
}

// keyUse is one client key's use of the upstream slots; the in-process
// Exchange is the invalid Addr.
type keyUse struct {
	open int
	avg  float64       // moving average of open, up to last
	last time.Duration // Server.now() of the last update
}

func newUpstreamSlots(s *Server, max int) *upstreamSlots {
	return &upstreamSlots{s: s, max: max, kept: max / 16, window: s.cfg.ReplyWindow, keys: 1 << 16, perKey: make(map[netip.Addr]*keyUse)}
}

// decay brings k's average to now: open has not changed since last, so
// the average moves towards it exponentially, with the reply window as
// time constant.
func (u *upstreamSlots) decay(k *keyUse, now time.Duration) {
	if now > k.last {
		w := math.Exp(-float64(now-k.last) / float64(u.window))
		k.avg = float64(k.open) + (k.avg-float64(k.open))*w
		k.last = now
	}
}

// countLocked counts the heavy keys and forgets the keys with nothing
// open whose average has decayed to almost nothing. It runs at most 16
// times a window: shares follow the load with that delay.
func (u *upstreamSlots) countLocked(now time.Duration, force bool) {
	if !force && now-u.countedAt < u.window/16 {
		return
	}
	u.countedAt = now
	u.heavy = 0
	for a, k := range u.perKey {
		u.decay(k, now)
		switch {
		case k.avg >= 1:
			u.heavy++
		case k.open == 0 && k.avg < 0.05:
			delete(u.perKey, a)
		}
	}
}

// reserve takes a slot for an exchange that client starts to target, or
// names the rule that refuses it. The rules cost nothing and come first;
// the target's rate limits are charged only when they pass.
func (u *upstreamSlots) reserve(client netip.Addr, target netip.AddrPort) (Code, Rule) {
	s := u.s
	now := s.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.countLocked(now, false)
	k := u.perKey[client]
	if k == nil {
		if len(u.perKey) >= u.keys {
			u.countLocked(now, true)
		}
		if len(u.perKey) >= u.keys {
			return CodeBusy, RuleUpstreamShare // every key remembered is busy: fail closed
		}
		k = &keyUse{last: now}
		u.perKey[client] = k
	}
	u.decay(k, now)
	heavy := u.heavy
	if k.avg < 1 {
		heavy++ // this key, as if it were heavy
	}
	// The count may predate this key turning heavy.
	heavy = max(heavy, 1)
	share := max(float64((u.max-u.kept)/heavy), 1)
	switch {
	case s.isClosing():
		return CodeBusy, RuleShuttingDown
	case u.open >= u.max:
		return CodeBusy, RuleUpstreamCap
	case float64(k.open) >= share || k.avg >= share:
		return CodeBusy, RuleUpstreamShare
	case s.policy.own(target):
		// The operator's own server (Config.AllowAddrs): no third party
		// to protect, so no per-target limit.
	case !s.targetRate.allow(target, now):
		return CodeRateLimited, RulePerTarget
	case !s.hostRate.allow(target.Addr(), now):
		return CodeRateLimited, RulePerTargetHost
	}
	k.open++
	u.open++
	s.metrics.upstreamOpen.Store(int64(u.open))
	return 0, ""
}

// release returns the slot of an exchange client started.
func (u *upstreamSlots) release(client netip.Addr) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.open--
	if k := u.perKey[client]; k != nil {
		u.decay(k, u.s.now())
		k.open--
	}
	u.s.metrics.upstreamOpen.Store(int64(u.open))
}
