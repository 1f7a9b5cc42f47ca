// Package sqlstore implements history.Store over database/sql, for any
// database a Dialect describes. The statements live in queries.go, shared by
// every dialect; a dialect brings its schema migrations and a few spellings.
//
// Adding a database:
//  1. Write its Dialect: the spellings of schema.go's placeholders (Int64,
//     ID, WithoutRowID), Tables listing the user tables, Greatest, Numbered
//     for $n placeholders, ForUpdate and SkipLocked for the row locks of
//     outbox.go's statements, and Extra for statements only it needs.
//  2. Open the *sql.DB with its driver and pass both to Open, which refuses
//     a database holding other tables (history.ErrForeign) or a newer
//     schema (history.ErrNewer) before writing anything.
//  3. Run historytest.Run and historytest.RunOutbox against it in the new
//     package's tests, and historytest.Migration from the previous
//     schema version.
//
// A column or table every database needs is a new step appended to
// schema.go, once; a dialect's own statements go in its Extra at the same
// index.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/history"
)

// Application is the value of the 'application' meta row that marks a
// database as a querylens history. A database with tables and without it
// is foreign and is never written to.
const Application = "querylens-history"

// Store is a history.Store on a *sql.DB.
type Store struct {
	db     *sql.DB
	d      Dialect
	steps  [][]string // d.Migrations()
	q      queries
	oq     outboxQueries
	closed atomic.Bool

	mu  sync.Mutex
	ids map[history.Key]int64 // server ids known to be committed

	// pruning is held for writing by Prune, which may delete server rows,
	// and for reading by Record, which may use a cached id.
	pruning sync.RWMutex
}

type queries struct {
	metaGet, metaSet, track, untrack, untrackEmpty, tracked, serverID, serverInsert, serverName,
	sampleInsert, hourUpsert, samples, hours, maps, minSample, minHour, pruneSamples, pruneHours, pruneServers string
}

var _ history.Store = (*Store)(nil)

