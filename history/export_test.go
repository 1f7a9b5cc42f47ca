package history

import (
	"context"
	"time"
)

// SetClock replaces the tracker's clock (before NewTracker).
func SetClock(cfg *TrackerConfig, now func() time.Time) { cfg.now = now }

// Due is one scheduling step at time now: it returns the keys whose probe
// would start, and marks them finished at once.
func (t *Tracker) Due(now time.Time) []Key {
	es := t.due(context.Background(), now)
	var ks []Key
	t.mu.Lock()
	for _, e := range es {
		t.done(e)
		ks = append(ks, e.key)
	}
	t.mu.Unlock()
	return ks
}
