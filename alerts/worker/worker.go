// Package worker sends the alerts' outbox: it claims the rows due in the
// history database (history/outbox), sends each with a deliver.Sender, and
// deletes, reschedules or fails it.
//
//	Run ─▶ Claim(holder, Batch, now, now+Lease)
//	    ─▶ up to Concurrency sends at once (the Sender paces each destination)
//	    ─▶ Delivered │ Retry(error, now+backoff) │ Fail (after MaxAttempts,
//	                                               or an answer that will not change)
//
// Delivery is at least once, always under the row's message id (the
// generic webhook's webhook-id): a row whose worker stops between the
// claim and the outcome is claimed again when its lease ends (on
// shutdown the lease is cut to Release), and sent again. Live status
// boards (deliver.Sender.Board) are not outbox rows: they are edited in
// place from the watch's stored board ids, by whoever wires them.
//
// Apply (Holder) feeds samples to the store and holds them in memory,
// up to HoldMax, while the database is unreachable.
package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/deliver"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/internal/ctxsleep"
)

// Sender sends one message (*deliver.Sender is one). Give the worker's
// Sender few attempts of its own (deliver.Config.MaxAttempts 1 or 2):
// the outbox retries across restarts, with its own backoff.
type Sender interface {
	Send(ctx context.Context, d alerts.Destination, m alerts.Message) (deliver.Result, error)
}

// Config is a Worker's.
type Config struct {
	Store  outbox.Store
	Sender Sender
	// Dest finds a row's destination by name (the watches file's
	// current destinations). A row whose destination is gone, or is
	// now of another kind, fails.
	Dest func(name string) (alerts.Destination, bool)
	// Holder names this instance in its claims; empty: "worker".
	Holder string
	// Held, when set, is flushed by Run before each claim: the samples
	// it holds while the database does not answer.
	Held *Holder

	Batch       int           // rows claimed at once; 0: 16
	Concurrency int           // sends at once; 0: 4
	Lease       time.Duration // a claim's length; a send is cut off before it ends; 0: 2 minutes
	Release     time.Duration // on shutdown, in-flight rows are free again after this; 0: 5 s
	MaxAttempts int           // claims of a row before it fails; 0: 10
	BaseDelay   time.Duration // the first backoff; 0: 10 s
	MaxDelay    time.Duration // the longest backoff; 0: 1 hour
	Poll        time.Duration // Run's wait when nothing is due; 0: 2 s
	PruneEvery  time.Duration // Run prunes the outbox this often; 0: 1 hour
	KeepFailed  time.Duration // failed rows are kept this long; 0: outbox.KeepFailed
	MaxRows     int           // the outbox's cap; 0: outbox.MaxRows

	Now    func() time.Time                                 // nil: time.Now
	Sleep  func(ctx context.Context, d time.Duration) error // Run's waits; nil: a timer
	Jitter func() float64                                   // in [0, 1); nil: none (the Sender already jitters)
	Logf   func(format string, args ...any)                 // nil: no log; lines never carry a URL
}

// Outcomes of a delivery attempt, as counted.
const (
	Delivered   = "delivered"   // sent; the row is gone
	Retried     = "retried"     // failed for now; tried again later
	Failed      = "failed"      // given up on; the row stays, failed
	Interrupted = "interrupted" // the worker stopped during the send; the row is claimed again later
)

// Worker sends the outbox. Run it once (one Run at a time); RunOnce,
// Wake and Metrics are safe for concurrent use.
type Worker struct {
	cfg  Config
	wake chan struct{}

	mu         sync.Mutex
	deliveries map[countKey]uint64
	storeErrs  atomic.Uint64
	lastPrune  time.Time
}

type countKey struct {
	kind    alerts.DestKind
	outcome string
}

