package history

import (
	"container/heap"
	"container/list"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Defaults of TrackerConfig.
const (
	DefaultSampleEvery = 60 * time.Second
	DefaultTrackIdle   = 7 * 24 * time.Hour
	DefaultTrackMax    = 5000
	DefaultBudget      = 50 // queries per second
	// MinSampleEvery is the shortest interval between two samples of one
	// server: Zandronum servers answer one asker once per
	// sv_queryignoretime (10 s by default) and masters once per 10 s
	// (docs/protocols/zandronum.md 3.3); the other protocols get the same courtesy.
	MinSampleEvery = 10 * time.Second
	// DefaultPinEvery is how often a pinned server (a watched one) is
	// sampled when its watch names no interval.
	DefaultPinEvery = 30 * time.Second
)

// Probe asks one server once and reports what it found. It is given the
// key and returns a sample with State set (the tracker sets Key and At if
// they are zero), or with State 0 when what it found says nothing about
// the server (the relay refused or limited the query, the name did not
// resolve): such a probe is not recorded. It must respect ctx.
type Probe func(ctx context.Context, k Key) Sample

// TrackerConfig configures a Tracker.
type TrackerConfig struct {
	Store Store // required
	Probe Probe // required to Run
	// Every is how often each tracked server is sampled; at least
	// MinSampleEvery. When the tracked set is too large for Budget, every
	// server is sampled less often instead (len(tracked)/Budget seconds).
	Every time.Duration
	// Idle untracks a server viewed last this long ago.
	Idle time.Duration
	// Max bounds the tracked set; a new server evicts the least recently
	// viewed one.
	Max int
	// Budget bounds the probes per second, across all servers.
	Budget float64
	// Timeout bounds one probe. Default 3 s.
	Timeout time.Duration
	// Logger receives errors of the store. Default slog.Default().
	Logger *slog.Logger
	// Leases, when several instances share Store, makes one of them sample
	// each server (see Leaser). Nil: this instance samples every server.
	Leases Leaser
	// PinFloor is the shortest interval a pinned server may be sampled
	// at: what the relay's per-target limits allow for it (the server
	// wires them here). Nil: MinSampleEvery for every server.
	PinFloor func(Key) time.Duration

	now func() time.Time // tests
}

// Tracker keeps the tracked set and samples it. The set is mirrored in
// memory (bounded by Max) and in the Store, so that it survives restarts;
// views update the store at most once per ViewPersistEvery per server.
type Tracker struct {
	cfg TrackerConfig

	mu      sync.Mutex
	entries map[Key]*list.Element // of *entry
	lru     *list.List            // front: least recently viewed
	queue   dueQueue              // entries not being probed, soonest due first
	tokens  float64
	last    time.Time // of the token refill
	running int       // probes in flight

	pinned   int           // entries pinned
	probes   chan struct{} // counts probes started, for tests (nil: off)
	lastIdle time.Time
}

type entry struct {
	key       Key
	source    Source
	viewed    time.Time     // last view, in memory
	persisted time.Time     // last view written to the store
	next      time.Time     // when the next sample is due
	busy      bool          // a probe is in flight (and the entry is out of the queue)
	leased    bool          // this instance held the lease at the last ask (with Leases)
	pin       time.Duration // pinned (watched): sampled this often, never evicted nor idle; 0: not pinned
	removed   bool          // untracked while its probe was in flight
	qi        int           // index in the queue, -1 when not in it
}

// dueQueue is a min-heap of entries by next sample time, so that a tick
// costs O(k log n) for the k servers due instead of a scan of all n.
type dueQueue []*entry

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q[i].next.Before(q[j].next) }
func (q dueQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].qi, q[j].qi = i, j
}
func (q *dueQueue) Push(x any) {
	e := x.(*entry)
	e.qi = len(*q)
	*q = append(*q, e)
}
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	e.qi = -1
	return e
}

