package probe_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/web/internal/fakeserver"
	"github.com/querylens/querylens/web/probe"
)

func TestMain(m *testing.M) {
	fakeserver.Register()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// clock is a relay clock the test moves by hand: the relay's cache,
// visitor and target limits decide by it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// gameServer is one server of the fake protocol on loopback, counting the
// queries it gets.
type gameServer struct {
	conn    *net.UDPConn
	Addr    string
	queries atomic.Int64
	done    chan struct{}
}

// Queries is how many queries reached the server so far.
func (g *gameServer) Queries() int { return int(g.queries.Load()) }

// startServers starts n servers of the fake protocol on 127.0.0.1, each
// answering "Q" with its name, a map and 3 of 16 players (one a bot).
func startServers(t testing.TB, n int) []*gameServer {
	t.Helper()
	out := make([]*gameServer, 0, n)
	for i := range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		g := &gameServer{conn: c, Addr: c.LocalAddr().String(), done: make(chan struct{})}
		reply := []byte("RServer " + strconv.Itoa(i) + "|map" + strconv.Itoa(i%7) + "|3|16|alice,bob,bot:carl")
		go g.serve(reply)
		t.Cleanup(func() { c.Close(); <-g.done })
		out = append(out, g)
	}
	return out
}

func (g *gameServer) serve(reply []byte) {
	defer close(g.done)
	buf := make([]byte, 64)
	for {
		n, from, err := g.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if n == 1 && buf[0] == 'Q' {
			g.queries.Add(1)
			g.conn.WriteToUDPAddrPort(reply, from)
		}
	}
}

// newRelay is a relay that may ask loopback like any public address (its
// per-target limits apply, as AllowTargets keeps them), on the given
// clock, with cfg's other fields.
func newRelay(t testing.TB, c *clock, cfg relay.Config) *relay.Server {
	t.Helper()
	cfg.AllowTargets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Clock = c.Now
	if cfg.ReplyWindow == 0 {
		cfg.ReplyWindow = 200 * time.Millisecond
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	rs := relay.New(cfg, discard)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rs.Shutdown(ctx)
	})
	return rs
}

// get runs one request against h from remote (an "ip:port"), with the
// header pairs given.
func get(h http.Handler, target, remote string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", target, nil)
	req.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// routes mounts h's endpoints as web.New does.
func routes(h *probe.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /probe", h.Probe)
	mux.HandleFunc("GET /s/{protocol}/{target}/shields.json", h.ShieldsJSON)
	mux.HandleFunc("GET /s/{protocol}/{target}/embed", h.Embed)
	return mux
}
