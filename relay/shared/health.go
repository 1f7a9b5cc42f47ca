package shared

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// probeEvery is how often a store that is down is pinged.
const probeEvery = time.Second

// Health tracks one store's health. It starts up; an error marks it down,
// and while it is down its users work without it and a prober pings it
// every second until it answers or stop is closed.
type Health struct {
	d       Dependency
	timeout time.Duration
	log     func(msg string, args ...any)
	stop    <-chan struct{} // closed when the relay shuts down

	up     atomic.Bool
	errors atomic.Uint64

	mu      sync.Mutex
	since   time.Time
	lastErr string
	probing bool
	wg      sync.WaitGroup
}

// NewHealth tracks d, pinging it with timeout while it is down, logging
// with log when it goes down and comes back, until stop is closed.
func NewHealth(d Dependency, timeout time.Duration, log func(string, ...any), stop <-chan struct{}) *Health {
	x := &Health{d: d, timeout: timeout, log: log, stop: stop}
	x.up.Store(true)
	return x
}

// Name is the store's name.
func (x *Health) Name() string { return x.d.Name() }

// Usable reports whether the store may be used now.
func (x *Health) Usable() bool { return x.up.Load() }

// Errors counts the failures reported with Fail.
func (x *Health) Errors() uint64 { return x.errors.Load() }

// Wait waits for the prober to stop (after stop is closed).
func (x *Health) Wait() { x.wg.Wait() }

// Probe pings the store and records the result; it reports whether the
// store answered.
func (x *Health) Probe() bool {
	ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
	defer cancel()
	if err := x.d.Ping(ctx); err != nil {
		x.Fail(err) // from the prober: it is already marked, and probing
		return false
	}
	x.ok()
	return true
}

// Fail records a failed or timed-out operation: the store is down until a
// ping answers.
func (x *Health) Fail(err error) {
	x.errors.Add(1)
	x.mu.Lock()
	x.lastErr = err.Error()
	was := x.up.Swap(false)
	if was {
		x.since = time.Now()
	}
	start := !x.probing
	select {
	case <-x.stop:
		start = false
	default:
	}
	if start {
		x.probing = true
		x.wg.Add(1)
	}
	x.mu.Unlock()
	if was {
		x.log("relay: shared store down, serving with the local cache and limits", "dependency", x.d.Name(), "err", err.Error())
	}
	if start {
		go x.prober()
	}
}

// prober pings the store until it answers or stop is closed.
func (x *Health) prober() {
	defer x.wg.Done()
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-x.stop:
			x.mu.Lock()
			x.probing = false
			x.mu.Unlock()
			return
		case <-t.C:
		}
		if x.Probe() {
			x.mu.Lock()
			x.probing = false
			x.mu.Unlock()
			return
		}
	}
}

func (x *Health) ok() {
	x.mu.Lock()
	was := x.up.Swap(true)
	since := x.since
	x.mu.Unlock()
	if !was {
		x.log("relay: shared store back", "dependency", x.d.Name(), "down_for", time.Since(since).Round(time.Millisecond).String())
	}
}

// Healthy reports whether the store is up, and "up" or "down since
// 2026-01-02T15:04:05Z: dial tcp ...: connection refused".
func (x *Health) Healthy() (bool, string) {
	if x.up.Load() {
		return true, "up"
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return false, "down since " + x.since.UTC().Format(time.RFC3339) + ": " + x.lastErr
}
