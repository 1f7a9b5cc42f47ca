// Package ctxsleep waits for a duration or a context, whichever ends
// first: the real clock behind the injectable Sleep of the packages that
// retry or pace (masters, alerts/deliver, alerts/worker).
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, and then returns ctx's error if it
// ended first. A d of 0 or less returns at once, with ctx's error if any.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
