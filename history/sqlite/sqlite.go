// Package sqlite is the embedded history store: one SQLite file, opened
// through the pure-Go modernc.org/sqlite driver (no cgo), in WAL mode.
//
// Open refuses, without writing to it, a file that is not SQLite, an SQLite
// database that belongs to another program, one that fails its integrity
// check, and one whose schema is newer than this program. Whose a database
// is gets decided on a read-only, immutable view of the file alone, before
// any read-write connection: opening another program's file read-write
// would replay its pending WAL or roll back its hot journal, and delete
// them. A process killed
// at any moment loses at most the transaction it was writing: WAL with
// synchronous=NORMAL keeps every commit that reached the operating system,
// which a killed process cannot take back (a power cut may lose the last
// commits, never the file).
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlstore"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ApplicationID is stored in the SQLite header (PRAGMA application_id) so
// that tools such as file(1) can tell a querylens history: "QLHS".
const ApplicationID = 0x514c4853

// FileName is the database's name inside the data directory.
const FileName = "history.sqlite"

// Dialect is SQLite's spellings for sqlstore's schema and statements.
var Dialect = sqlstore.Dialect{
	Name:         "sqlite",
	Int64:        "INTEGER",
	ID:           "INTEGER PRIMARY KEY",
	WithoutRowID: " WITHOUT ROWID",
	Greatest:     "max",
	Tables:       `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
	Extra: [][]string{
		{`PRAGMA application_id = ` + strconv.Itoa(ApplicationID)}, // 1
	},
}

// header is the first 16 bytes of every SQLite 3 database file.
var header = []byte("SQLite format 3\x00")

// Open opens (creating if absent) the history database at path. The
// directory must exist.
func Open(ctx context.Context, path string) (*sqlstore.Store, error) {
	return openDialect(ctx, path, Dialect)
}

func openDialect(ctx context.Context, path string, d sqlstore.Dialect) (*sqlstore.Store, error) {
	if err := precheck(path); err != nil {
		return nil, err
	}
	if err := owned(ctx, path); err != nil {
		return nil, err
	}
	v := url.Values{}
	v.Add("_pragma", "busy_timeout(10000)")
	v.Add("_pragma", "foreign_keys(1)")
	v.Add("_pragma", "synchronous(NORMAL)")
	v.Set("_txlock", "immediate") // writers take the lock at BEGIN: no upgrade deadlocks
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+v.Encode())
	if err != nil {
		return nil, fmt.Errorf("history: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	if err := verify(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := sqlstore.Open(ctx, db, d)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Only now, with the file known to be ours, change its journal mode.
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
		s.Close()
		return nil, fmt.Errorf("history: %s: cannot enter WAL mode (got %q): %v", path, mode, err)
	}
	return s, nil
}

// precheck reads the file's header, if there is a file, before the driver
// touches it: anything but an empty file or an SQLite database of ours (or
// of nobody yet) is refused.
func precheck(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 100)
	n, err := io.ReadFull(f, buf)
	if n == 0 {
		return nil // an empty file is a new database
	}
	if err != nil || !bytes.Equal(buf[:16], header) {
		return fmt.Errorf("%w: %s does not start with the SQLite header", history.ErrForeign, path)
	}
	if id := binary.BigEndian.Uint32(buf[68:]); id != 0 && id != ApplicationID {
		return fmt.Errorf("%w: %s is an SQLite database of another program (application_id %#x)", history.ErrForeign, path, id)
	}
	return nil
}

// owned reports, from a read-only and immutable view of the file (SQLite
// neither reads nor writes the -wal and -journal beside it, takes no lock
// and creates no -shm), whether path is a querylens history or a new
// database: it is ours when it holds the querylens_meta table with our
// application marker, new when it holds no table and no marker. Anything
// else is another program's and is refused, as is a file with no table of
// its own beside a pending -wal or -journal: what those would add is
// unknown until they are replayed, which only their program may do.
//
// Our own files always hold querylens_meta in the main file, whatever
// their WAL holds: the first migration commits before the file enters WAL
// mode.
func owned(ctx context.Context, path string) error {
	pending := ""
	for _, suffix := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(path + suffix); err == nil && fi.Size() > 0 {
			pending = suffix
		}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() == 0 {
		if pending != "" {
			return fmt.Errorf("%w: %s is empty beside a pending %s", history.ErrForeign, path, pending)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return fmt.Errorf("history: open %s: %w", path, err)
	}
	defer db.Close()
	var appID, userVersion int64
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return fmt.Errorf("%s: %w", path, classify(err))
	}
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&userVersion); err != nil {
		return fmt.Errorf("%s: %w", path, classify(err))
	}
	var first string
	hasMeta := false
	rows, err := db.QueryContext(ctx, Dialect.Tables)
	if err != nil {
		return fmt.Errorf("%s: %w", path, classify(err))
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("%s: %w", path, classify(err))
		}
		if first == "" {
			first = name
		}
		hasMeta = hasMeta || name == "querylens_meta"
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, classify(err))
	}
	switch {
	case first == "" && appID == ApplicationID:
		return fmt.Errorf("%w: %s carries querylens' application_id but no querylens_meta table", history.ErrForeign, path)
	case first == "" && userVersion != 0:
		return fmt.Errorf("%w: %s has no tables and user_version %d, set by another program", history.ErrForeign, path, userVersion)
	case first == "" && pending != "":
		return fmt.Errorf("%w: %s has no tables of its own beside a pending %s", history.ErrForeign, path, pending)
	case first == "":
		return nil
	case !hasMeta:
		return fmt.Errorf("%w: %s has tables (%s, ...) and no querylens_meta", history.ErrForeign, path, first)
	}
	var app string
	if err := db.QueryRowContext(ctx, `SELECT value FROM querylens_meta WHERE key = 'application'`).Scan(&app); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", path, classify(err))
	}
	if app != sqlstore.Application {
		return fmt.Errorf("%w: %s: its application is %q", history.ErrForeign, path, app)
	}
	return nil
}

// verify runs SQLite's quick integrity check.
func verify(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	var first string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return classify(err)
		}
		if first == "" {
			first = line
		}
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	if first != "ok" {
		return fmt.Errorf("%w: quick_check: %s", history.ErrCorrupt, first)
	}
	return nil
}

// classify maps the driver's "not a database" and "malformed" errors to
// the history package's sentinels.
func classify(err error) error {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff { // primary result code
		case 11: // SQLITE_CORRUPT
			return fmt.Errorf("%w: %v", history.ErrCorrupt, err)
		case 26: // SQLITE_NOTADB
			return fmt.Errorf("%w: %v", history.ErrForeign, err)
		}
	}
	return fmt.Errorf("history: %w", err)
}
