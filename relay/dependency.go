package relay

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// dependency tracks one store's health. It starts up; an error marks it
// down, and while it is down the relay works without it and a prober pings
// it every sharedProbeEvery until it answers or the relay shuts down.
type dependency struct {
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

func newDependency(d Dependency, timeout time.Duration, log func(string, ...any), stop <-chan struct{}) *dependency {
	x := &dependency{d: d, timeout: timeout, log: log, stop: stop}
	x.up.Store(true)
	return x
}

// usable reports whether the store may be used now.
func (x *dependency) usable() bool { return x.up.Load() }

// probe pings the store and records the result; it reports whether the
// store answered.
func (x *dependency) probe() bool {
	ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
	defer cancel()
	if err := x.d.Ping(ctx); err != nil {
		x.fail(err) // from the prober: it is already marked, and probing
		return false
	}
	x.ok()
	return true
}

func (x *dependency) fail(err error) {
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

// prober pings the store until it answers or the relay shuts down.
func (x *dependency) prober() {
	defer x.wg.Done()
	t := time.NewTicker(sharedProbeEvery)
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
		if x.probe() {
			x.mu.Lock()
			x.probing = false
			x.mu.Unlock()
			return
		}
	}
}

func (x *dependency) ok() {
	x.mu.Lock()
	was := x.up.Swap(true)
	since := x.since
	x.mu.Unlock()
	if !was {
		x.log("relay: shared store back", "dependency", x.d.Name(), "down_for", time.Since(since).Round(time.Millisecond).String())
	}
}

// healthy reports whether the store is up, and "up" or "down since
// 2026-01-02T15:04:05Z: dial tcp ...: connection refused".
func (x *dependency) healthy() (bool, string) {
	if x.up.Load() {
		return true, "up"
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return false, "down since " + x.since.UTC().Format(time.RFC3339) + ": " + x.lastErr
}
