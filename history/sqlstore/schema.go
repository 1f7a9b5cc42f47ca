package sqlstore

// schema is every migration step, written once for every dialect:
// schema[i] takes a database from version i to i+1, in one transaction
// with the version bump. Never edit a released step; append a new one.
//
// The column types are the ones both databases spell alike, except three
// placeholders that Dialect.Bind rewrites: {int64} is a 64-bit integer
// (SQLite's INTEGER, PostgreSQL's BIGINT), {id} a generated integer key
// and {without_rowid} SQLite's clustered primary key (nothing elsewhere).
// Step 2's times are Unix milliseconds (a retry may be due in 1.5 s).
// A dialect's own statements (SQLite's application_id, PostgreSQL's
// sampler leases) are its Extra, run after the shared ones of the same
// step.
var schema = [][]string{
	{ // 1: servers, samples, hourly rollups
		`CREATE TABLE querylens_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE servers (
			id          {id},
			protocol    TEXT NOT NULL,
			addr        TEXT NOT NULL,
			name        TEXT NOT NULL DEFAULT '',
			source      INTEGER NOT NULL DEFAULT 0,
			tracked     INTEGER NOT NULL DEFAULT 0,
			last_viewed {int64} NOT NULL DEFAULT 0,
			UNIQUE (protocol, addr))`,
		`CREATE INDEX servers_tracked ON servers (tracked, last_viewed)`,
		`CREATE TABLE samples (
			server_id   {int64} NOT NULL REFERENCES servers (id),
			at          {int64} NOT NULL,
			state       INTEGER NOT NULL,
			players     INTEGER NOT NULL,
			bots        INTEGER NOT NULL,
			max_players INTEGER NOT NULL,
			map         TEXT NOT NULL,
			rtt_us      {int64} NOT NULL,
			synthetic   INTEGER NOT NULL,
			PRIMARY KEY (server_id, at)){without_rowid}`,
		`CREATE INDEX samples_at ON samples (at)`,
		`CREATE TABLE hours (
			server_id   {int64} NOT NULL REFERENCES servers (id),
			hour        {int64} NOT NULL,
			samples     INTEGER NOT NULL,
			online      INTEGER NOT NULL,
			players_sum {int64} NOT NULL,
			players_max INTEGER NOT NULL,
			bots_max    INTEGER NOT NULL,
			max_players INTEGER NOT NULL,
			synthetic   INTEGER NOT NULL,
			PRIMARY KEY (server_id, hour)){without_rowid}`,
		`CREATE INDEX hours_hour ON hours (hour)`,
	}, { // 2: alerts: watches with their machine's state, the outbox
		// Each watch: its rules (alerts.Watch as JSON), where it came
		// from (file, cli, api), alerts.State as JSON (null: never sampled), the live board's
		// Discord message ids (a JSON array), the last write (Unix ms).
		`CREATE TABLE watches (
			id      TEXT PRIMARY KEY,
			watch   TEXT NOT NULL,
			origin  TEXT NOT NULL,
			state   TEXT NOT NULL DEFAULT 'null',
			board   TEXT NOT NULL DEFAULT 'null',
			updated {int64} NOT NULL)`,
		// One message for one destination. id is message_id (the
		// event's, sent as webhook-id) and the destination's name. A
		// row leaves when delivered; a failed one stays (failed = 1)
		// until pruned. holder and lease_until are the claim. No key
		// to watches: failed rows outlive their watch.
		`CREATE TABLE outbox (
			id           TEXT PRIMARY KEY,
			message_id   TEXT NOT NULL,
			watch        TEXT NOT NULL,
			dest         TEXT NOT NULL,
			dest_kind    TEXT NOT NULL,
			kind         TEXT NOT NULL,
			body         TEXT NOT NULL,
			attempts     INTEGER NOT NULL DEFAULT 0,
			next_attempt {int64} NOT NULL,
			lease_until  {int64} NOT NULL DEFAULT 0,
			holder       TEXT NOT NULL DEFAULT '',
			last_error   TEXT NOT NULL DEFAULT '',
			created      {int64} NOT NULL,
			failed       INTEGER NOT NULL DEFAULT 0,
			failed_at    {int64} NOT NULL DEFAULT 0)`,
		`CREATE INDEX outbox_due ON outbox (failed, next_attempt)`,
		`CREATE INDEX outbox_watch ON outbox (watch)`,
		`CREATE INDEX outbox_created ON outbox (created)`,
	}, { // 3: the destinations of watches made by the CLI and the API
		// (alerts.Destination as JSON: its URL and secret are
		// credentials, as they are in a watches file), by name, with
		// the origin of the watch that made it and the last write.
		`CREATE TABLE destinations (
			name    TEXT PRIMARY KEY,
			dest    TEXT NOT NULL,
			origin  TEXT NOT NULL,
			updated {int64} NOT NULL)`,
	}, { // 4: the live boards of several servers (a watches file's
		// [[board]]): their Discord message ids (a JSON array, in page
		// order) by board id, and the last write. A watch's own board
		// keeps its ids in watches.board.
		`CREATE TABLE boards (
			id       TEXT PRIMARY KEY,
			messages TEXT NOT NULL,
			updated  {int64} NOT NULL)`,
	},
}
