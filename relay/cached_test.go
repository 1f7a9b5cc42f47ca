package relay

import (
	"errors"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// TestExchangeCached: a cache-only exchange sends nothing; it is refused
// (not-cached) until an ordinary exchange has filled the cache, and then
// answered from it.
func TestExchangeCached(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	f := newRelay(t, testConfig())
	plain := newResponder(t, echoReply)

	_, err := f.srv.ExchangeCached(ctx, testProto, plain.addr, &testQuery{tag: "x", parts: 1})
	var ref *wire.RefusedError
	if !errors.As(err, &ref) || ref.Code != wire.CodeRateLimited || ref.Rule() != wire.RuleNotCached {
		t.Fatalf("before any exchange: %v, want %s refusal", err, wire.RuleNotCached)
	}
	if n := plain.count.Load(); n != 0 {
		t.Fatalf("the server got %d datagrams from a cache-only exchange", n)
	}
	if got := f.metric(`querylens_relay_refusals_total{rule="not-cached"}`); got != 1 {
		t.Errorf("not-cached refusals counted %v, want 1", got)
	}

	res, err := f.srv.Exchange(ctx, testProto, plain.addr, &testQuery{tag: "x", parts: 1})
	if err != nil || !res.Done {
		t.Fatalf("exchange: %+v %v", res, err)
	}
	f.settled(ctx)
	q := &testQuery{tag: "x", parts: 1}
	res, err = f.srv.ExchangeCached(ctx, testProto, plain.addr, q)
	if err != nil || !res.Done || !res.FromCache || string(q.got[0]) != "RAx" {
		t.Fatalf("after the exchange: %+v %v %q", res, err, q.got)
	}
	if n := plain.count.Load(); n != 1 {
		t.Errorf("the server got %d datagrams, want the one exchange's", n)
	}
	// Another question of the same server is not in the cache.
	if _, err := f.srv.ExchangeCached(ctx, testProto, plain.addr, &testQuery{tag: "y", parts: 1}); !errors.As(err, &ref) || ref.Rule() != wire.RuleNotCached {
		t.Errorf("another question: %v, want %s", err, wire.RuleNotCached)
	}
}
