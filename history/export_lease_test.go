package history

import (
	"context"
	"time"
)

// Step is one scheduling step at now with the due samples taken at once
// (lease, probe, record), as Run would, without its ticker.
func (t *Tracker) Step(ctx context.Context, now time.Time) {
	for _, e := range t.due(ctx, now) {
		t.sample(ctx, e)
	}
}
