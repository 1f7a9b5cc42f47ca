package relay

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/client"
	"github.com/querylens/querylens/relay/wire"
)

func TestIdleTimeout(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	// The idle timeout is long enough that a loaded machine sends the
	// query before it runs out (the test needs the query in flight), and
	// the reply window longer still.
	cfg.IdleTimeout = time.Second
	cfg.ReplyWindow = 2500 * time.Millisecond
	f := newRelay(t, cfg)
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, f.url)
	// A query in flight keeps the connection open past the idle timeout.
	c.query(ctx, 1, silent.addr, "RQ")
	_, final := c.collect(ctx, 1)
	wantError(t, final, wire.CodeTimeout, wire.RuleTimeout)
	_, _, err := c.ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || !strings.HasPrefix(ce.Reason, "idle: ") {
		t.Fatalf("got %v, want close 1000 idle", err)
	}
}

func TestConnectionCaps(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.MaxConnsPerIP = 2
	cfg.MaxConns = 3
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	f := newRelay(t, cfg)
	dial := func(ip string) (*client.Client, error) {
		return client.Dial(ctx, f.url, &client.DialOptions{HTTPHeader: httpHeader("X-Forwarded-For", ip)})
	}
	var open []*client.Client
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range 2 {
		c, err := dial("198.51.100.1")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	_, err := dial("198.51.100.1")
	var re *wire.RefusedError
	if !errors.As(err, &re) || re.Rule() != wire.RulePerIPConnCap {
		t.Fatalf("third connection from one address: %v", err)
	}
	c, err := dial("198.51.100.2")
	if err != nil {
		t.Fatal(err)
	}
	open = append(open, c)
	_, err = dial("198.51.100.3")
	if !errors.As(err, &re) || re.Rule() != wire.RuleConnCap {
		t.Fatalf("connection over the global cap: %v", err)
	}
	// Closing one frees its slot.
	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(2 * time.Second)
	for f.metric("querylens_relay_connections") > 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c, err = dial("198.51.100.1")
	if err != nil {
		t.Fatal(err)
	}
	open = append(open, c)
}

func TestOriginAndSubprotocol(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.OriginPatterns = []string{"play.example.org", "https://*.example.net"}
	f := newRelay(t, cfg)
	host := strings.TrimPrefix(f.ts.URL, "http://")
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + host, true}, // same origin
		{"https://play.example.org", true},
		{"https://a.example.net", true},
		{"http://a.example.net", false},
		{"https://evil.example.com", false},
		{"null", false},
	}
	for _, tc := range cases {
		t.Run(tc.origin, func(t *testing.T) {
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			c, err := client.Dial(ctx, f.url, &client.DialOptions{HTTPHeader: h})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			var re *wire.RefusedError
			if !errors.As(err, &re) || re.Rule() != wire.RuleOrigin {
				t.Fatalf("got %v, want an origin refusal", err)
			}
		})
	}
	// Without the subprotocol the relay closes with 1008.
	ws, _, err := websocket.Dial(ctx, f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	_, _, err = ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("got %v, want close 1008", err)
	}
}

func TestShutdown(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 300 * time.Millisecond
	f := newRelay(t, cfg)
	srv, url := f.srv, f.url
	r := newResponder(t, echoReply)
	clients := make([]*rawClient, 3)
	for i := range clients {
		clients[i] = dialRaw(t, ctx, url)
		clients[i].query(ctx, 1, r.addr, "RQsd"+strconv.Itoa(i))
	}
	// Wait for the replies so that the queries are surely in flight.
	for _, c := range clients {
		if fr := c.read(ctx); fr.Type != wire.FrameReply {
			t.Fatalf("got %v", fr.Type)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	for _, c := range clients {
		// The query in flight still ends properly, then the relay says goodbye.
		if fr := c.read(ctx); fr.Type != wire.FrameEnd {
			t.Fatalf("got %v, want the END of the query in flight", fr.Type)
		}
		_, _, err := c.ws.Read(ctx)
		if websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Fatalf("got %v, want close 1001", err)
		}
		c.ws.Close(websocket.StatusNormalClosure, "")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, err := client.Dial(ctx, url, nil)
	var re *wire.RefusedError
	if !errors.As(err, &re) || re.Rule() != wire.RuleShuttingDown {
		t.Fatalf("dial after shutdown: %v", err)
	}
	_, err = srv.Exchange(ctx, testProto, r.addr, &testQuery{tag: "x", parts: 1})
	if !errors.As(err, &re) || re.Code != wire.CodeBusy {
		t.Fatalf("exchange after shutdown: %v", err)
	}
}

// TestShutdownDeadline: a query whose window outlasts the shutdown context
// is cut, and Shutdown reports the context's error after closing everything.
func TestShutdownDeadline(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 30 * time.Second
	f := newRelay(t, cfg)
	srv, url := f.srv, f.url
	silent := newResponder(t, nil)
	c := dialRaw(t, ctx, url)
	c.query(ctx, 1, silent.addr, "RQlong")
	for srv.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	for {
		if _, _, err := c.ws.Read(ctx); err != nil {
			break
		}
	}
}