// remove takes e out of the tracked set (the caller holds t.mu).
func (t *Tracker) remove(el *list.Element) *entry {
	e := t.lru.Remove(el).(*entry)
	delete(t.entries, e.key)
	if e.qi >= 0 {
		heap.Remove(&t.queue, e.qi)
	}
	if e.pin > 0 {
		t.pinned--
	}
	e.removed = true
	return e
}

// evictable is the least recently viewed entry that is not pinned, or
// nil (the caller holds t.mu).
func (t *Tracker) evictable() *list.Element {
	for el := t.lru.Front(); el != nil; el = el.Next() {
		if el.Value.(*entry).pin == 0 {
			return el
		}
	}
	return nil
}

// ViewPersistEvery bounds how often a view of an already tracked server
// is written to the store: its LastViewed there may lag by this much,
// which only matters against Idle (days).
const ViewPersistEvery = time.Hour

// NewTracker loads the tracked set from cfg.Store.
func NewTracker(ctx context.Context, cfg TrackerConfig) (*Tracker, error) {
	if cfg.Store == nil {
		return nil, errors.New("history: TrackerConfig.Store is required")
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultSampleEvery
	}
	cfg.Every = max(cfg.Every, MinSampleEvery)
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultTrackIdle
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultTrackMax
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	t := &Tracker{cfg: cfg, entries: make(map[Key]*list.Element), lru: list.New(), tokens: 1}
	t.last = cfg.now()
	servers, err := cfg.Store.Tracked(ctx)
	if err != nil {
		return nil, err
	}
	// Tracked is least recently viewed first; past Max (a smaller Max than
	// last run), the oldest are untracked.
	var drop []Key
	if len(servers) > cfg.Max {
		for _, s := range servers[:len(servers)-cfg.Max] {
			drop = append(drop, s.Key)
		}
		servers = servers[len(servers)-cfg.Max:]
	}
	now := cfg.now()
	for i, s := range servers {
		e := &entry{key: s.Key, source: s.Source, viewed: s.LastViewed, persisted: s.LastViewed, qi: -1}
		// Spread the first samples over one interval instead of a burst.
		e.next = now.Add(time.Duration(i) * cfg.Every / time.Duration(len(servers)))
		t.entries[s.Key] = t.lru.PushBack(e)
		heap.Push(&t.queue, e)
	}
	if len(drop) > 0 {
		if err := cfg.Store.Untrack(ctx, drop); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Pin keeps k tracked and sampled every every (DefaultPinEvery when 0,
// never more often than PinFloor allows) until Unpin, whatever its views:
// a watched server is sampled even if it never answered, and is neither
// evicted nor untracked when idle. Pinned servers do not count against
// Max. Pinning a pinned server changes its interval; the next sample
// comes at once when the new interval is shorter than the wait left.
func (t *Tracker) Pin(ctx context.Context, k Key, every time.Duration) error {
	if !k.Valid() {
		return errors.New("history: pin: invalid key " + k.String())
	}
	if every <= 0 {
		every = DefaultPinEvery
	}
	floor := MinSampleEvery
	if t.cfg.PinFloor != nil {
		floor = t.cfg.PinFloor(k)
	}
	every = max(every, floor)
	now := t.cfg.now()
	t.mu.Lock()
	el, ok := t.entries[k]
	var e *entry
	if ok {
		e = el.Value.(*entry)
		if e.pin == 0 {
			t.pinned++
		}
		e.pin = every
		if e.qi >= 0 && e.next.After(now.Add(every)) {
			e.next = now
			heap.Fix(&t.queue, e.qi)
		}
		t.mu.Unlock()
		return nil
	}
	// Never viewed: at the front of the LRU, where an unpin leaves it to
	// the next eviction or idle pass.
	e = &entry{key: k, source: SourceWatch, next: now, qi: -1, pin: every, persisted: now}
	t.entries[k] = t.lru.PushFront(e)
	heap.Push(&t.queue, e)
	t.pinned++
	t.mu.Unlock()
	// Tracked in the store too, so that its samples are kept and a page
	// shows its history.
	return t.cfg.Store.Track(ctx, []Server{{Key: k, Source: SourceWatch, LastViewed: now}})
}

// Unpin ends Pin: k is tracked as its views say (a server pinned and
// never viewed leaves the tracked set at once).
func (t *Tracker) Unpin(ctx context.Context, k Key) {
	t.mu.Lock()
	el, ok := t.entries[k]
	if !ok || el.Value.(*entry).pin == 0 {
		t.mu.Unlock()
		return
	}
	e := el.Value.(*entry)
	e.pin = 0
	t.pinned--
	var drop bool
	if e.viewed.IsZero() {
		t.remove(el)
		drop = true
	}
	t.mu.Unlock()
	if drop {
		if err := t.cfg.Store.Untrack(ctx, []Key{k}); err != nil {
			t.cfg.Logger.Warn("history: untrack", "key", k.String(), "err", err)
		}
	}
}

// Pinned lists the pinned servers with their intervals.
func (t *Tracker) Pinned() map[Key]time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[Key]time.Duration, t.pinned)
	for k, el := range t.entries {
		if e := el.Value.(*entry); e.pin > 0 {
			out[k] = e.pin
		}
	}
	return out
}

// Len is the size of the tracked set.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Len()
}

