package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/querylens/querylens/history/outbox"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/history/sqlstore"
)

func TestConformance(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), FileName))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func open(t *testing.T, path string) *sqlstore.Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	key = history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	t0  = historytest.T0
)

func sample(i int) history.Sample {
	return history.Sample{Key: key, At: t0.Add(time.Duration(i) * time.Minute), State: history.StateOnline,
		Players: i % 17, MaxPlayers: 16, Map: "MAP" + strconv.Itoa(i%32), RTT: time.Millisecond}
}

func TestReopenKeepsHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	ctx := context.Background()
	if err := s.Track(ctx, []history.Server{{Key: key, Source: history.SourceView, LastViewed: t0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, []history.Sample{sample(1), sample(2)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer s.Close()
	got, err := s.Samples(ctx, key, t0, t0.Add(time.Hour))
	if err != nil || len(got) != 2 {
		t.Fatalf("after reopen: %d samples, %v", len(got), err)
	}
	tr, err := s.Tracked(ctx)
	if err != nil || len(tr) != 1 || tr[0].Key != key {
		t.Fatalf("after reopen: tracked %+v, %v", tr, err)
	}
	var mode string
	if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	var app int64
	if err := s.DB().QueryRow(`PRAGMA application_id`).Scan(&app); err != nil || app != ApplicationID {
		t.Errorf("application_id = %#x, %v", app, err)
	}
}

// TestRefusedFiles checks that a file that is not ours gives a clear error
// naming the file and is left byte for byte as it was.
func TestRefusedFiles(t *testing.T) {
	dir := t.TempDir()
	otherDB := filepath.Join(dir, "other.sqlite")
	db, err := sql.Open("sqlite", otherDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts VALUES (1, 'x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	otherApp := filepath.Join(dir, "app.sqlite")
	db, err = sql.Open("sqlite", otherApp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA application_id = 1234; CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	corrupt := filepath.Join(dir, "corrupt.sqlite")
	s := open(t, corrupt)
	var batch []history.Sample
	for i := range 2000 {
		batch = append(batch, sample(i))
	}
	if err := s.Record(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 5*4096 {
		t.Fatalf("database is only %d bytes", len(b))
	}
	for i := 2 * 4096; i < 4*4096; i++ {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(corrupt, b, 0o600); err != nil {
		t.Fatal(err)
	}

	newer := filepath.Join(dir, "newer.sqlite")
	s = open(t, newer)
	if _, err := s.DB().Exec(`UPDATE querylens_meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("these are my notes, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path string
		want       error
	}{
		{"text file", text, history.ErrForeign},
		{"other program's tables", otherDB, history.ErrForeign},
		{"other application_id", otherApp, history.ErrForeign},
		{"corrupt pages", corrupt, history.ErrCorrupt},
		{"newer schema", newer, history.ErrNewer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), tc.path)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q; want %v naming the file", err, tc.want)
			}
			after, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the refused file was modified")
			}
			if _, err := os.Stat(tc.path + "-wal"); err == nil && tc.want != history.ErrNewer {
				t.Error("a WAL file was created beside the refused file")
			}
		})
	}
}

// TestKillMidWrite runs a child copy of this test binary that records one
// sample per transaction as fast as it can and reports each commit on
// stdout, kills it with SIGKILL while it is still writing, and checks that
// the database opens cleanly with every reported sample, no gap and no
// partial sample, three times over the same file.
func TestKillMidWrite(t *testing.T) {
	if path := os.Getenv("QUERYLENS_HISTORY_WRITER"); path != "" {
		writer(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), FileName)
	for round := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKillMidWrite$", "-test.count=1")
		cmd.Env = append(os.Environ(), "QUERYLENS_HISTORY_WRITER="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		last := -1
		stopAt := 150 + 97*round // kill at a different point each round
		for sc.Scan() {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				continue
			}
			last = n
			if n >= stopAt {
				break
			}
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
			t.Fatal(err)
		}
		cmd.Wait()
		cancel()
		if last < stopAt {
			t.Fatalf("round %d: the writer reported only up to %d", round, last)
		}

		s := open(t, path)
		got, err := s.Samples(context.Background(), key, time.Time{}, t0.Add(1000*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		hours, err := s.Hours(context.Background(), key, time.Time{}, t0.Add(1000*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		// Every commit the writer reported is there, and what is there is
		// whole: samples 0..n-1 with no gap (the writer resumes after the
		// last one stored), whatever the kill interrupted either fully in
		// or fully out.
		if len(got) < last+1 {
			t.Errorf("round %d: %d samples stored; the writer had reported %d commits", round, len(got), last+1)
		}
		for i, g := range got {
			if w := sample(i); g.At != w.At || g.Players != w.Players || g.Map != w.Map {
				t.Fatalf("round %d: sample %d is %+v, want %+v", round, i, g, w)
			}
		}
		sum := 0
		for _, h := range hours {
			sum += h.Samples
		}
		if sum != len(got) {
			t.Errorf("round %d: hours count %d samples, there are %d", round, sum, len(got))
		}
	}
}

// writer is the child side of TestKillMidWrite: it appends samples after
// the last one stored and prints each one's index once committed. It stops
// by itself after 100,000 samples or a minute.
func writer(path string) {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	have, err := s.Samples(ctx, key, time.Time{}, t0.Add(1000*24*time.Hour))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	deadline := time.Now().Add(time.Minute)
	for i := len(have); i < 100000 && time.Now().Before(deadline); i++ {
		if err := s.Record(ctx, []history.Sample{sample(i)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(i)
	}
	os.Exit(0)
}

// TestMigration opens a current file with a dialect one migration ahead:
// the step runs once, the data stays, and the older program then refuses
// the file as newer.
func TestMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	ctx := context.Background()
	if err := s.Record(ctx, []history.Sample{sample(1)}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	next := Dialect
	next.Extra = append([][]string(nil), Dialect.Extra...)
	for len(next.Extra) < len(Dialect.Migrations()) {
		next.Extra = append(next.Extra, nil)
	}
	next.Extra = append(next.Extra, []string{
		`ALTER TABLE servers ADD COLUMN note TEXT NOT NULL DEFAULT ''`,
	})
	want := strconv.Itoa(len(Dialect.Migrations()) + 1)
	for round := range 2 { // the second open finds nothing to do
		s2, err := openDialect(ctx, path, next)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var ver string
		if err := s2.DB().QueryRow(`SELECT value FROM querylens_meta WHERE key = 'schema_version'`).Scan(&ver); err != nil || ver != want {
			t.Errorf("round %d: schema_version %q, %v", round, ver, err)
		}
		got, err := s2.Samples(ctx, key, t0, t0.Add(time.Hour))
		if err != nil || len(got) != 1 {
			t.Errorf("round %d: %d samples after migrating, %v", round, len(got), err)
		}
		s2.Close()
	}
	if _, err := Open(ctx, path); !errors.Is(err, history.ErrNewer) {
		t.Errorf("the older schema opened a migrated file: %v", err)
	}
}

// TestForeignPendingLeftAlone checks that another program's database is
// refused without being touched when it has a pending WAL or a hot
// journal (opening it read-write would replay or roll them back and delete
// them), and that an empty database carrying only a marker (our
// application_id, or a user_version) without our meta table is refused
// too. The file and every sibling stay byte for byte as they were, and no
// sibling appears.
func TestForeignPendingLeftAlone(t *testing.T) {
	src := t.TempDir()
	// snapshot copies path and its -wal/-journal, as they are while the
	// writer's connection is still open, to a file named name in a fresh
	// directory: what a killed program leaves behind.
	snapshot := func(t *testing.T, path, name string) string {
		t.Helper()
		dir := t.TempDir()
		for _, suffix := range []string{"", "-wal", "-journal"} {
			b, err := os.ReadFile(path + suffix)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+suffix), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, name)
	}
	run := func(t *testing.T, db *sql.DB, stmts ...string) {
		t.Helper()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	writer := func(t *testing.T, name string) *sql.DB {
		t.Helper()
		db, err := sql.Open("sqlite", filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1) // pragmas hold for every statement
		t.Cleanup(func() { db.Close() })
		return db
	}

	type fixture struct {
		name     string
		make     func(t *testing.T) string
		siblings []string // must be there before Open
	}
	fixtures := []fixture{
		{"tables only in a pending WAL", func(t *testing.T) string {
			db := writer(t, "walonly.sqlite")
			run(t, db, `PRAGMA journal_mode = WAL`, `PRAGMA wal_autocheckpoint = 0`,
				`CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)`, `INSERT INTO accounts VALUES (1, 'x')`)
			return snapshot(t, filepath.Join(src, "walonly.sqlite"), "walonly.sqlite")
		}, []string{"-wal"}},
		{"tables and a pending WAL", func(t *testing.T) string {
			db := writer(t, "wal.sqlite")
			run(t, db, `CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)`,
				`PRAGMA journal_mode = WAL`, `PRAGMA wal_autocheckpoint = 0`, `INSERT INTO accounts VALUES (1, 'x')`)
			return snapshot(t, filepath.Join(src, "wal.sqlite"), "wal.sqlite")
		}, []string{"-wal"}},
		{"hot journal", func(t *testing.T) string {
			db := writer(t, "journal.sqlite")
			run(t, db, `PRAGMA journal_mode = DELETE`, `PRAGMA cache_size = 2`,
				`CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)`)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			// More pages than the cache holds, so that SQLite writes some
			// to the file before the commit: the journal becomes hot.
			for i := range 2000 {
				if _, err := tx.Exec(`INSERT INTO accounts VALUES (?, ?)`, i, strings.Repeat("n", 200)); err != nil {
					t.Fatal(err)
				}
			}
			return snapshot(t, filepath.Join(src, "journal.sqlite"), "journal.sqlite")
		}, []string{"-journal"}},
		{"empty with our application_id only", func(t *testing.T) string {
			db := writer(t, "appid.sqlite")
			run(t, db, `PRAGMA application_id = `+strconv.Itoa(ApplicationID))
			db.Close()
			return filepath.Join(src, "appid.sqlite")
		}, nil},
		{"empty with a user_version only", func(t *testing.T) string {
			db := writer(t, "userversion.sqlite")
			run(t, db, `PRAGMA user_version = 1`)
			db.Close()
			return filepath.Join(src, "userversion.sqlite")
		}, nil},
	}
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			path := f.make(t)
			for _, s := range f.siblings {
				if fi, err := os.Stat(path + s); err != nil || fi.Size() == 0 {
					t.Fatalf("the fixture has no %s: %v", s, err)
				}
			}
			dir := filepath.Dir(path)
			before := files(t, dir)
			s, err := Open(context.Background(), path)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, history.ErrForeign) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q; want %v naming the file", err, history.ErrForeign)
			}
			after := files(t, dir)
			for name, b := range before {
				if a, ok := after[name]; !ok {
					t.Errorf("%s was deleted", name)
				} else if !bytes.Equal(a, b) {
					t.Errorf("%s was modified", name)
				}
			}
			for name := range after {
				if _, ok := before[name]; !ok {
					t.Errorf("%s was created", name)
				}
			}
		})
	}
}

// files reads every file of dir by name.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestOutboxConformance(t *testing.T) {
	historytest.RunOutbox(t, func(t *testing.T) historytest.OutboxStore {
		return open(t, filepath.Join(t.TempDir(), FileName))
	})
}

// TestMigrateToOutbox opens a database as the program before the
// watches and the outbox left it.
func TestMigrateToOutbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	v1 := Dialect
	v1.Version = 1
	historytest.Migration(t, func(t *testing.T) history.Store {
		s, err := openDialect(context.Background(), path, v1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, func(t *testing.T) interface {
		history.Store
		outbox.Store
	} {
		return open(t, path)
	})
}
