package relay

import (
	"testing"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// TestSilentCooldown checks that a target that left 3 queries in a row
// unanswered is answered at once with a timeout, without a datagram, until
// its cooldown ends; that one exchange then goes through again; and that a
// target that answers never cools down.
func TestSilentCooldown(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 300 * time.Millisecond
	cfg.SilentCooldown = time.Second
	cfg.CacheTTL = -1
	clock := newFakeClock()
	cfg.Clock = clock.now
	f := newRelay(t, cfg)
	silent := newResponder(t, nil)
	live := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)

	id := uint32(0)
	// The same question every time, as a page's refresh asks it.
	ask := func(target string) wire.Frame {
		t.Helper()
		id++
		c.query(ctx, id, target, "RQsame")
		_, final := c.collect(ctx, id)
		return final
	}
	for i := range silentStreak {
		wantError(t, ask(silent.addr), wire.CodeTimeout, wire.RuleTimeout)
		if n := silent.count.Load(); n != int64(i+1) {
			t.Fatalf("query %d: the server got %d datagrams", i+1, n)
		}
	}
	start := time.Now()
	final := ask(silent.addr)
	wantError(t, final, wire.CodeTimeout, wire.RuleCooldown)
	if time.Since(start) >= cfg.ReplyWindow {
		t.Errorf("the cooldown answer took %v: it must not wait for the window", time.Since(start))
	}
	if n := silent.count.Load(); n != silentStreak {
		t.Fatalf("a cooling target received a datagram (%d in all)", n)
	}
	// Another question to the same server is not cooling down: the server
	// may ignore one kind of query (another protocol's probe, another
	// version) and answer others.
	c.query(ctx, 500, silent.addr, "RQother")
	_, final = c.collect(ctx, 500)
	wantError(t, final, wire.CodeTimeout, wire.RuleTimeout)
	if n := silent.count.Load(); n != silentStreak+1 {
		t.Fatalf("another question to the cooling server: it got %d datagrams, want %d", n, silentStreak+1)
	}
	// After the cooldown, one exchange goes through again.
	clock.advance(cfg.SilentCooldown)
	wantError(t, ask(silent.addr), wire.CodeTimeout, wire.RuleTimeout)
	if n := silent.count.Load(); n != silentStreak+2 {
		t.Fatalf("after the cooldown the server got %d datagrams, want %d", n, silentStreak+2)
	}
	wantError(t, ask(silent.addr), wire.CodeTimeout, wire.RuleCooldown)

	// A server that answers does not cool down.
	for range 2 * silentStreak {
		if fr := ask(live.addr); fr.Type != wire.FrameEnd {
			t.Fatalf("live server: %v %q", fr.Type, fr.Message)
		}
	}
	if got := f.metric(`querylens_relay_timeouts_total{rule="cooldown"}`); got != 2 {
		t.Fatalf("cooldown answers counted %v, want 2", got)
	}
}

// TestSilenceStreakEnds checks the bookkeeping: a reply ends a streak, and
// the table forgets cooldowns that ended.
func TestSilenceStreakEnds(t *testing.T) {
	sl := newSilence(time.Second, 2)
	a, b, c := "question a", "question b", "question c"
	for range silentStreak - 1 {
		sl.silent(a, 0)
	}
	sl.heard(a)
	sl.silent(a, 0)
	if _, ok := sl.cooling(a, 0); ok {
		t.Fatal("a reply must end the streak")
	}
	for range silentStreak {
		sl.silent(b, 0)
	}
	if left, ok := sl.cooling(b, 100*time.Millisecond); !ok || left != 900*time.Millisecond {
		t.Fatalf("cooling %v %v, want 900ms", left, ok)
	}
	// The table is full (2); once b's cooldown is long over, c fits.
	sl.silent(c, 5*time.Second)
	if _, tracked := sl.m[c]; !tracked || len(sl.m) > 2 {
		t.Fatalf("table %v after a sweep", sl.m)
	}
}