// Max is the most servers tracked at once (TrackerConfig.Max).
func (t *Tracker) Max() int { return t.cfg.Max }

// IsTracked reports whether k is in the tracked set.
func (t *Tracker) IsTracked(k Key) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.entries[k]
	return ok
}

// Interval is how often each server is sampled now: Every, or longer when
// the set is too large for the budget.
func (t *Tracker) Interval() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interval()
}

func (t *Tracker) interval() time.Duration {
	need := time.Duration(float64(t.lru.Len()) / t.cfg.Budget * float64(time.Second))
	return max(t.cfg.Every, need)
}

// every is e's interval: its pin's, else the tracked set's (the caller
// holds t.mu).
func (t *Tracker) every(e *entry) time.Duration {
	if e.pin > 0 {
		return e.pin
	}
	return t.interval()
}

// View records that k was viewed (or listed by a master) now, tracking it
// if it was not. The caller decides whether k may be tracked at all: the
// relay's policy must allow it. It reports whether k is tracked now.
func (t *Tracker) View(ctx context.Context, k Key, src Source) bool {
	if !k.Valid() {
		return false
	}
	now := t.cfg.now()
	var evicted []Key
	var write bool
	t.mu.Lock()
	el, ok := t.entries[k]
	var e *entry
	if ok {
		e = el.Value.(*entry)
		e.viewed = now
		t.lru.MoveToBack(el)
		write = now.Sub(e.persisted) >= ViewPersistEvery
	} else {
		for t.lru.Len()-t.pinned >= t.cfg.Max {
			el := t.evictable()
			if el == nil {
				break
			}
			evicted = append(evicted, t.remove(el).key)
		}
		e = &entry{key: k, source: src, viewed: now, next: now, qi: -1}
		t.entries[k] = t.lru.PushBack(e)
		heap.Push(&t.queue, e)
		write = true
	}
	if write {
		e.persisted = now
	}
	t.mu.Unlock()
	if len(evicted) > 0 {
		if err := t.cfg.Store.Untrack(ctx, evicted); err != nil {
			t.cfg.Logger.Warn("history: untrack", "err", err)
		}
	}
	if write {
		if err := t.cfg.Store.Track(ctx, []Server{{Key: k, Source: src, LastViewed: now}}); err != nil {
			t.cfg.Logger.Warn("history: track", "key", k.String(), "err", err)
		}
	}
	return true
}