// New returns a worker; cfg.Store, Sender and Dest are required.
func New(cfg Config) (*Worker, error) {
	if cfg.Store == nil || cfg.Sender == nil || cfg.Dest == nil {
		return nil, errors.New("worker: Store, Sender and Dest are required")
	}
	if cfg.Holder == "" {
		cfg.Holder = "worker"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	defInt(&cfg.Batch, 16)
	defInt(&cfg.Concurrency, 4)
	defInt(&cfg.MaxAttempts, 10)
	defInt(&cfg.MaxRows, outbox.MaxRows)
	def(&cfg.Lease, 2*time.Minute)
	def(&cfg.Release, 5*time.Second)
	def(&cfg.BaseDelay, 10*time.Second)
	def(&cfg.MaxDelay, time.Hour)
	def(&cfg.Poll, 2*time.Second)
	def(&cfg.PruneEvery, time.Hour)
	def(&cfg.KeepFailed, outbox.KeepFailed)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = ctxsleep.Sleep
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func() float64 { return 0 }
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Worker{cfg: cfg, wake: make(chan struct{}, 1), deliveries: map[countKey]uint64{}}, nil
}

// Wake makes a waiting Run claim at once (after Apply wrote rows).
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run sends until ctx ends: it claims and sends what is due, waits Poll
// (or a Wake) when nothing was, and prunes the outbox every PruneEvery.
// Database errors are logged and retried after Poll. It returns nil once
// ctx is done and its sends have stopped.
func (w *Worker) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if now := w.cfg.Now(); now.Sub(w.lastPrune) >= w.cfg.PruneEvery {
			w.lastPrune = now
			if n, err := w.cfg.Store.PruneOutbox(ctx, now.Add(-w.cfg.KeepFailed), w.cfg.MaxRows); err != nil {
				w.storeErr("prune", err)
			} else if n > 0 {
				w.cfg.Logf("alerts: outbox: pruned %d rows", n)
			}
		}
		if w.cfg.Held != nil {
			w.cfg.Held.Flush(ctx)
		}
		n, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.storeErr("claim", err)
		}
		if n == w.cfg.Batch && err == nil {
			continue // more may be due
		}
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-w.wake:
				cancel()
			case <-wctx.Done():
			}
		}()
		w.cfg.Sleep(wctx, w.cfg.Poll)
		cancel()
	}
	return nil
}

// RunOnce claims the rows due now (at most Batch), sends them (at most
// Concurrency at once) and records each outcome; it returns the rows
// claimed. When ctx ends during the sends, the rows still in flight are
// released to be claimed again after Release.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := w.cfg.Now()
	rows, err := w.cfg.Store.Claim(ctx, w.cfg.Holder, w.cfg.Batch, now, now.Add(w.cfg.Lease))
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	// A send ends before its lease would, so that no other claimer
	// sends the row while this one still may.
	sctx, cancel := context.WithTimeout(ctx, w.cfg.Lease*3/4)
	defer cancel()
	sem := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, r := range rows {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			w.release(r)
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			w.send(ctx, sctx, r)
		}()
	}
	wg.Wait()
	return len(rows), nil
}

// send delivers one row and records its outcome.
func (w *Worker) send(ctx, sctx context.Context, r outbox.Row) {
	d, ok := w.cfg.Dest(r.Dest)
	if !ok || d.Kind != r.DestKind {
		w.fail(ctx, r, "the destination "+quote(r.Dest)+" is gone or changed kind")
		return
	}
	_, err := w.cfg.Sender.Send(sctx, d, alerts.Message{ID: r.MessageID, Kind: r.DestKind, Body: r.Body})
	switch {
	case err == nil:
		w.count(r.DestKind, Delivered)
		dctx, cancel := detached(ctx)
		defer cancel()
		if err := w.cfg.Store.Delivered(dctx, r.ID); err != nil {
			// The lease will end and the row go again: at least once.
			w.storeErr("delivered", err)
		}
	case ctx.Err() != nil:
		w.release(r)
	default:
		var de *deliver.Error
		permanent := errors.As(err, &de) && !errors.Is(err, deliver.ErrGaveUp)
		if permanent || r.Attempts >= w.cfg.MaxAttempts {
			w.fail(ctx, r, err.Error())
			return
		}
		var hint time.Duration
		if de != nil {
			hint = de.RetryAfter
		}
		next := w.cfg.Now().Add(w.backoff(r.Attempts, hint))
		w.count(r.DestKind, Retried)
		w.cfg.Logf("alerts: outbox: %s to %s: attempt %d failed, next at %s: %v", r.Kind, quote(r.Dest), r.Attempts, next.Format(time.RFC3339), err)
		dctx, cancel := detached(ctx)
		defer cancel()
		if err := w.cfg.Store.Retry(dctx, r.ID, w.cfg.Holder, err.Error(), next); err != nil {
			w.storeErr("retry", err)
		}
	}
}

