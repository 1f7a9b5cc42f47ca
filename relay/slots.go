package relay

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// upstreamSlots shares the relay's MaxUpstream exchanges between client
// keys. A key's weight is the larger of the exchanges it has open now and
// the number it held on average lately (a moving average over about one
// reply window): a key whose exchanges have all just ended does not count
// as new, and one whose exchanges end fast weighs little however often it
// asks.
//
// Heavy keys share all but the last sixteenth of the slots equally: a key
// may start an exchange while its weight is below (MaxUpstream-kept)/heavy
// (at least one), counting itself. A key is heavy while it held at least
// one slot on average lately, and for memory (8 reply windows) after the
// relay last refused it a slot: a key that asked for more than it got
// still wants it, though its exchanges have ended. So a flood that pauses
// and starts again finds its keys still counted and its shares as small
// as when it paused, instead of the first keys of the new pulse taking
// the whole relay.
//
// The kept slots, the last sixteenth, are for light keys: a key that holds
// nothing, held less than one on average lately, and was not refused for
// its share within memory. Heavy and greedy keys stop at MaxUpstream-kept
// (rule upstream-cap), so a client that asks now and then (a page
// refreshing a server) finds a slot however many flood. A key over its
// share is refused by the share first (upstream-share), so that it is
// known greedy; a key that is the only heavy one (a page refreshing a long
// list, among many light ones) still gets nearly everything.
//
// A flood that starts at once on an idle relay is met by what came before
// it: its clients connected. Once a quarter of the shared slots are taken,
// the shares count every key that connected within the last window as
// heavy, asked or not (fresh), so the first keys to ask cannot take the
// relay before the others do. Until then fresh keys do not count: on a
// relay with room, a page that just opened among others that did gets
// what it asks.
type upstreamSlots struct {
	s      *Server
	max    int
	kept   int           // slots only light keys may take
	window time.Duration // time constant of the average
	memory time.Duration // how long a refused key stays heavy
	keys   int           // most keys remembered

	mu        sync.Mutex
	open      int
	perKey    map[netip.Addr]*keyUse
	heavy     int           // keys marked heavy (keyUse.heavy)
	fresh     int           // keys marked fresh (keyUse.fresh)
	countedAt time.Duration // Server.now() of the last count (and sweep)
}

// keyUse is one client key's use of the upstream slots; the in-process
// Exchange is the invalid Addr.
type keyUse struct {
	open    int
	avg     float64       // moving average of open, up to last
	last    time.Duration // Server.now() of the last update
	refused time.Duration // Server.now() of the last refusal (share or cap), or never
	greedy  time.Duration // Server.now() of the last refusal for its share, or never
	conn    time.Duration // Server.now() of the key's last new connection, or never
	heavy   bool          // counted in upstreamSlots.heavy
	fresh   bool          // counted in upstreamSlots.fresh
}

// never is a time long before any Server.now().
const never = time.Duration(math.MinInt64 / 2)

func newUpstreamSlots(s *Server, max int) *upstreamSlots {
	return &upstreamSlots{s: s, max: max, kept: max / 16, window: s.cfg.ReplyWindow, memory: 8 * s.cfg.ReplyWindow,
		keys: 1 << 16, perKey: make(map[netip.Addr]*keyUse)}
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

// isHeavy reports whether k counts in the shares at now.
func (u *upstreamSlots) isHeavy(k *keyUse, now time.Duration) bool {
	return k.avg >= 1 || now-k.refused < u.memory
}

// markHeavy counts k as heavy from now on, without waiting for the next
// count.
func (u *upstreamSlots) markHeavy(k *keyUse) {
	if !k.heavy {
		k.heavy = true
		u.heavy++
	}
}

// countLocked counts the heavy keys and forgets the keys with nothing
// open whose average has decayed to almost nothing and that were not
// refused lately. It runs at most 16 times a window: a key that turns
// heavy by its average waits for it; one refused is counted at once.
func (u *upstreamSlots) countLocked(now time.Duration, force bool) {
	if !force && now-u.countedAt < u.window/16 {
		return
	}
	u.countedAt = now
	u.heavy, u.fresh = 0, 0
	for a, k := range u.perKey {
		u.decay(k, now)
		k.heavy = u.isHeavy(k, now)
		k.fresh = now-k.conn < u.window
		if k.fresh {
			u.fresh++
		}
		switch {
		case k.heavy:
			u.heavy++
		case k.open == 0 && k.avg < 0.05 && !k.fresh:
			delete(u.perKey, a)
		}
	}
}

// connected records that client opened a connection: it may be about to
// ask, and counts as fresh for one window.
func (u *upstreamSlots) connected(client netip.Addr) {
	now := u.s.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	k := u.key(client, now)
	if k == nil {
		return
	}
	k.conn = now
	if !k.fresh {
		k.fresh = true
		u.fresh++
	}
}

// key returns client's keyUse, created if need be, or nil when every key
// remembered is busy.
func (u *upstreamSlots) key(client netip.Addr, now time.Duration) *keyUse {
	k := u.perKey[client]
	if k == nil {
		if len(u.perKey) >= u.keys {
			u.countLocked(now, true)
		}
		if len(u.perKey) >= u.keys {
			return nil
		}
		k = &keyUse{last: now, refused: never, greedy: never, conn: never}
		u.perKey[client] = k
	}
	return k
}

// reserve takes a slot for an exchange that client starts to target, or
// names the rule that refuses it. The rules cost nothing and come first;
// the target's rate limits are charged only when they pass.
func (u *upstreamSlots) reserve(client netip.Addr, target netip.AddrPort) (wire.Code, wire.Rule) {
	s := u.s
	now := s.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.countLocked(now, false)
	k := u.key(client, now)
	if k == nil {
		return wire.CodeBusy, wire.RuleUpstreamShare // every key remembered is busy: fail closed
	}
	u.decay(k, now)
	heavy := u.heavy
	if !k.heavy {
		heavy++ // this key, as if it were heavy
	}
	if u.open >= (u.max-u.kept)/4 {
		heavy = max(heavy, u.fresh) // under pressure: those that just connected too
	}
	share := max(float64((u.max-u.kept)/heavy), 1)
	over := float64(k.open) >= share || k.avg >= share
	light := k.open == 0 && k.avg < 1 && now-k.greedy >= u.memory
	full := u.open >= u.max || !light && u.open >= u.max-u.kept
	switch {
	case s.isClosing():
		return wire.CodeBusy, wire.RuleShuttingDown
	case over && !(heavy == 1 && u.open >= u.max):
		// Over its share (a key alone at a full relay hears that the
		// relay is full).
		k.refused, k.greedy = now, now
		u.markHeavy(k)
		return wire.CodeBusy, wire.RuleUpstreamShare
	case full:
		k.refused = now
		u.markHeavy(k)
		return wire.CodeBusy, wire.RuleUpstreamCap
	case s.policy.own(target):
		// The operator's own server (Config.AllowAddrs): no third party
		// to protect, so no per-target limit.
	case !s.targetRate.allow(target, client, now):
		return wire.CodeRateLimited, wire.RulePerTarget
	case !s.hostRate.allow(target.Addr(), client, now):
		return wire.CodeRateLimited, wire.RulePerTargetHost
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
