package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
)

var _ outbox.Store = (*Store)(nil)

type outboxQueries struct {
	watchPut, watches, watchDelete, watchBoard, watchRead, watchState,
	outboxPut, outboxDropWatch, claim, delivered, retry, fail, failed, stats,
	pruneFailed, outboxCount, pruneCap string
}

func bindOutbox(d Dialect) outboxQueries {
	return outboxQueries{
		watchPut: d.Bind(qWatchPut), watches: d.Bind(qWatches), watchDelete: d.Bind(qWatchDelete),
		watchBoard: d.Bind(qWatchBoard), watchRead: d.Bind(qWatchRead), watchState: d.Bind(qWatchState),
		outboxPut: d.Bind(qOutboxPut), outboxDropWatch: d.Bind(qOutboxDropWatch), claim: d.Bind(qClaim),
		delivered: d.Bind(qDelivered), retry: d.Bind(qRetry), fail: d.Bind(qFail), failed: d.Bind(qFailed),
		stats: d.Bind(qStats), pruneFailed: d.Bind(qPruneFailed), outboxCount: d.Bind(qOutboxCount),
		pruneCap: d.Bind(qPruneCap),
	}
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

// PutWatch implements outbox.Store.
func (s *Store) PutWatch(ctx context.Context, w alerts.Watch, origin outbox.Origin, now time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	if w.ID == "" {
		return alerts.ErrNoID
	}
	b, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("history: watch %q: %w", w.ID, err)
	}
	if _, err := s.db.ExecContext(ctx, s.oq.watchPut, w.ID, string(b), string(origin), ms(now)); err != nil {
		return fmt.Errorf("history: watch %q: %w", w.ID, err)
	}
	return nil
}

// Watches implements outbox.Store.
func (s *Store) Watches(ctx context.Context) ([]outbox.Watch, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return query(ctx, s.db, "watches", s.oq.watches, nil, func(r *sql.Rows) (outbox.Watch, error) {
		var w outbox.Watch
		var id, watch, origin, state, board string
		var updated int64
		if err := r.Scan(&id, &watch, &origin, &state, &board, &updated); err != nil {
			return w, err
		}
		w.Origin, w.Updated = outbox.Origin(origin), fromMS(updated)
		if err := errors.Join(json.Unmarshal([]byte(watch), &w.Watch), json.Unmarshal([]byte(state), &w.State),
			json.Unmarshal([]byte(board), &w.Board)); err != nil {
			return w, fmt.Errorf("watch %q: %w", id, err)
		}
		return w, nil
	})
}

