package relay

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// TestFollowOutcome: each way following another relay's exchange ends
// maps onto the outcome the relay's own exchange would have had.
func TestFollowOutcome(t *testing.T) {
	target := netip.MustParseAddrPort("192.0.2.1:10666")
	timeout := outcome{reason: wire.EndWindow, code: wire.CodeTimeout, rule: wire.RuleTimeout, msg: "no reply within 1500 ms"}
	tests := []struct {
		r       shared.FollowResult
		want    outcome
		handled bool
		ttl     time.Duration
	}{
		{shared.FollowResult{End: shared.FollowDone, TTL: 3 * time.Second}, outcome{reason: wire.EndWindow}, true, 3 * time.Second},
		{shared.FollowResult{End: shared.FollowDone, TTL: time.Minute}, outcome{reason: wire.EndWindow}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowDone}, outcome{reason: wire.EndWindow}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowFull}, outcome{reason: wire.EndByteCap}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowTimeout}, timeout, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowExpired}, timeout, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowLimited}, outcome{code: wire.CodeRateLimited, rule: wire.RulePerTarget, msg: target.String()}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowAbandoned}, outcome{reason: wire.EndWindow}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowStoreFailed}, outcome{reason: wire.EndWindow}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowCancelled}, outcome{reason: wire.EndCancelled}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowShutdown},
			outcome{reason: wire.EndCancelled, code: wire.CodeBusy, rule: wire.RuleShuttingDown, msg: "the relay is shutting down"}, true, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowAbandonedFallback}, outcome{}, false, 10 * time.Second},
		{shared.FollowResult{End: shared.FollowStoreFallback}, outcome{}, false, 10 * time.Second},
	}
	for _, tc := range tests {
		f := &fetch{s: &Server{cfg: Config{ReplyWindow: 1500 * time.Millisecond}}, target: target, ttl: 10 * time.Second}
		out, handled := f.followOutcome(tc.r)
		if out != tc.want || handled != tc.handled || f.ttl != tc.ttl {
			t.Errorf("%+v: %+v handled %v ttl %v, want %+v handled %v ttl %v", tc.r, out, handled, f.ttl, tc.want, tc.handled, tc.ttl)
		}
	}
}

// TestSharedEvents: what package shared reports lands in the relay's
// counters under their metric labels.
func TestSharedEvents(t *testing.T) {
	sh := &sharedState{}
	for _, e := range []shared.Event{shared.EventHit, shared.EventCoalesced, shared.EventCoalesced, shared.EventOwner,
		shared.EventLocal, shared.EventFallback, shared.EventAbandoned, shared.EventAbandoned} {
		sh.count(e)
	}
	labels, values := sh.outcomes.snapshot()
	if want := []string{sharedCoalesced, sharedFallback, sharedHit, sharedLocal, sharedOwner}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if want := []uint64{2, 1, 1, 1, 1}; !slices.Equal(values, want) {
		t.Errorf("counts %v, want %v", values, want)
	}
	if n := sh.abandoned.Load(); n != 2 {
		t.Errorf("abandoned %d, want 2", n)
	}
}
