package sqlstore

import (
	"strconv"
	"strings"
)

// The statements every dialect shares, written once. Placeholders are
// '?', rewritten by Dialect.Bind; {greatest} is the two-argument maximum
// (SQLite's max, PostgreSQL's GREATEST). Times are Unix seconds, RTTs
// microseconds, booleans 0 or 1, so that no column type is dialect-specific
// beyond what the migrations declare.
const (
	qMetaGet = `SELECT value FROM querylens_meta WHERE key = ?`
	qMetaSet = `INSERT INTO querylens_meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`

	qTrack = `INSERT INTO servers (protocol, addr, source, tracked, last_viewed) VALUES (?, ?, ?, 1, ?)
		ON CONFLICT (protocol, addr) DO UPDATE SET
			source = CASE WHEN servers.tracked = 1 THEN servers.source ELSE excluded.source END,
			tracked = 1,
			last_viewed = {greatest}(servers.last_viewed, excluded.last_viewed)`
	qUntrack = `UPDATE servers SET tracked = 0 WHERE protocol = ? AND addr = ?`
	// qUntrackEmpty deletes an untracked server that never got a sample.
	qUntrackEmpty = `DELETE FROM servers WHERE protocol = ? AND addr = ? AND tracked = 0
		AND NOT EXISTS (SELECT 1 FROM samples WHERE samples.server_id = servers.id)
		AND NOT EXISTS (SELECT 1 FROM hours WHERE hours.server_id = servers.id)`
	qTracked = `SELECT protocol, addr, name, source, last_viewed FROM servers
		WHERE tracked = 1 ORDER BY last_viewed, id`

	qServerID     = `SELECT id FROM servers WHERE protocol = ? AND addr = ?`
	qServerInsert = `INSERT INTO servers (protocol, addr) VALUES (?, ?) ON CONFLICT (protocol, addr) DO NOTHING`
	qServerName   = `UPDATE servers SET name = ? WHERE id = ? AND name <> ?`

	qSampleInsert = `INSERT INTO samples (server_id, at, state, players, bots, max_players, map, rtt_us, synthetic)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (server_id, at) DO NOTHING`
	qHourUpsert = `INSERT INTO hours (server_id, hour, samples, online, players_sum, players_max, bots_max, max_players, synthetic)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (server_id, hour) DO UPDATE SET
			samples = hours.samples + excluded.samples,
			online = hours.online + excluded.online,
			players_sum = hours.players_sum + excluded.players_sum,
			players_max = {greatest}(hours.players_max, excluded.players_max),
			bots_max = {greatest}(hours.bots_max, excluded.bots_max),
			max_players = {greatest}(hours.max_players, excluded.max_players),
			synthetic = hours.synthetic + excluded.synthetic`

	qSamples = `SELECT at, state, players, bots, max_players, map, rtt_us, synthetic FROM samples
		WHERE server_id = (SELECT id FROM servers WHERE protocol = ? AND addr = ?) AND at >= ? AND at < ?
		ORDER BY at`
	qHours = `SELECT hour, samples, online, players_sum, players_max, bots_max, max_players, synthetic FROM hours
		WHERE server_id = (SELECT id FROM servers WHERE protocol = ? AND addr = ?) AND hour >= ? AND hour < ?
		ORDER BY hour`
	qMaps = `SELECT map, MIN(at), MAX(at), COUNT(*) FROM samples
		WHERE server_id = (SELECT id FROM servers WHERE protocol = ? AND addr = ?) AND at >= ? AND state = 1 AND map <> ''
		GROUP BY map ORDER BY MAX(at) DESC, map LIMIT ?`

	qMinSample    = `SELECT MIN(at) FROM samples`
	qMinHour      = `SELECT MIN(hour) FROM hours`
	qPruneSamples = `DELETE FROM samples WHERE at < ?`
	qPruneHours   = `DELETE FROM hours WHERE hour < ?`
	qPruneServers = `DELETE FROM servers WHERE tracked = 0
		AND NOT EXISTS (SELECT 1 FROM samples WHERE samples.server_id = servers.id)
		AND NOT EXISTS (SELECT 1 FROM hours WHERE hours.server_id = servers.id)`
)