// DeleteWatch implements outbox.Store.
func (s *Store) DeleteWatch(ctx context.Context, id string) error {
	if err := s.check(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history: delete watch %q: %w", id, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.oq.watchDelete, id); err != nil {
		return fmt.Errorf("history: delete watch %q: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, s.oq.outboxDropWatch, id); err != nil {
		return fmt.Errorf("history: delete watch %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history: delete watch %q: %w", id, err)
	}
	return nil
}

// SetBoard implements outbox.Store.
func (s *Store) SetBoard(ctx context.Context, id string, board []string, now time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	if board == nil {
		board = []string{}
	}
	b, _ := json.Marshal(board)
	res, err := s.db.ExecContext(ctx, s.oq.watchBoard, string(b), ms(now), id)
	if err != nil {
		return fmt.Errorf("history: board of watch %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: %q", outbox.ErrNoWatch, id)
	}
	return nil
}

// Apply implements outbox.Store.
func (s *Store) Apply(ctx context.Context, id string, sm alerts.Sample, to []alerts.Destination, now time.Time) ([]alerts.Event, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("history: apply to watch %q: %w", id, err)
	}
	defer tx.Rollback()
	var watch, state string
	err = tx.QueryRowContext(ctx, s.oq.watchRead, id).Scan(&watch, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", outbox.ErrNoWatch, id)
	}
	if err != nil {
		return nil, fmt.Errorf("history: apply to watch %q: %w", id, err)
	}
	var w alerts.Watch
	var st alerts.State
	if err := errors.Join(json.Unmarshal([]byte(watch), &w), json.Unmarshal([]byte(state), &st)); err != nil {
		return nil, fmt.Errorf("%w: watch %q: %v", errCorruptRow, id, err)
	}
	if !sm.Time.After(st.Last) {
		return nil, nil // seen already: nothing to write
	}
	st, events := alerts.Next(w, st, sm)
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("history: apply to watch %q: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, s.oq.watchState, string(b), ms(now), id); err != nil {
		return nil, fmt.Errorf("history: apply to watch %q: %w", id, err)
	}
	// alerts.Deliveries' rows, with the event each came from: events
	// first, then destinations.
	for i, dl := range alerts.Deliveries(events, to) {
		e := events[i/len(to)]
		if _, err := tx.ExecContext(ctx, s.oq.outboxPut, outbox.RowID(dl.ID, dl.Dest), dl.ID, id, dl.Dest,
			string(dl.Kind), string(e.Kind), string(dl.Body), ms(now), ms(now)); err != nil {
			return nil, fmt.Errorf("history: outbox row of watch %q: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("history: apply to watch %q: %w", id, err)
	}
	return events, nil
}

var errCorruptRow = errors.New("history: a stored watch does not decode")

func scanRow(r *sql.Rows) (outbox.Row, error) {
	var row outbox.Row
	var destKind, kind, body string
	var next, created, failedAt int64
	err := r.Scan(&row.ID, &row.MessageID, &row.Watch, &row.Dest, &destKind, &kind, &body, &row.Attempts,
		&next, &row.LastError, &created, &failedAt)
	row.DestKind, row.Kind, row.Body = alerts.DestKind(destKind), alerts.Kind(kind), []byte(body)
	row.Next, row.Created, row.FailedAt = fromMS(next), fromMS(created), fromMS(failedAt)
	return row, err
}

// Claim implements outbox.Store.
func (s *Store) Claim(ctx context.Context, holder string, n int, now, until time.Time) ([]outbox.Row, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	rows, err := query(ctx, s.db, "claim outbox rows", s.oq.claim, []any{holder, ms(until), ms(now), ms(now), n}, scanRow)
	if err != nil {
		return nil, err
	}
	// RETURNING keeps no order.
	sortRows(rows)
	return rows, nil
}

func sortRows(rows []outbox.Row) {
	slices.SortFunc(rows, func(a, b outbox.Row) int {
		return cmp.Or(a.Next.Compare(b.Next), a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
}

func (s *Store) exec(ctx context.Context, what, q string, args ...any) error {
	if err := s.check(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("history: %s: %w", what, err)
	}
	return nil
}

// Delivered implements outbox.Store.
func (s *Store) Delivered(ctx context.Context, id string) error {
	return s.exec(ctx, "outbox row delivered", s.oq.delivered, id)
}

// Retry implements outbox.Store.
func (s *Store) Retry(ctx context.Context, id, holder, lastError string, next time.Time) error {
	return s.exec(ctx, "outbox row retry", s.oq.retry, lastError, ms(next), id, holder)
}

// Fail implements outbox.Store.
func (s *Store) Fail(ctx context.Context, id, holder, lastError string, now time.Time) error {
	return s.exec(ctx, "outbox row failed", s.oq.fail, lastError, ms(now), id, holder)
}

// Failed implements outbox.Store.
func (s *Store) Failed(ctx context.Context, limit int) ([]outbox.Row, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	return query(ctx, s.db, "failed outbox rows", s.oq.failed, []any{limit}, scanRow)
}

// Stats implements outbox.Store.
func (s *Store) Stats(ctx context.Context, now time.Time) (outbox.Stats, error) {
	var st outbox.Stats
	if err := s.check(); err != nil {
		return st, err
	}
	var depth, failed, oldest int64
	if err := s.db.QueryRowContext(ctx, s.oq.stats, ms(now)).Scan(&depth, &failed, &oldest); err != nil {
		return st, fmt.Errorf("history: outbox stats: %w", err)
	}
	st.Depth, st.Failed, st.OldestDue = int(depth), int(failed), fromMS(oldest)
	return st, nil
}

// PruneOutbox implements outbox.Store.
func (s *Store) PruneOutbox(ctx context.Context, before time.Time, max int) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	res, err := s.db.ExecContext(ctx, s.oq.pruneFailed, ms(before))
	if err != nil {
		return 0, fmt.Errorf("history: prune outbox: %w", err)
	}
	n, _ := res.RowsAffected()
	var count int64
	if err := s.db.QueryRowContext(ctx, s.oq.outboxCount).Scan(&count); err != nil {
		return int(n), fmt.Errorf("history: prune outbox: %w", err)
	}
	if max >= 0 && count > int64(max) {
		res, err := s.db.ExecContext(ctx, s.oq.pruneCap, count-int64(max))
		if err != nil {
			return int(n), fmt.Errorf("history: prune outbox: %w", err)
		}
		m, _ := res.RowsAffected()
		n += m
	}
	return int(n), nil
}