// Run samples the tracked set until ctx ends, and prunes the store once
// an hour. It returns when every probe it started has finished. Without a
// Probe it returns at once with an error.
func (t *Tracker) Run(ctx context.Context) error {
	if t.cfg.Probe == nil {
		return errors.New("history: TrackerConfig.Probe is required to Run")
	}
	var wg sync.WaitGroup
	defer t.releaseLeases()
	defer wg.Wait()
	t.prune(ctx)
	lastPrune := t.cfg.now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		now := t.cfg.now()
		for _, e := range t.due(ctx, now) {
			wg.Go(func() { t.sample(ctx, e) })
		}
		if now.Sub(lastPrune) >= time.Hour {
			lastPrune = now
			t.prune(ctx)
		}
	}
}

// due untracks idle servers, then takes the servers whose sample is due,
// most overdue first, as many as the budget's tokens allow, and marks them
// busy with their next time set.
func (t *Tracker) due(ctx context.Context, now time.Time) []*entry {
	t.mu.Lock()
	var idle []Key
	if now.Sub(t.lastIdle) >= time.Minute {
		t.lastIdle = now
		for el := t.lru.Front(); el != nil; {
			e := el.Value.(*entry)
			next := el.Next()
			if now.Sub(e.viewed) < t.cfg.Idle && e.pin == 0 {
				break // the rest were viewed more recently
			}
			if !e.busy && e.pin == 0 {
				idle = append(idle, t.remove(el).key)
			}
			el = next
		}
	}
	// Refill: Budget tokens per second, at most a quarter second's worth
	// saved, so that no window of T seconds sees more than Budget*T+Budget/4
	// (+1: the cap keeps the fraction of a token a tick leaves over, or a
	// budget whose quarter second is not a whole number of tokens, 10/s
	// sampled every 250 ms, would lose it at every tick and give 8/s).
	if now.After(t.last) {
		t.tokens = min(t.tokens+now.Sub(t.last).Seconds()*t.cfg.Budget, max(t.cfg.Budget/4, 1)+1)
		t.last = now
	}
	var out []*entry
	iv := t.interval()
	for t.tokens >= 1 && len(t.queue) > 0 && !t.queue[0].next.After(now) {
		e := heap.Pop(&t.queue).(*entry)
		e.busy = true
		e.next = now.Add(iv)
		if e.pin > 0 {
			e.next = now.Add(e.pin)
		}
		out = append(out, e)
		t.tokens--
	}
	t.running += len(out)
	t.mu.Unlock()
	if len(idle) > 0 {
		if err := t.cfg.Store.Untrack(ctx, idle); err != nil {
			t.cfg.Logger.Warn("history: untrack idle", "err", err)
		}
	}
	if t.probes != nil {
		for range out {
			t.probes <- struct{}{}
		}
	}
	return out
}

func (t *Tracker) sample(ctx context.Context, e *entry) {
	if !t.holdsLease(ctx, e) {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	at := t.cfg.now()
	s := t.cfg.Probe(pctx, e.key)
	cancel()
	t.mu.Lock()
	t.done(e)
	t.mu.Unlock()
	if ctx.Err() != nil {
		return // shutting down: the probe was cut short, its state is not the server's
	}
	if s.State == 0 {
		return // the relay's or the network's doing, not the server's
	}
	s.Key = e.key
	if s.At.IsZero() {
		s.At = at
	}
	if err := t.cfg.Store.Record(ctx, []Sample{s}); err != nil {
		t.cfg.Logger.Warn("history: record", "key", e.key.String(), "err", err)
	}
}

// done puts e back in the queue after its probe (the caller holds t.mu).
func (t *Tracker) done(e *entry) {
	e.busy = false
	t.running--
	if !e.removed {
		heap.Push(&t.queue, e)
	}
}

func (t *Tracker) prune(ctx context.Context) {
	now := t.cfg.now()
	p, err := t.cfg.Store.Prune(ctx, now.Add(-RawRetention), now.Add(-HourRetention))
	if err != nil {
		t.cfg.Logger.Warn("history: prune", "err", err)
		return
	}
	if p != (Pruned{}) {
		t.cfg.Logger.Info("history: pruned", "samples", p.Samples, "hours", p.Hours, "servers", p.Servers)
	}
}
