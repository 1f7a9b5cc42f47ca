package ttlcache

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	now := time.Unix(1e9, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := New(1000, func(b []byte) int { return len(b) }, clock)
	var fills atomic.Int32
	fill := func(n int) func() ([]byte, error) {
		return func() ([]byte, error) {
			fills.Add(1)
			return bytes.Repeat([]byte{'x'}, n), nil
		}
	}

	// Concurrent asks for one key: one fill (they join its flight, or find
	// its value), all get the value.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			b, err := c.Get("a", time.Minute, fill(100))
			if err != nil || len(b) != 100 {
				t.Errorf("get: %d bytes, %v", len(b), err)
			}
		})
	}
	wg.Wait()
	if n := fills.Load(); n != 1 {
		t.Errorf("%d fills for 20 concurrent asks", n)
	}

	// Expired: filled again.
	advance(2 * time.Minute)
	c.Get("a", time.Minute, fill(100))
	if n := fills.Load(); n != 2 {
		t.Errorf("%d fills after expiry, want 2", n)
	}

	// Bounded bytes: 30 values of 100 bytes in a 1000-byte cache.
	for i := range 30 {
		c.Get("k"+strconv.Itoa(i), time.Minute, fill(100))
		if b := c.Bytes(); b > 1000 {
			t.Fatalf("cache holds %d bytes, bound 1000", b)
		}
	}
	if c.Len() != 10 || c.Bytes() != 1000 {
		t.Errorf("holds %d values, %d bytes; want 10, 1000", c.Len(), c.Bytes())
	}

	// A failed fill is not kept.
	boom := errors.New("boom")
	if _, err := c.Get("f", time.Minute, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
	if b, err := c.Get("f", time.Minute, fill(10)); err != nil || len(b) != 10 {
		t.Errorf("after a failure: %d bytes, %v", len(b), err)
	}
}