// Open checks that db is empty or a querylens history, brings its schema
// up to date, and returns a Store that owns db (Close closes it). A
// database holding other tables gives history.ErrForeign, one whose schema
// is newer gives history.ErrNewer; neither is written to.
func Open(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	s := &Store{db: db, d: d, steps: d.Migrations(), ids: make(map[history.Key]int64)}
	s.q = queries{
		metaGet: d.Bind(qMetaGet), metaSet: d.Bind(qMetaSet),
		track: d.Bind(qTrack), untrack: d.Bind(qUntrack), untrackEmpty: d.Bind(qUntrackEmpty), tracked: d.Bind(qTracked),
		serverID: d.Bind(qServerID), serverInsert: d.Bind(qServerInsert), serverName: d.Bind(qServerName),
		sampleInsert: d.Bind(qSampleInsert), hourUpsert: d.Bind(qHourUpsert),
		samples: d.Bind(qSamples), hours: d.Bind(qHours), maps: d.Bind(qMaps),
		minSample: d.Bind(qMinSample), minHour: d.Bind(qMinHour),
		pruneSamples: d.Bind(qPruneSamples), pruneHours: d.Bind(qPruneHours), pruneServers: d.Bind(qPruneServers),
	}
	s.oq = bindOutbox(d)
	version, err := s.version(ctx)
	if err != nil {
		return nil, err
	}
	if version > len(s.steps) {
		return nil, fmt.Errorf("%w: schema version %d, this program knows up to %d", history.ErrNewer, version, len(s.steps))
	}
	for v := version; v < len(s.steps); v++ {
		if err := s.migrate(ctx, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// version returns the schema version, 0 for an empty database, or
// ErrForeign.
func (s *Store) version(ctx context.Context) (int, error) {
	tables, err := query(ctx, s.db, "listing tables", s.d.Tables, nil, func(r *sql.Rows) (name string, err error) {
		return name, r.Scan(&name)
	})
	if err != nil {
		return 0, err
	}
	if len(tables) == 0 {
		return 0, nil
	}
	hasMeta := false
	for _, t := range tables {
		hasMeta = hasMeta || t == "querylens_meta"
	}
	if !hasMeta {
		return 0, fmt.Errorf("%w: it has tables (%s, ...) and no querylens_meta", history.ErrForeign, tables[0])
	}
	var app, ver string
	if err := s.db.QueryRowContext(ctx, s.q.metaGet, "application").Scan(&app); err != nil || app != Application {
		return 0, fmt.Errorf("%w: its application is %q", history.ErrForeign, app)
	}
	if err := s.db.QueryRowContext(ctx, s.q.metaGet, "schema_version").Scan(&ver); err != nil {
		return 0, fmt.Errorf("%w: no schema_version: %v", history.ErrCorrupt, err)
	}
	v, err := strconv.Atoi(ver)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%w: schema_version is %q", history.ErrCorrupt, ver)
	}
	return v, nil
}

func (s *Store) migrate(ctx context.Context, from int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history: migrating from version %d: %w", from, err)
	}
	defer tx.Rollback()
	for i, stmt := range s.steps[from] {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("history: migration %d, statement %d: %w", from+1, i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q.metaSet, "application", Application); err != nil {
		return fmt.Errorf("history: migration %d: %w", from+1, err)
	}
	if _, err := tx.ExecContext(ctx, s.q.metaSet, "schema_version", strconv.Itoa(from+1)); err != nil {
		return fmt.Errorf("history: migration %d: %w", from+1, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history: migration %d: %w", from+1, err)
	}
	return nil
}

// DB returns the underlying database, for dialect-specific maintenance.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return history.ErrClosed
	}
	return s.db.Close()
}

func (s *Store) check() error {
	if s.closed.Load() {
		return history.ErrClosed
	}
	return nil
}

// Track implements history.Store.
func (s *Store) Track(ctx context.Context, servers []history.Server) error {
	if err := s.check(); err != nil {
		return err
	}
	for i, sv := range servers {
		if !sv.Key.Valid() {
			return &history.InvalidError{What: "server " + strconv.Itoa(i), Field: "Key", Reason: "must have a protocol (<= 32 bytes) and an address (<= 300 bytes)"}
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history: track: %w", err)
	}
	defer tx.Rollback()
	for _, sv := range servers {
		if _, err := tx.ExecContext(ctx, s.q.track, sv.Protocol, sv.Addr, int(sv.Source), unix(sv.LastViewed)); err != nil {
			return fmt.Errorf("history: track %s: %w", sv.Key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history: track: %w", err)
	}
	return nil
}

// Untrack implements history.Store.
func (s *Store) Untrack(ctx context.Context, keys []history.Key) error {
	if err := s.check(); err != nil {
		return err
	}
	// A server that never got a sample (a made-up address evicted from the
	// tracked set) is deleted here, not left for Prune; Record may hold
	// its cached id, so it waits, as for Prune.
	s.pruning.Lock()
	defer s.pruning.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history: untrack: %w", err)
	}
	defer tx.Rollback()
	deleted := false
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, s.q.untrack, k.Protocol, k.Addr); err != nil {
			return fmt.Errorf("history: untrack %s: %w", k, err)
		}
		res, err := tx.ExecContext(ctx, s.q.untrackEmpty, k.Protocol, k.Addr)
		if err != nil {
			return fmt.Errorf("history: untrack %s: %w", k, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			deleted = true
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history: untrack: %w", err)
	}
	if deleted {
		s.mu.Lock()
		for _, k := range keys {
			delete(s.ids, k)
		}
		s.mu.Unlock()
	}
	return nil
}

// Tracked implements history.Store.
func (s *Store) Tracked(ctx context.Context) ([]history.Server, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return query(ctx, s.db, "tracked", s.q.tracked, nil, func(r *sql.Rows) (history.Server, error) {
		var sv history.Server
		var src int
		var viewed int64
		err := r.Scan(&sv.Protocol, &sv.Addr, &sv.Name, &src, &viewed)
		sv.Source = history.Source(src)
		sv.LastViewed = fromUnix(viewed)
		return sv, err
	})
}

// Record implements history.Store.
func (s *Store) Record(ctx context.Context, samples []history.Sample) error {
	if err := s.check(); err != nil {
		return err
	}
	for i, sm := range samples {
		if err := history.CheckSample(i, sm); err != nil {
			return err
		}
	}
	s.pruning.RLock()
	defer s.pruning.RUnlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history: record: %w", err)
	}
	defer tx.Rollback()
	fresh := make(map[history.Key]int64)
	// Each statement is parsed once per call, not once per sample: a
	// batch (the demo's synthetic day, a buffer flushed after an outage)
	// is thousands of samples, and SQLite spent most of such a call
	// parsing the same three statements again.
	name, insert, hour := prepared(tx, s.q.serverName), prepared(tx, s.q.sampleInsert), prepared(tx, s.q.hourUpsert)
	defer name.close()
	defer insert.close()
	defer hour.close()
	// One upsert per server and hour, not per sample: a synthetic day is
	// 12 samples an hour.
	hours := make(map[hourKey]hourAgg)
	var order []hourKey
	for _, sm := range samples {
		sm = history.Normalize(sm)
		id, err := s.serverID(ctx, tx, sm.Key, fresh)
		if err != nil {
			return err
		}
		if sm.Name != "" {
			if _, err := name.exec(ctx, sm.Name, id, sm.Name); err != nil {
				return fmt.Errorf("history: record %s name: %w", sm.Key, err)
			}
		}
		res, err := insert.exec(ctx, id, sm.At.Unix(), int(sm.State), sm.Players, sm.Bots,
			sm.MaxPlayers, sm.Map, sm.RTT.Microseconds(), b2i(sm.Synthetic))
		if err != nil {
			return fmt.Errorf("history: record %s sample: %w", sm.Key, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			continue // a sample of the same second is already stored
		}
		// The hour's aggregate, written once per hour below.
		hk := hourKey{id, history.HourOf(sm.At).Unix()}
		a, ok := hours[hk]
		if !ok {
			order = append(order, hk)
			a.key = sm.Key
		}
		a.samples++
		a.online += b2i(sm.State == history.StateOnline)
		a.playersSum += sm.Players
		a.playersMax = max(a.playersMax, sm.Players)
		a.botsMax = max(a.botsMax, sm.Bots)
		a.maxPlayers = max(a.maxPlayers, sm.MaxPlayers)
		a.synthetic += b2i(sm.Synthetic)
		hours[hk] = a
	}
	for _, hk := range order {
		a := hours[hk]
		if _, err := hour.exec(ctx, hk.id, hk.hour, a.samples, a.online, a.playersSum,
			a.playersMax, a.botsMax, a.maxPlayers, a.synthetic); err != nil {
			return fmt.Errorf("history: record %s hour: %w", a.key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history: record: %w", err)
	}
	if len(fresh) > 0 {
		s.mu.Lock()
		for k, id := range fresh {
			s.ids[k] = id
		}
		s.mu.Unlock()
	}
	return nil
}

// hourKey and hourAgg are one row of the hours table as Record adds to
// it: the samples of one server in one hour, summed as the upsert sums.
type hourKey struct{ id, hour int64 }

type hourAgg struct {
	key                                                                     history.Key
	samples, online, playersSum, playersMax, botsMax, maxPlayers, synthetic int
}

// txStmt is one statement of a transaction, prepared on its first use.
type txStmt struct {
	tx    *sql.Tx
	query string
	stmt  *sql.Stmt
}

func prepared(tx *sql.Tx, query string) *txStmt { return &txStmt{tx: tx, query: query} }

func (t *txStmt) exec(ctx context.Context, args ...any) (sql.Result, error) {
	if t.stmt == nil {
		st, err := t.tx.PrepareContext(ctx, t.query)
		if err != nil {
			return nil, err
		}
		t.stmt = st
	}
	return t.stmt.ExecContext(ctx, args...)
}

func (t *txStmt) close() {
	if t.stmt != nil {
		t.stmt.Close()
	}
}

// serverID finds or creates k's row inside tx. Ids created in tx are put
// in fresh and cached only once tx commits.
func (s *Store) serverID(ctx context.Context, tx *sql.Tx, k history.Key, fresh map[history.Key]int64) (int64, error) {
	s.mu.Lock()
	id, ok := s.ids[k]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	if id, ok := fresh[k]; ok {
		return id, nil
	}
	err := tx.QueryRowContext(ctx, s.q.serverID, k.Protocol, k.Addr).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, s.q.serverInsert, k.Protocol, k.Addr); err == nil {
			err = tx.QueryRowContext(ctx, s.q.serverID, k.Protocol, k.Addr).Scan(&id)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("history: server %s: %w", k, err)
	}
	fresh[k] = id
	return id, nil
}

// Samples implements history.Store.
func (s *Store) Samples(ctx context.Context, k history.Key, from, to time.Time) ([]history.Sample, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	args := []any{k.Protocol, k.Addr, unix(from), unix(to)}
	return query(ctx, s.db, "samples of "+k.String(), s.q.samples, args, func(r *sql.Rows) (history.Sample, error) {
		sm := history.Sample{Key: k}
		var at, rtt int64
		var state, synth int
		err := r.Scan(&at, &state, &sm.Players, &sm.Bots, &sm.MaxPlayers, &sm.Map, &rtt, &synth)
		sm.At = fromUnix(at)
		sm.State = history.State(state)
		sm.RTT = time.Duration(rtt) * time.Microsecond
		sm.Synthetic = synth != 0
		return sm, err
	})
}

// Hours implements history.Store.
func (s *Store) Hours(ctx context.Context, k history.Key, from, to time.Time) ([]history.Hour, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	args := []any{k.Protocol, k.Addr, unix(from), unix(to)}
	return query(ctx, s.db, "hours of "+k.String(), s.q.hours, args, func(r *sql.Rows) (history.Hour, error) {
		var h history.Hour
		var start int64
		err := r.Scan(&start, &h.Samples, &h.Online, &h.PlayersSum, &h.PlayersMax, &h.BotsMax, &h.MaxPlayers, &h.Synthetic)
		h.Start = fromUnix(start)
		return h, err
	})
}

// Maps implements history.Store.
func (s *Store) Maps(ctx context.Context, k history.Key, since time.Time, limit int) ([]history.MapPlay, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	args := []any{k.Protocol, k.Addr, unix(since), limit}
	return query(ctx, s.db, "maps of "+k.String(), s.q.maps, args, func(r *sql.Rows) (history.MapPlay, error) {
		var m history.MapPlay
		var first, last int64
		err := r.Scan(&m.Map, &first, &last, &m.Samples)
		m.First, m.Last = fromUnix(first), fromUnix(last)
		return m, err
	})
}

// Prune implements history.Store.
func (s *Store) Prune(ctx context.Context, rawBefore, hoursBefore time.Time) (history.Pruned, error) {
	var p history.Pruned
	if err := s.check(); err != nil {
		return p, err
	}
	// Old rows go in slices of an hour of samples (a day of hours), each
	// its own transaction, so that a prune after a long pause never holds
	// the writers off for long.
	n, err := s.deleteBefore(ctx, s.q.minSample, s.q.pruneSamples, unix(rawBefore), 3600)
	p.Samples = n
	if err != nil {
		return p, err
	}
	n, err = s.deleteBefore(ctx, s.q.minHour, s.q.pruneHours, unix(hoursBefore), 24*3600)
	p.Hours = n
	if err != nil {
		return p, err
	}
	// Server rows: Record may hold a cached id of one, so it waits.
	s.pruning.Lock()
	defer s.pruning.Unlock()
	res, err := s.db.ExecContext(ctx, s.q.pruneServers)
	if err != nil {
		return p, fmt.Errorf("history: prune servers: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		p.Servers = int(n)
		s.mu.Lock()
		clear(s.ids)
		s.mu.Unlock()
	}
	return p, nil
}

// query runs q with args and returns every row as scan reads it; what
// names the query in errors. It is the one loop over rows of the store.
func query[T any](ctx context.Context, db *sql.DB, what, q string, args []any, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("history: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: %s: %w", what, err)
	}
	return out, nil
}

// deleteBefore runs del (DELETE ... WHERE t < ?) with cut-offs stepping
// from the oldest row (minQ) to before, and returns the rows deleted.
func (s *Store) deleteBefore(ctx context.Context, minQ, del string, before, step int64) (int, error) {
	var oldest sql.NullInt64
	if err := s.db.QueryRowContext(ctx, minQ).Scan(&oldest); err != nil {
		return 0, fmt.Errorf("history: prune: %w", err)
	}
	total := 0
	if !oldest.Valid || oldest.Int64 >= before {
		return 0, nil
	}
	for cut := oldest.Int64 + step; ; cut += step {
		cut = min(cut, before)
		res, err := s.db.ExecContext(ctx, del, cut)
		if err != nil {
			return total, fmt.Errorf("history: prune: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		if cut == before {
			return total, nil
		}
	}
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func fromUnix(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
