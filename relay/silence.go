package relay

import (
	"strconv"
	"sync"
	"time"
)

// silentStreak is how many exchanges in a row a question must get no
// reply to (the window closed, or the port is closed) before it cools
// down.
const silentStreak = 3

// silence remembers the questions that servers stopped answering, by
// cache key (protocol, target and the query's sharing key: see
// Server.cacheKey). After silentStreak silent exchanges in a row, the same
// question is answered at once with a timeout (rule "cooldown") for
// Config.SilentCooldown, without sending anything; then one exchange goes
// through again, and one reply ends the streak. The question, not the
// address, cools down: a server that ignores another protocol's probes, or
// a query in another version of its protocol, still gets the ones it
// answers. A page refreshing a list full of dead servers thus
// holds no upstream slot for them for the whole reply window each time,
// and neither does a client that repeats a question to a silent server. Exchanges that
// their askers cancelled before the window closed prove nothing and are
// not counted.
type silence struct {
	cooldown time.Duration // <= 0: off
	max      int           // targets remembered

	mu        sync.Mutex
	m         map[string]*streak // by cache key
	lastSweep time.Duration
}

type streak struct {
	n     int
	until time.Duration // Server.now() when the cooldown ends
}

func newSilence(cooldown time.Duration, max int) *silence {
	return &silence{cooldown: cooldown, max: max, m: make(map[string]*streak)}
}

// cooling reports whether the question key is cooling down at now, and
// for how much longer.
func (sl *silence) cooling(key string, now time.Duration) (time.Duration, bool) {
	if sl.cooldown <= 0 {
		return 0, false
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	st := sl.m[key]
	if st == nil || st.n < silentStreak || now >= st.until {
		return 0, false
	}
	return st.until - now, true
}

// silent records an exchange for key that brought nothing back.
func (sl *silence) silent(key string, now time.Duration) {
	if sl.cooldown <= 0 {
		return
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	st := sl.m[key]
	if st == nil {
		if len(sl.m) >= sl.max || now-sl.lastSweep > time.Minute {
			sl.sweepLocked(now)
		}
		if len(sl.m) >= sl.max {
			return // full of cooling targets: forget this one (fail open)
		}
		st = &streak{}
		sl.m[key] = st
	}
	st.n++
	if st.n >= silentStreak {
		st.until = now + sl.cooldown
	}
}

// heard records a reply for key: its streak ends.
func (sl *silence) heard(key string) {
	if sl.cooldown <= 0 {
		return
	}
	sl.mu.Lock()
	delete(sl.m, key)
	sl.mu.Unlock()
}

// sweepLocked forgets streaks that are not cooling and have not grown for
// a while, and cooldowns that ended.
func (sl *silence) sweepLocked(now time.Duration) {
	sl.lastSweep = now
	for k, st := range sl.m {
		if now >= st.until+sl.cooldown {
			delete(sl.m, k)
		}
	}
}

func cooldownMessage(left time.Duration) string {
	return "no reply to the last " + strconv.Itoa(silentStreak) + " queries; asked again in " +
		strconv.FormatInt(max(left.Milliseconds(), 1), 10) + " ms"
}
