package history

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Buffered is a Store whose Record keeps samples in memory while the
// underlying store fails (a database that is down or slow) and writes them,
// in order, once it answers again. The buffer is bounded: past Max samples
// the oldest are dropped and counted (Overflow), so an outage costs memory
// up to a fixed bound and then the oldest samples, never the process. The
// other methods pass through: reads fail while the store is down.
type Buffered struct {
	Store
	name    string
	max     int
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	buf     []Sample
	lastErr string
	since   time.Time

	up       atomic.Bool
	overflow atomic.Uint64
	written  atomic.Uint64 // samples written from the buffer

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// BufferedConfig configures NewBuffered.
type BufferedConfig struct {
	// Name names the store in logs and health lines ("postgres").
	Name string
	// Max bounds the samples held while the store fails. Default 100,000
	// (about 10 MB).
	Max int
	// Timeout bounds each write. Default 5 s.
	Timeout time.Duration
	// Retry is how often a failing store is tried again. Default 1 s.
	Retry  time.Duration
	Logger *slog.Logger
}

// NewBuffered wraps s. Close stops it (writing what it can first) and
// closes s.
func NewBuffered(s Store, cfg BufferedConfig) *Buffered {
	if cfg.Name == "" {
		cfg.Name = "history"
	}
	if cfg.Max <= 0 {
		cfg.Max = 100_000
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	b := &Buffered{Store: s, name: cfg.Name, max: cfg.Max, timeout: cfg.Timeout, log: cfg.Logger,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	b.up.Store(true)
	go b.flusher(cfg.Retry)
	return b
}

// Record writes samples, or buffers them while the store fails. It returns
// an error only for samples no store would take (*InvalidError) or after
// Close.
func (b *Buffered) Record(ctx context.Context, samples []Sample) error {
	for i, s := range samples {
		if err := CheckSample(i, s); err != nil {
			return err
		}
	}
	select {
	case <-b.stop:
		return ErrClosed
	default:
	}
	b.mu.Lock()
	pending := len(b.buf) > 0
	b.mu.Unlock()
	if !pending {
		wctx, cancel := context.WithTimeout(ctx, b.timeout)
		err := b.Store.Record(wctx, samples)
		cancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrClosed) {
			return err
		}
		b.fail(err)
	}
	b.push(samples)
	return nil
}

// push appends to the buffer, dropping the oldest past max.
func (b *Buffered) push(samples []Sample) {
	b.mu.Lock()
	b.buf = append(b.buf, samples...)
	if over := len(b.buf) - b.max; over > 0 {
		b.overflow.Add(uint64(over))
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *Buffered) fail(err error) {
	b.mu.Lock()
	b.lastErr = err.Error()
	was := b.up.Swap(false)
	if was {
		b.since = time.Now()
	}
	b.mu.Unlock()
	if was {
		b.log.Warn("history: store down, buffering samples", "store", b.name, "err", err.Error())
	}
}

// flusher writes the buffer whenever it is not empty, at most once per
// retry while the store fails.
func (b *Buffered) flusher(retry time.Duration) {
	defer close(b.done)
	t := time.NewTicker(retry)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
			if !b.up.Load() {
				continue // the ticker paces retries while down
			}
		case <-t.C:
		}
		b.flush()
	}
}

// flush writes the buffer in batches until it is empty or a write fails.
func (b *Buffered) flush() {
	const batch = 500
	for {
		b.mu.Lock()
		n := min(len(b.buf), batch)
		chunk := append([]Sample(nil), b.buf[:n]...)
		b.mu.Unlock()
		if n == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		err := b.Store.Record(ctx, chunk)
		cancel()
		if err != nil && !errors.Is(err, ErrInvalid) {
			b.fail(err)
			return
		}
		// Samples the store refuses as invalid cannot be written later
		// either: they go (Record checked them, so only a store stricter
		// than CheckSample gets here).
		b.mu.Lock()
		// Overflow may have dropped some of chunk's samples meanwhile:
		// remove only what is still at the front.
		drop := n
		for drop > 0 && (len(b.buf) < drop || b.buf[0] != chunk[n-drop]) {
			drop--
		}
		b.buf = append(b.buf[:0], b.buf[drop:]...)
		since := b.since
		was := b.up.Swap(true)
		b.mu.Unlock()
		b.written.Add(uint64(n))
		if !was {
			b.log.Info("history: store back, writing buffered samples", "store", b.name, "down_for", time.Since(since).Round(time.Millisecond).String())
		}
	}
}

// BufferStats is the state of a Buffered.
type BufferStats struct {
	Up       bool   // the last write succeeded
	Buffered int    // samples waiting
	Overflow uint64 // samples dropped because the buffer was full
	Written  uint64 // samples written from the buffer after a failure
}

// Stats returns the current state.
func (b *Buffered) Stats() BufferStats {
	b.mu.Lock()
	n := len(b.buf)
	b.mu.Unlock()
	return BufferStats{Up: b.up.Load(), Buffered: n, Overflow: b.overflow.Load(), Written: b.written.Load()}
}

// Name names the store (BufferedConfig.Name).
func (b *Buffered) Name() string { return b.name }

// Healthy reports whether the store takes writes and, if not, since when it
// fails, why, and what is buffered.
func (b *Buffered) Healthy() (bool, string) {
	st := b.Stats()
	if st.Up {
		return true, "up"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return false, "down since " + b.since.UTC().Format(time.RFC3339) + ": " + b.lastErr +
		" (" + strconv.Itoa(st.Buffered) + " samples buffered, " + strconv.FormatUint(st.Overflow, 10) + " dropped)"
}

// Close writes what it can of the buffer (bounded by the write timeout),
// stops, and closes the store. Samples still buffered are counted as
// overflow.
func (b *Buffered) Close() error {
	select {
	case <-b.stop:
		return ErrClosed
	default:
	}
	close(b.stop)
	<-b.done
	b.flush()
	b.mu.Lock()
	b.overflow.Add(uint64(len(b.buf)))
	b.buf = nil
	b.mu.Unlock()
	return b.Store.Close()
}
