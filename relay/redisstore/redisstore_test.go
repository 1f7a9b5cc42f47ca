package redisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/internal/testredis"
	"github.com/querylens/querylens/relay/shared"
)

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(url, Options{Prefix: "t" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// claim is Claim without buckets, in the shape the tests read best.
func claim(ctx context.Context, s *Store, key string, hold time.Duration) (shared.Entry, bool, error) {
	c, err := s.Claim(ctx, key, hold, nil)
	return c.Entry, c.Owner, err
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenBadURL(t *testing.T) {
	for _, u := range []string{"", "http://x", "redis://h:notaport", "redis://h/notadb"} {
		if _, err := Open(u, Options{}); err == nil {
			t.Errorf("Open(%q): no error", u)
		}
	}
}

// TestCacheLifecycle walks one entry through claim, append, wait, finish
// and a cache hit, as two relays would.
func TestCacheLifecycle(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)

	_, owner, err := claim(ctx, s, "k1", 2*time.Second)
	if err != nil || !owner {
		t.Fatalf("first Claim: owner=%v err=%v, want the owner", owner, err)
	}
	e, owner, err := claim(ctx, s, "k1", 2*time.Second)
	if err != nil || owner {
		t.Fatalf("second Claim: owner=%v err=%v, want a follower", owner, err)
	}
	if e.Status != shared.Pending || len(e.Replies) != 0 {
		t.Fatalf("second Claim: %+v, want pending without replies", e)
	}
	// A waiter blocks until the owner appends.
	type res struct {
		e   shared.Entry
		err error
	}
	got := make(chan res, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		e, err := s.Wait(wctx, "k1", e.Cursor)
		got <- res{e, err}
	}()
	time.Sleep(50 * time.Millisecond)
	bin := []byte{0, 1, 2, 0xff, '\r', '\n'}
	if err := s.Publish(ctx, "k1", shared.Publish{Replies: []shared.Reply{{Data: bin, RTT: 1234}}}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.e.Replies) != 1 || string(r.e.Replies[0].Data) != string(bin) || r.e.Replies[0].RTT != 1234 {
		t.Fatalf("Wait: %+v, %v; want the appended reply", r.e, r.err)
	}
	if err := s.Publish(ctx, "k1", shared.Publish{Replies: []shared.Reply{{Data: []byte("two"), RTT: 9}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(ctx, "k1", shared.Publish{End: true, Status: shared.Done, TTL: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	e2, err := s.Wait(ctxFor(t, time.Second), "k1", r.e.Cursor)
	if err != nil || len(e2.Replies) != 1 || e2.Status != shared.Done || e2.TTL != 5*time.Second {
		t.Fatalf("Wait after the end: %+v, %v", e2, err)
	}
	// A late relay reads the whole entry at once: a cache hit.
	e3, owner, err := claim(ctx, s, "k1", 2*time.Second)
	if err != nil || owner || e3.Status != shared.Done || len(e3.Replies) != 2 {
		t.Fatalf("Claim of a cached entry: %+v owner=%v err=%v", e3, owner, err)
	}
	if e3.TTL <= 4*time.Second || e3.TTL > 5*time.Second {
		t.Errorf("cached TTL %v, want about 5s", e3.TTL)
	}
}

// TestEndsWithoutReplies: an entry that ended without being cached tells
// the relays waiting on it, and the next claim takes it over at once.
func TestEndsWithoutReplies(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)
	for _, tc := range []struct {
		st  shared.Status
		ttl time.Duration
	}{{shared.Timeout, time.Second}, {shared.Limited, time.Second}, {shared.Abandoned, time.Second}, {shared.Done, 0}} {
		key := "none" + strconv.Itoa(int(tc.st))
		if _, owner, err := claim(ctx, s, key, time.Second); err != nil || !owner {
			t.Fatal(owner, err)
		}
		e, owner, err := claim(ctx, s, key, time.Second)
		if err != nil || owner {
			t.Fatal(owner, err)
		}
		if tc.st == shared.Done {
			s.Publish(ctx, key, shared.Publish{Replies: []shared.Reply{{Data: []byte("r")}}})
		}
		if err := s.Publish(ctx, key, shared.Publish{End: true, Status: tc.st, TTL: tc.ttl}); err != nil {
			t.Fatal(err)
		}
		w, err := s.Wait(ctxFor(t, time.Second), key, e.Cursor)
		if err != nil || w.Status != tc.st {
			t.Fatalf("status %d: the waiter saw %+v, %v", tc.st, w, err)
		}
		if _, owner, err := claim(ctx, s, key, time.Second); err != nil || !owner {
			t.Fatalf("status %d: Claim after the end: owner=%v err=%v, want a new owner", tc.st, owner, err)
		}
	}
	// An owner that outlived its hold neither resurrects the entry nor
	// fails.
	if _, owner, _ := claim(ctx, s, "short", 50*time.Millisecond); !owner {
		t.Fatal("not owner")
	}
	time.Sleep(150 * time.Millisecond)
	if err := s.Publish(ctx, "short", shared.Publish{Replies: []shared.Reply{{Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(ctx, "short", shared.Publish{End: true, Status: shared.Done, TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, owner, _ := claim(ctx, s, "short", time.Second); !owner {
		t.Fatal("an expired entry came back")
	}
}

// TestOneOwner: of many relays claiming at once, exactly one owns.
func TestOneOwner(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)
	var owners atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, owner, err := claim(ctx, s, "race", time.Second)
			if err != nil {
				t.Error(err)
			}
			if owner {
				owners.Add(1)
			}
		})
	}
	wg.Wait()
	if n := owners.Load(); n != 1 {
		t.Fatalf("%d owners, want 1", n)
	}
}

func TestTake(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)
	slow := shared.Rate{PerSecond: 0.001, Burst: 10}
	// Concurrent takes spend exactly the burst.
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			i, err := s.Take(ctx, []shared.Bucket{{Key: "a", Rate: slow}})
			if err != nil {
				t.Error(err)
			}
			if i < 0 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 10 {
		t.Fatalf("%d takes allowed, want the burst of 10", ok.Load())
	}
	// All or none: b is empty, so c is not charged.
	one := shared.Rate{PerSecond: 0.001, Burst: 1}
	if i, _ := s.Take(ctx, []shared.Bucket{{Key: "b", Rate: one}}); i != -1 {
		t.Fatal("b refused its first take")
	}
	for range 3 {
		if i, _ := s.Take(ctx, []shared.Bucket{{Key: "c", Rate: one}, {Key: "b", Rate: one}}); i != 1 {
			t.Fatalf("refused index %d, want 1 (b)", i)
		}
	}
	if i, _ := s.Take(ctx, []shared.Bucket{{Key: "c", Rate: one}}); i != -1 {
		t.Fatal("c was charged by takes that b refused")
	}
	// Refill on Redis's clock: 20/s refills one token in 50 ms.
	fast := shared.Rate{PerSecond: 20, Burst: 1}
	if i, _ := s.Take(ctx, []shared.Bucket{{Key: "d", Rate: fast}}); i != -1 {
		t.Fatal("d refused its first take")
	}
	if i, _ := s.Take(ctx, []shared.Bucket{{Key: "d", Rate: fast}}); i != 0 {
		t.Fatal("d allowed a second take at once")
	}
	time.Sleep(80 * time.Millisecond)
	if i, _ := s.Take(ctx, []shared.Bucket{{Key: "d", Rate: fast}}); i != -1 {
		t.Fatal("d did not refill")
	}
}

// TestTakeKeep: a bucket with Keep refuses a take that would leave fewer
// than Keep tokens (a client asking for more than its share may not spend
// the last of a server's budget), in Take and in Claim's charge alike;
// without Keep the same bucket still gives its last tokens.
func TestTakeKeep(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)
	slow := shared.Rate{PerSecond: 0.001, Burst: 4}
	greedy := []shared.Bucket{{Key: "k", Rate: slow, Keep: 2}}
	for i := range 2 {
		if n, err := s.Take(ctx, greedy); err != nil || n != -1 {
			t.Fatalf("take %d with 2 kept of 4: refused %d, %v", i+1, n, err)
		}
	}
	if n, _ := s.Take(ctx, greedy); n != 0 {
		t.Fatalf("third take with 2 kept of 4: refused %d, want 0", n)
	}
	if c, err := s.Claim(ctx, "ck", time.Second, greedy); err != nil || c.Owner || c.Refused != 0 {
		t.Fatalf("claim charging the kept tokens: %+v, %v", c, err)
	}
	for i := range 2 {
		if n, _ := s.Take(ctx, []shared.Bucket{{Key: "k", Rate: slow}}); n != -1 {
			t.Fatalf("take %d without Keep: refused", i+3)
		}
	}
}

// TestDown: with Redis gone every call fails within its context, and the
// store works again once Redis is back, without reopening.
func TestDown(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	if err := s.Ping(ctxFor(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := claim(ctx, s, "x", time.Second); err == nil {
		t.Fatal("Claim with Redis down: no error")
	}
	if _, err := s.Take(ctx, []shared.Bucket{{Key: "x", Rate: shared.Rate{PerSecond: 1, Burst: 1}}}); err == nil {
		t.Fatal("Take with Redis down: no error")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("calls with Redis down took %v", d)
	}
	srv.Restart()
	var err error
	for range 50 {
		if err = s.Ping(ctxFor(t, time.Second)); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal("no recovery after restart:", err)
	}
	if _, owner, err := claim(ctxFor(t, time.Second), s, "x", time.Second); err != nil || !owner {
		t.Fatal(owner, err)
	}
}

func TestWaitTimesOut(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.Wait(ctx, "nothing", "0-0")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on nothing: %v, want DeadlineExceeded", err)
	}
}

// TestClaimCharges: a claim takes the target's tokens with it, atomically;
// an empty bucket refuses the claim and creates nothing.
func TestClaimCharges(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)
	one := shared.Rate{PerSecond: 0.001, Burst: 1}
	two := shared.Rate{PerSecond: 0.001, Burst: 2}
	charge := []shared.Bucket{{Key: "t", Rate: two}, {Key: "h", Rate: one}}
	c, err := s.Claim(ctx, "a", time.Second, charge)
	if err != nil || !c.Owner || c.Refused != -1 {
		t.Fatalf("first claim: %+v %v", c, err)
	}
	// A follower charges nothing.
	if c, err := s.Claim(ctx, "a", time.Second, charge); err != nil || c.Owner || c.Refused != -1 {
		t.Fatalf("follower: %+v %v", c, err)
	}
	c, err = s.Claim(ctx, "b", time.Second, charge)
	if err != nil || c.Owner || c.Refused != 1 {
		t.Fatalf("claim with h empty: %+v %v, want refused by bucket 1", c, err)
	}
	if _, owner, _ := claim(ctx, s, "b", time.Second); !owner {
		t.Fatal("a refused claim left an entry behind")
	}
	// t was not charged by the refused claim: one token left.
	if i, _ := s.Take(ctx, []shared.Bucket{{Key: "t", Rate: two}}); i != -1 {
		t.Fatal("the refused claim charged t")
	}
}

func TestLease(t *testing.T) {
	srv := testredis.Start(t)
	s := open(t, srv.URL())
	ctx := ctxFor(t, 10*time.Second)
	r := shared.Rate{PerSecond: 0.001, Burst: 10}
	for _, tc := range []struct{ want, got int }{{4, 4}, {4, 4}, {4, 2}, {4, 0}} {
		n, err := s.Lease(ctx, shared.Bucket{Key: "ip", Rate: r}, tc.want)
		if err != nil || n != tc.got {
			t.Fatalf("Lease(%d) = %d, %v; want %d", tc.want, n, err, tc.got)
		}
	}
	if _, err := s.Lease(ctx, shared.Bucket{Key: "ip", Rate: r}, 0); err == nil {
		t.Fatal("Lease(0): no error")
	}
}