// The watches and the outbox (outbox.go). {for_update} locks the row read
// (PostgreSQL's FOR UPDATE; SQLite's transactions already exclude other
// writers); {skip_locked} makes concurrent claimers pass over each
// other's rows (PostgreSQL's FOR UPDATE SKIP LOCKED; SQLite has one
// writer at a time).
const (
	qWatchPut = `INSERT INTO watches (id, watch, origin, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET watch = excluded.watch, origin = excluded.origin, updated = excluded.updated`
	qWatches     = `SELECT id, watch, origin, state, board, updated FROM watches ORDER BY id`
	qWatchDelete = `DELETE FROM watches WHERE id = ?`
	qWatchBoard  = `UPDATE watches SET board = ?, updated = ? WHERE id = ?`
	qWatchRead   = `SELECT watch, state FROM watches WHERE id = ?{for_update}`
	qWatchState  = `UPDATE watches SET state = ?, updated = ? WHERE id = ?`

	outboxCols = `id, message_id, watch, dest, dest_kind, kind, body, attempts, next_attempt, last_error, created, failed_at`
	qOutboxPut = `INSERT INTO outbox (id, message_id, watch, dest, dest_kind, kind, body, next_attempt, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	qOutboxDropWatch = `DELETE FROM outbox WHERE watch = ? AND failed = 0`
	qClaim           = `UPDATE outbox SET holder = ?, lease_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM outbox WHERE failed = 0 AND next_attempt <= ? AND lease_until <= ?
			ORDER BY next_attempt, created, id LIMIT ?{skip_locked})
		RETURNING ` + outboxCols
	qDelivered = `DELETE FROM outbox WHERE id = ?`
	qRetry     = `UPDATE outbox SET last_error = ?, next_attempt = ?, lease_until = 0, holder = '' WHERE id = ? AND holder = ? AND failed = 0`
	qFail      = `UPDATE outbox SET last_error = ?, failed = 1, failed_at = ?, lease_until = 0, holder = '' WHERE id = ? AND holder = ? AND failed = 0`
	qFailed    = `SELECT ` + outboxCols + ` FROM outbox WHERE failed = 1 ORDER BY failed_at DESC, id LIMIT ?`
	qStats     = `SELECT COUNT(*) - COALESCE(SUM(failed), 0), COALESCE(SUM(failed), 0),
		COALESCE(MIN(CASE WHEN failed = 0 AND next_attempt <= ? THEN created END), 0) FROM outbox`
	qPruneFailed = `DELETE FROM outbox WHERE failed = 1 AND failed_at < ?`
	qOutboxCount = `SELECT COUNT(*) FROM outbox`
	qPruneCap    = `DELETE FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY failed DESC, created, id LIMIT ?)`
)

// Dialect is what differs between databases: a few spellings, how to list
// existing tables, placeholder syntax, and the dialect's own schema
// statements. The schema itself is schema.go's, shared.
type Dialect struct {
	Name string
	// Int64 spells a 64-bit integer column; ID a generated integer primary
	// key; WithoutRowID what follows a table whose primary key should be
	// its storage order (SQLite's " WITHOUT ROWID", or empty).
	Int64, ID, WithoutRowID string
	// Extra[i] are the dialect's own statements of migration step i, run
	// after the shared ones. A step may exist only here: every dialect
	// then counts it, with nothing to run where it has no statements.
	Extra [][]string
	// Tables lists the user tables of the database, one name per row.
	Tables string
	// Greatest is the SQL function returning the larger of two values.
	Greatest string
	// Numbered placeholders ($1, $2, ...) instead of '?'.
	Numbered bool
	// ForUpdate follows a SELECT whose rows the transaction will write
	// (" FOR UPDATE" or empty); SkipLocked one whose locked rows others
	// should pass over (" FOR UPDATE SKIP LOCKED" or empty).
	ForUpdate, SkipLocked string
	// Version, when set, stops the migrations at that schema version:
	// for tests that build a database as an older program left it.
	Version int
}

// Migrations returns d's migration steps: Migrations()[i] takes the schema
// from version i to i+1.
func (d Dialect) Migrations() [][]string {
	n := max(len(schema), len(d.Extra))
	if d.Version > 0 {
		n = min(n, d.Version)
	}
	steps := make([][]string, n)
	for i := range steps {
		if i < len(schema) {
			for _, q := range schema[i] {
				steps[i] = append(steps[i], d.Bind(q))
			}
		}
		if i < len(d.Extra) {
			steps[i] = append(steps[i], d.Extra[i]...)
		}
	}
	return steps
}

// Bind rewrites a shared statement for d.
func (d Dialect) Bind(q string) string {
	q = strings.NewReplacer("{greatest}", d.Greatest, "{int64}", d.Int64, "{id}", d.ID,
		"{without_rowid}", d.WithoutRowID, "{for_update}", d.ForUpdate, "{skip_locked}", d.SkipLocked).Replace(q)
	if !d.Numbered {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}
