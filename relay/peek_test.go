package relay

import (
	"net/netip"
	"testing"
	"time"
)

// TestPeek: Peek reads what an exchange left in the cache, never sends,
// and sees nothing once the entry expired.
func TestPeek(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 200 * time.Millisecond
	cfg.CacheTTL = time.Minute
	cfg.ProtocolCacheTTL = map[string]time.Duration{}
	clock := newFakeClock()
	cfg.Clock = clock.now
	f := newRelay(t, cfg)
	r := newResponder(t, echoReply)
	target := netip.MustParseAddrPort(r.addr)
	if got, ok := f.srv.Peek(testProto, target, []byte("RQpeek")); ok || got != nil || r.count.Load() != 0 {
		t.Fatalf("Peek before any exchange: %q %v, %d upstream", got, ok, r.count.Load())
	}
	q := &testQuery{tag: "peek", parts: 1}
	if res, err := f.srv.Exchange(ctx, testProto, r.addr, q); err != nil || !res.Done {
		t.Fatalf("exchange: %+v %v", res, err)
	}
	// The exchange settles in the cache once its upstream query ends.
	f.settled(ctx)
	for range 3 {
		got, ok := f.srv.Peek(testProto, target, []byte("RQpeek"))
		if !ok || len(got) != 1 || string(got[0]) != "RApeek" {
			t.Fatalf("Peek after the exchange: %q %v", got, ok)
		}
		got[0][0] = 'X' // a copy: the cache keeps its own
	}
	if _, ok := f.srv.Peek(testProto, target, []byte("RQother")); ok {
		t.Error("Peek of another question found an answer")
	}
	if n := r.count.Load(); n != 1 {
		t.Errorf("%d upstream queries, want the exchange's 1", n)
	}
	clock.advance(2 * time.Minute)
	if _, ok := f.srv.Peek(testProto, target, []byte("RQpeek")); ok {
		t.Error("Peek found an expired entry")
	}
}
