package shared

import (
	"context"
	"errors"
	"time"
)

// waitSlice bounds one Wait of a follower, so that a stopped exchange (its
// askers left, or shutdown) is noticed even if the store cannot interrupt
// a blocked read.
const waitSlice = 250 * time.Millisecond

// FollowEnd is how following another relay's entry ended.
type FollowEnd uint8

const (
	FollowDone              FollowEnd = iota // the owner ended with replies; FollowResult.TTL is how long it stays cached
	FollowFull                               // OnReply asked to stop (the follower's reply cap)
	FollowTimeout                            // the owner got no reply within its window
	FollowLimited                            // the owner's query was refused by a shared limit
	FollowAbandoned                          // the owner gave up after replies came, or after the window closed: end with them
	FollowAbandonedFallback                  // the owner gave up before any reply: query upstream instead
	FollowExpired                            // the window closed with no reply, neither stopped nor shut down
	FollowCancelled                          // the window closed after replies came, or the follower stopped
	FollowShutdown                           // the window closed while the relay shuts down
	FollowStoreFailed                        // the store failed after replies came: end with them
	FollowStoreFallback                      // the store failed before any reply: query upstream instead
)

// Fallback reports whether the follower must query upstream itself.
func (e FollowEnd) Fallback() bool { return e == FollowAbandonedFallback || e == FollowStoreFallback }

// FollowResult is how Follow ended.
type FollowResult struct {
	End     FollowEnd
	TTL     time.Duration // with FollowDone: as the owner published it (0: unknown)
	Replies int           // how many replies were handed to OnReply
}

// FollowHooks connect Follow to the follower.
type FollowHooks struct {
	// OnReply takes one reply; it returns true when the follower must
	// stop (its cap is reached).
	OnReply func(Reply) (stop bool)
	// Stopped reports, once the window closed, whether the follower was
	// stopped (its askers left) and whether the relay is shutting down.
	Stopped func() (stopped, shutdown bool)
}

// Follow streams another relay's entry under key, starting from e (what
// Claim returned), into h.OnReply until the entry ends, the store fails or
// ctx (the follower's reply window, cancelled when it stops) ends. It
// counts EventCoalesced (e pending) or EventHit first, then
// EventAbandoned, EventFallback, and marks the cache failed when it is.
func (s *Stores) Follow(ctx context.Context, key string, e Entry, h FollowHooks) FollowResult {
	if e.Status == Pending {
		s.count(EventCoalesced)
	} else {
		s.count(EventHit)
	}
	got := 0
	for {
		for _, r := range e.Replies {
			got++
			if h.OnReply(r) {
				return FollowResult{End: FollowFull, Replies: got}
			}
		}
		switch e.Status {
		case Done:
			return FollowResult{End: FollowDone, TTL: e.TTL, Replies: got}
		case Timeout:
			return FollowResult{End: FollowTimeout, Replies: got}
		case Limited:
			return FollowResult{End: FollowLimited, Replies: got}
		case Abandoned:
			s.count(EventAbandoned)
			if got == 0 && ctx.Err() == nil {
				s.count(EventFallback)
				return FollowResult{End: FollowAbandonedFallback}
			}
			return FollowResult{End: FollowAbandoned, Replies: got}
		}
		wctx, wcancel := context.WithTimeout(ctx, waitSlice)
		next, err := s.Cache.Wait(wctx, key, e.Cursor)
		// Whether the slice was over must be read before wcancel, which
		// ends wctx whatever happened: read after, every store error
		// looked like a slice passing, and the follower asked the failing
		// store again and again until its window closed.
		sliceOver := wctx.Err() != nil
		wcancel()
		switch {
		case err == nil:
			e = next
			continue
		case ctx.Err() != nil && (sliceOver || errors.Is(err, context.DeadlineExceeded)):
			stopped, shutdown := h.Stopped()
			switch {
			case shutdown:
				return FollowResult{End: FollowShutdown, Replies: got}
			case stopped || got > 0:
				return FollowResult{End: FollowCancelled, Replies: got}
			}
			return FollowResult{End: FollowExpired}
		case sliceOver || errors.Is(err, context.DeadlineExceeded):
			e = Entry{Cursor: e.Cursor}
			continue
		}
		s.CacheHealth.Fail(err)
		if got == 0 {
			s.count(EventFallback)
			return FollowResult{End: FollowStoreFallback}
		}
		return FollowResult{End: FollowStoreFailed, Replies: got}
	}
}
