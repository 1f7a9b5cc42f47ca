package shared

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var errBoom = errors.New("boom")

// waitResult is one answer of fakeStore.Wait.
type waitResult struct {
	e   Entry
	err error
}

// fakeStore is an in-memory Cache and Limiter whose answers the tests
// script: Wait returns the next of waits, or blocks (calling onBlock
// first) until its ctx ends; Publish records each batch and signals it on
// published, holding while gate is set until it is closed.
type fakeStore struct {
	mu       sync.Mutex
	waits    []waitResult
	cursors  []string // passed to Wait
	onBlock  func()
	batches  []Publish
	pubErr   error
	gate     chan struct{}
	claim    Claim
	claimErr error
	claims   [][]Bucket
	refuse   int // Take's answer
	takeErr  error
	tokens   int // Lease's bucket
	leaseErr error
	leases   []leaseCall

	published chan Publish
}

type leaseCall struct {
	b Bucket
	n int
}

func newFake() *fakeStore { return &fakeStore{refuse: -1, published: make(chan Publish, 64)} }

func (f *fakeStore) Name() string                   { return "fake" }
func (f *fakeStore) Ping(ctx context.Context) error { return nil }

func (f *fakeStore) Claim(ctx context.Context, key string, hold time.Duration, charge []Bucket) (Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims = append(f.claims, charge)
	return f.claim, f.claimErr
}

func (f *fakeStore) Publish(ctx context.Context, key string, p Publish) error {
	f.mu.Lock()
	gate, err := f.gate, f.pubErr
	f.batches = append(f.batches, p)
	f.mu.Unlock()
	f.published <- p
	if gate != nil {
		<-gate
	}
	return err
}

func (f *fakeStore) Wait(ctx context.Context, key, cursor string) (Entry, error) {
	f.mu.Lock()
	f.cursors = append(f.cursors, cursor)
	if len(f.waits) > 0 {
		r := f.waits[0]
		f.waits = f.waits[1:]
		f.mu.Unlock()
		return r.e, r.err
	}
	block := f.onBlock
	f.mu.Unlock()
	if block != nil {
		block()
	}
	<-ctx.Done()
	return Entry{}, ctx.Err()
}

func (f *fakeStore) Take(ctx context.Context, b []Bucket) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims = append(f.claims, b)
	return f.refuse, f.takeErr
}

func (f *fakeStore) Lease(ctx context.Context, b Bucket, n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leases = append(f.leases, leaseCall{b, n})
	if f.leaseErr != nil {
		return 0, f.leaseErr
	}
	got := min(n, f.tokens)
	f.tokens -= got
	return got, nil
}

// events records what Stores counted.
type events struct {
	mu sync.Mutex
	l  []Event
}

func (e *events) count(x Event) {
	e.mu.Lock()
	e.l = append(e.l, x)
	e.mu.Unlock()
}

func (e *events) list() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.l...)
}

// newStores makes Stores over f (as both cache and limiter), closed when
// t ends.
func newStores(t *testing.T, f *fakeStore) (*Stores, *events) {
	ev := &events{}
	s := NewStores(f, f, DefaultTimeout, func(string, ...any) {}, ev.count)
	t.Cleanup(s.Close)
	return s, ev
}
