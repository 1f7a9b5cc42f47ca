package sqlstore

// schema is every migration step, written once for every dialect:
// schema[i] takes a database from version i to i+1, in one transaction
// with the version bump. Never edit a released step; append a new one.
//
// The column types are the ones both databases spell alike, except three
// placeholders that Dialect.Bind rewrites: {int64} is a 64-bit integer
// (SQLite's INTEGER, PostgreSQL's BIGINT), {id} a generated integer key
// and {without_rowid} SQLite's clustered primary key (nothing elsewhere).
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
	},
}
