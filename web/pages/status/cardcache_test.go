package status

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCardCache(t *testing.T) {
	c := &cardCache{m: map[string]*cardEntry{}, max: 1000}
	now := time.Now()
	var renders atomic.Int32
	render := func(n int) func() ([]byte, error) {
		return func() ([]byte, error) {
			renders.Add(1)
			time.Sleep(10 * time.Millisecond)
			return bytes.Repeat([]byte{'x'}, n), nil
		}
	}
	// Concurrent requests for one card: one render, all get it.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			b, err := c.get("a", now, time.Minute, render(100))
			if err != nil || len(b) != 100 {
				t.Errorf("get: %d bytes, %v", len(b), err)
			}
		})
	}
	wg.Wait()
	if n := renders.Load(); n != 1 {
		t.Errorf("%d renders for 20 concurrent requests", n)
	}
	// Expired: rendered again.
	c.get("a", now.Add(2*time.Minute), time.Minute, render(100))
	if n := renders.Load(); n != 2 {
		t.Errorf("%d renders after expiry, want 2", n)
	}
	// Bounded bytes: 30 cards of 100 bytes in a 1000-byte cache.
	for i := range 30 {
		c.get("k"+strconv.Itoa(i), now.Add(2*time.Minute), time.Minute, render(100))
		if c.bytes > c.max {
			t.Fatalf("cache holds %d bytes, bound %d", c.bytes, c.max)
		}
	}
	total := 0
	for _, e := range c.m {
		total += len(e.png)
	}
	if total != c.bytes {
		t.Errorf("accounted %d bytes, holds %d", c.bytes, total)
	}
	// A failed render is not cached.
	fail := errors.New("boom")
	if _, err := c.get("f", now, time.Minute, func() ([]byte, error) { return nil, fail }); !errors.Is(err, fail) {
		t.Errorf("err %v", err)
	}
	if b, err := c.get("f", now, time.Minute, render(10)); err != nil || len(b) != 10 {
		t.Errorf("after a failure: %d bytes, %v", len(b), err)
	}
}
