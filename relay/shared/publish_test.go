package shared

import (
	"slices"
	"sync"
	"testing"
	"time"
)

func data(rs []Reply) []string {
	var l []string
	for _, r := range rs {
		l = append(l, string(r.Data))
	}
	return l
}

// TestPublisherBatches: what arrives while a write is in flight goes out
// in one batch, in order, with the end.
func TestPublisherBatches(t *testing.T) {
	f := newFake()
	gate := make(chan struct{})
	f.gate = gate
	s, _ := newStores(t, f)
	var wg sync.WaitGroup
	p := s.NewPublisher("k", &wg)
	p.Add([]byte("a"), time.Millisecond)
	first := <-f.published // held at the gate
	p.Add([]byte("b"), 2*time.Millisecond)
	p.Add([]byte("c"), 3*time.Millisecond)
	p.Finish(Done, 5*time.Second)
	close(gate)
	wg.Wait()
	if got := data(first.Replies); !slices.Equal(got, []string{"a"}) || first.End {
		t.Errorf("first batch %q end %v, want [a] and no end", got, first.End)
	}
	if len(f.batches) != 2 {
		t.Fatalf("%d batches, want 2", len(f.batches))
	}
	second := f.batches[1]
	if got := data(second.Replies); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("second batch %q, want [b c]", got)
	}
	if !second.End || second.Status != Done || second.TTL != 5*time.Second {
		t.Errorf("second batch ends %v with %v, TTL %v; want the end, Done, 5s", second.End, second.Status, second.TTL)
	}
	if rtts := []uint32{second.Replies[0].RTT, second.Replies[1].RTT}; !slices.Equal(rtts, []uint32{2000, 3000}) {
		t.Errorf("RTTs %v µs, want [2000 3000]", rtts)
	}
}

// TestPublisherHolds: a lone reply waits publishDelay for company, then
// goes without the end; the end follows on its own.
func TestPublisherHolds(t *testing.T) {
	f := newFake()
	s, _ := newStores(t, f)
	var wg sync.WaitGroup
	p := s.NewPublisher("k", &wg)
	b := []byte("a")
	start := time.Now()
	p.Add(b, time.Duration(1<<40)*time.Microsecond) // beyond uint32 µs
	b[0] = 'x'                                      // Add copied it
	got := <-f.published
	if d := time.Since(start); d < publishDelay {
		t.Errorf("published after %v, want at least %v", d, publishDelay)
	}
	if !slices.Equal(data(got.Replies), []string{"a"}) || got.End {
		t.Errorf("batch %q end %v, want [a] and no end", data(got.Replies), got.End)
	}
	if got.Replies[0].RTT != 1<<32-1 {
		t.Errorf("RTT %d, want it capped at %d", got.Replies[0].RTT, uint32(1<<32-1))
	}
	p.Finish(Timeout, time.Second)
	wg.Wait()
	end := f.batches[len(f.batches)-1]
	if len(f.batches) != 2 || len(end.Replies) != 0 || !end.End || end.Status != Timeout {
		t.Errorf("batches %+v, want [a] then the end alone", f.batches)
	}
}

func TestPublisherEnd(t *testing.T) {
	tests := []struct {
		name    string
		status  Status
		ttl     time.Duration
		wantTTL time.Duration
	}{
		{"done", Done, 5 * time.Second, 5 * time.Second},
		{"done, no ttl", Done, 0, 0},
		{"done, negative ttl", Done, -time.Second, 0},
		{"timeout", Timeout, 5 * time.Second, 0},
		{"limited", Limited, 5 * time.Second, 0},
		{"abandoned", Abandoned, 5 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			s, _ := newStores(t, f)
			var wg sync.WaitGroup
			s.NewPublisher("k", &wg).Finish(tc.status, tc.ttl)
			wg.Wait()
			want := Publish{End: true, Status: tc.status, TTL: tc.wantTTL}
			if len(f.batches) != 1 || len(f.batches[0].Replies) != 0 || f.batches[0].End != want.End ||
				f.batches[0].Status != want.Status || f.batches[0].TTL != want.TTL {
				t.Errorf("published %+v, want one %+v", f.batches, want)
			}
		})
	}
}

// TestPublisherStoreFails: a failing write marks the cache down; a
// publisher on a cache that is down writes nothing and still ends.
func TestPublisherStoreFails(t *testing.T) {
	f := newFake()
	f.pubErr = errBoom
	s, _ := newStores(t, f)
	var wg sync.WaitGroup
	s.NewPublisher("k", &wg).Finish(Abandoned, 0)
	wg.Wait()
	if s.CacheHealth.Usable() || s.CacheHealth.Errors() != 1 {
		t.Errorf("cache usable %v with %d errors, want down with 1", s.CacheHealth.Usable(), s.CacheHealth.Errors())
	}
	p := s.NewPublisher("k2", &wg)
	p.Add([]byte("a"), 0)
	p.Finish(Done, time.Second)
	wg.Wait()
	if len(f.batches) != 1 {
		t.Errorf("%d writes, want only the first (the cache is down since)", len(f.batches))
	}
}
