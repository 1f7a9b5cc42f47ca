// Package testpg starts a real PostgreSQL server on loopback for tests: a
// fresh cluster (initdb) in a temporary directory, with fsync off. When the
// binaries are missing the test is skipped, except in CI (CI set), where
// that is a failure: the CI script installs them.
//
// PostgreSQL refuses to run as root, so when the test runs as root the
// cluster belongs to the unprivileged user "nobody": initdb and postgres
// run with its credentials and the directory is handed to it.
package testpg

import (
	"context"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Server is one postgres process; Stop and Restart keep its data and port.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cred *syscall.Credential

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

var schemas atomic.Int64

// bindir finds Debian's PostgreSQL binaries (/usr/lib/postgresql/N/bin,
// the newest N), or initdb on PATH.
func bindir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// Start creates a cluster and starts postgres on a free loopback port; it
// stops and removes it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := bindir()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL is not installed (apt-get install postgresql)")
		}
		t.Skip("PostgreSQL (initdb) not installed; skipping")
	}
	dir, err := os.MkdirTemp("", "querylens-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{t: t, bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal("testpg: running as root and there is no user nobody to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	initdb := s.command("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("testpg: initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

func (s *Server) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := s.command("postgres", "-D", s.data(), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.dir,
		// fsync off: a killed server keeps what reached the OS; commits
		// stay synchronous, so a kill never loses a committed transaction.
		"-c", "fsync=off",
		"-c", "max_connections=200")
	logf, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
			s.t.Fatalf("testpg: postgres exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("testpg: postgres did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is a postgres:// URL for database db (the cluster has "postgres").
func (s *Server) URL(db string) string {
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(s.port) + "/" + db + "?sslmode=disable"
}

// FreshURL creates an empty schema and returns a URL whose connections
// use it, so that each test gets an empty database cheaply.
func (s *Server) FreshURL(t testing.TB) string {
	name := "t" + strconv.FormatInt(schemas.Add(1), 10)
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatal(err)
	}
	return s.URL("postgres") + "&search_path=" + name
}

// Stop kills postgres (an outage, not a shutdown). Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGQUIT) // immediate shutdown, crash recovery on the next start
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts a stopped server again with its data.
func (s *Server) Restart() { s.start() }
