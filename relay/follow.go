package relay

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// follow streams another relay's exchange (or its cached replies) into f.
func (f *fetch) follow(key string, e SharedEntry) (outcome, bool) {
	s := f.s
	sh := s.shared
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ReplyWindow)
	defer cancel()
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return outcome{reason: wire.EndCancelled}, true
	}
	f.stopFollow = cancel
	if e.Status == SharedPending {
		f.sharedFlags = wire.FlagCoalesced
	} else {
		f.sharedFlags = wire.FlagCached
	}
	f.mu.Unlock()
	if e.Status == SharedPending {
		sh.outcomes.add(sharedCoalesced, 1)
	} else {
		sh.outcomes.add(sharedHit, 1)
	}
	got := 0
	for {
		for _, r := range e.Replies {
			got++
			if f.add(r.Data, time.Duration(r.RTT)*time.Microsecond) {
				return outcome{reason: wire.EndByteCap}, true
			}
		}
		switch e.Status {
		case SharedDone:
			if e.TTL > 0 && e.TTL < f.ttl {
				f.ttl = e.TTL
			}
			return outcome{reason: wire.EndWindow}, true
		case SharedTimeout:
			return f.timeoutOutcome(), true
		case SharedLimited:
			return outcome{code: wire.CodeRateLimited, rule: wire.RulePerTarget, msg: f.target.String()}, true
		case SharedAbandoned:
			sh.abandoned.Add(1)
			if got == 0 && ctx.Err() == nil {
				sh.outcomes.add(sharedFallback, 1)
				return outcome{}, false
			}
			return outcome{reason: wire.EndWindow}, true
		}
		// Wait in slices so that a stopped exchange (its askers left, or
		// shutdown) is noticed even if the store cannot interrupt a
		// blocked read.
		wctx, wcancel := context.WithTimeout(ctx, 250*time.Millisecond)
		next, err := sh.cache.Wait(wctx, key, e.Cursor)
		wcancel()
		switch {
		case err == nil:
			e = next
			continue
		case ctx.Err() != nil && (wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)):
			f.mu.Lock()
			stopped, shutdown := f.stopped, f.shutdown
			f.mu.Unlock()
			switch {
			case shutdown:
				return outcome{reason: wire.EndCancelled, code: wire.CodeBusy, rule: wire.RuleShuttingDown, msg: "the relay is shutting down"}, true
			case stopped || got > 0:
				return outcome{reason: wire.EndCancelled}, true
			}
			return f.timeoutOutcome(), true
		case wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			e = SharedEntry{Cursor: e.Cursor}
			continue
		}
		// The store failed while this relay waited for another's replies:
		// ask upstream itself if nothing came yet and the window is open.
		sh.cacheDep.fail(err)
		if got == 0 {
			sh.outcomes.add(sharedFallback, 1)
			return outcome{}, false
		}
		return outcome{reason: wire.EndWindow}, true
	}
}

func (f *fetch) timeoutOutcome() outcome {
	return outcome{reason: wire.EndWindow, code: wire.CodeTimeout, rule: wire.RuleTimeout,
		msg: "no reply within " + strconv.FormatInt(f.s.cfg.ReplyWindow.Milliseconds(), 10) + " ms"}
}
