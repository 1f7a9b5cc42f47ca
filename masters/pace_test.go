package masters

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/internal/testredis"
	"github.com/querylens/querylens/relay/redisstore"
	"github.com/querylens/querylens/relay/shared"
)

func TestLocalPacer(t *testing.T) {
	clock := newFakeClock()
	p := NewLocalPacer(0, clock.now)
	ctx := context.Background()
	steps := []struct {
		advance time.Duration
		addr    string
		want    time.Duration
	}{
		{0, "a:1", 0},
		{0, "a:1", 2 * time.Second},
		{0, "b:1", 0}, // another address has its own pace
		{500 * time.Millisecond, "a:1", 1500 * time.Millisecond},
		{1500 * time.Millisecond, "a:1", 0},
		{time.Second, "a:1", time.Second},
	}
	for i, s := range steps {
		clock.advance(s.advance)
		if got := p.Reserve(ctx, s.addr); got != s.want {
			t.Errorf("step %d: Reserve(%s) = %v, want %v", i, s.addr, got, s.want)
		}
	}
}

func TestWaitPaces(t *testing.T) {
	clock := newFakeClock()
	p := NewLocalPacer(0, clock.now)
	ctx := context.Background()
	for i := range 5 {
		if err := wait(ctx, p, "a:1", clock.sleep); err != nil {
			t.Fatal(err)
		}
		if want := epoch.Add(time.Duration(i) * DefaultInterval); !clock.now().Equal(want) {
			t.Errorf("request %d at %v, want %v", i, clock.now(), want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := wait(cctx, p, "a:1", clock.sleep); !errors.Is(err, context.Canceled) {
		t.Errorf("wait after cancel: %v", err)
	}
}

// failingLimiter is a store that is down.
type failingLimiter struct{}

func (failingLimiter) Name() string               { return "down" }
func (failingLimiter) Ping(context.Context) error { return errors.New("down") }
func (failingLimiter) Take(context.Context, []shared.Bucket) (int, error) {
	return -1, errors.New("down")
}
func (failingLimiter) Lease(context.Context, shared.Bucket, int) (int, error) {
	return 0, errors.New("down")
}

func TestSharedPacerStoreDown(t *testing.T) {
	clock := newFakeClock()
	p := &SharedPacer{Local: NewLocalPacer(0, clock.now), Limiter: failingLimiter{}, Logger: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	if d := p.Reserve(ctx, "a:1"); d != 0 {
		t.Errorf("first Reserve with the store down = %v, want 0 (local pacing decides)", d)
	}
	if d := p.Reserve(ctx, "a:1"); d != DefaultInterval {
		t.Errorf("second Reserve with the store down = %v, want %v (local pacing holds)", d, DefaultInterval)
	}
}

// TestSharedPacerRedis: two instances sharing one Redis pace one master
// address together. The interval is an hour, so that no real time passing
// during the test can refill the bucket.
func TestSharedPacerRedis(t *testing.T) {
	srv := testredis.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{Prefix: "t" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pacer := func() *SharedPacer {
		return &SharedPacer{Local: NewLocalPacer(time.Hour, nil), Limiter: st, Timeout: 5 * time.Second}
	}
	a, b := pacer(), pacer()
	if d := a.Reserve(ctx, "198.51.100.1:27011"); d != 0 {
		t.Fatalf("instance A's first request: wait %v, want 0", d)
	}
	if d := b.Reserve(ctx, "198.51.100.1:27011"); d != time.Hour {
		t.Errorf("instance B right after A: wait %v, want an interval (%v)", d, time.Hour)
	}
	if d := b.Reserve(ctx, "198.51.100.2:27011"); d != 0 {
		t.Errorf("instance B, another master: wait %v, want 0", d)
	}
}