func (w *Worker) fail(ctx context.Context, r outbox.Row, msg string) {
	w.count(r.DestKind, Failed)
	w.cfg.Logf("alerts: outbox: %s to %s failed after %d attempts: %s", r.Kind, quote(r.Dest), r.Attempts, msg)
	dctx, cancel := detached(ctx)
	defer cancel()
	if err := w.cfg.Store.Fail(dctx, r.ID, w.cfg.Holder, msg, w.cfg.Now()); err != nil {
		w.storeErr("fail", err)
	}
}

// release frees an interrupted row for another claim after Release (a
// best effort: if the database does not answer, the lease ends anyway).
func (w *Worker) release(r outbox.Row) {
	w.count(r.DestKind, Interrupted)
	ctx, cancel := detached(context.Background())
	defer cancel()
	if err := w.cfg.Store.Retry(ctx, r.ID, w.cfg.Holder, "interrupted: the sender stopped", w.cfg.Now().Add(w.cfg.Release)); err != nil {
		w.storeErr("release", err)
	}
}

// backoff is the wait after a row's attempt-th failure: what the
// destination asked for, when more than the exponential wait from
// BaseDelay, capped at MaxDelay (the destination's ask is not capped).
func (w *Worker) backoff(attempt int, hint time.Duration) time.Duration {
	d := deliver.Exponential(w.cfg.BaseDelay, w.cfg.MaxDelay, attempt)
	d += time.Duration(w.cfg.Jitter() * float64(d) / 4)
	return max(d, hint)
}

func (w *Worker) count(k alerts.DestKind, outcome string) {
	w.mu.Lock()
	w.deliveries[countKey{k, outcome}]++
	w.mu.Unlock()
}

func (w *Worker) storeErr(what string, err error) {
	w.storeErrs.Add(1)
	w.cfg.Logf("alerts: outbox: %s: %v", what, err)
}

// Metrics is a snapshot of the worker's counters and the outbox, for
// /metrics.
type Metrics struct {
	// Deliveries counts the attempts' outcomes by destination kind:
	// Deliveries[alerts.DestDiscord][Delivered].
	Deliveries  map[alerts.DestKind]map[string]uint64
	StoreErrors uint64        // database calls that failed
	Held        int           // samples Config.Held holds while the database fails
	Lost        uint64        // samples it dropped past its bound
	Depth       int           // rows still to send
	Failed      int           // rows given up on, kept
	OldestDue   time.Duration // how long the oldest row due has waited since its event (0: none due)
}

// Metrics returns the counters and asks the store for the outbox's
// figures (Depth, Failed, OldestDue stay zero when it does not answer).
func (w *Worker) Metrics(ctx context.Context) Metrics {
	m := Metrics{Deliveries: map[alerts.DestKind]map[string]uint64{}, StoreErrors: w.storeErrs.Load()}
	w.mu.Lock()
	for k, n := range w.deliveries {
		if m.Deliveries[k.kind] == nil {
			m.Deliveries[k.kind] = map[string]uint64{}
		}
		m.Deliveries[k.kind][k.outcome] = n
	}
	w.mu.Unlock()
	if w.cfg.Held != nil {
		m.Held, m.Lost = w.cfg.Held.Held()
	}
	now := w.cfg.Now()
	if st, err := w.cfg.Store.Stats(ctx, now); err == nil {
		m.Depth, m.Failed = st.Depth, st.Failed
		if !st.OldestDue.IsZero() {
			m.OldestDue = now.Sub(st.OldestDue)
		}
	}
	return m
}

// detached is a context for recording an outcome: it outlives the
// worker's (a send that went through is recorded even during shutdown),
// for a few seconds.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

func quote(s string) string { return `"` + alerts.Truncate(s, 64) + `"` }
