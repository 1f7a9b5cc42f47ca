package history

import (
	"context"
	"time"
)

// Leaser decides which of several instances sharing one Store samples each
// tracked server (history/postgres implements it). Every instance tracks
// the servers its visitors view, but only the holder of a server's lease
// probes it; the others ask again when the lease ends, so a holder that
// dies hands its servers over once its leases run out.
//
// The tracker asks at every sample it would take, for a lease of 5/4 of
// its interval: the holder renews at each sample, a non-holder asks again
// right after the holder's lease ends. A dead holder's servers are
// therefore sampled again at most 5/4 of an interval (plus leaseSlack)
// after its last sample: within two sample periods. Lease times are the
// instances' clocks, which must agree to well within an interval (NTP).
type Leaser interface {
	// Lease takes or renews the lease on k until the given time, unless
	// another holder's lease is still running at now. It reports whether
	// the caller holds it, and until when the lease (its or another's)
	// runs.
	Lease(ctx context.Context, k Key, now, until time.Time) (held bool, expires time.Time, err error)
	// Release gives up every lease of this instance (shutdown), so that
	// the others take over at once.
	Release(ctx context.Context) error
}

// leaseSlack is how long after another holder's lease ends an instance
// asks for it: enough for the holder's renewal to land first.
const leaseSlack = 500 * time.Millisecond

// holdsLease asks cfg.Leases for e's lease. When another instance holds
// it, e is released (no probe) and rescheduled for when that lease ends.
// When the store cannot answer, e keeps what it last knew.
func (t *Tracker) holdsLease(ctx context.Context, e *entry) bool {
	l := t.cfg.Leases
	if l == nil {
		return true
	}
	now := t.cfg.now()
	t.mu.Lock()
	iv := t.every(e)
	t.mu.Unlock()
	held, until, err := l.Lease(ctx, e.key, now, now.Add(iv*5/4))
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.cfg.Logger.Warn("history: lease", "key", e.key.String(), "err", err)
		held, until = e.leased, now.Add(iv)
	}
	e.leased = held
	if held {
		return true
	}
	e.next = until.Add(leaseSlack)
	t.done(e)
	return false
}

// releaseLeases gives up this instance's leases when Run ends.
func (t *Tracker) releaseLeases() {
	if t.cfg.Leases == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.cfg.Leases.Release(ctx); err != nil {
		t.cfg.Logger.Warn("history: release leases", "err", err)
	}
}
