package relay

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// TestForwardedForHops connects through the test's loopback peer, a
// trusted proxy, with X-Forwarded-For hops in every form a proxy writes.
// A hop that parses (an address, or an address and port) is the client:
// it gets the limits of a remote client, which HELLO announces
// (MaxInFlight 64), not Config.Loopback's (1000) that the proxy's own
// address would get. A hop that does not parse refuses the request with
// 400 and the rule forwarded-for: the relay never falls back to the
// proxy's address, which would give every such client loopback limits
// and one shared bucket.
func TestForwardedForHops(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	cfg.Loopback = &ClientLimits{MaxInFlight: 1000}
	f := newRelay(t, cfg)
	for _, tc := range []struct {
		name    string
		xff     []string // header values; nil: no header
		refused bool
	}{
		{name: "address", xff: []string{"198.51.100.7"}},
		{name: "address and port", xff: []string{"198.51.100.7:5555"}},
		{name: "IPv6 in brackets with port", xff: []string{"[2001:db8::7]:5555"}},
		{name: "IPv6 in brackets", xff: []string{"[2001:db8::7]"}},
		{name: "IPv6", xff: []string{"2001:db8::7"}},
		{name: "chain through a trusted hop", xff: []string{"198.51.100.7:5555, 127.0.0.1"}},
		{name: "unknown", xff: []string{"unknown"}, refused: true},
		{name: "empty value", xff: []string{""}, refused: true},
		{name: "empty hop", xff: []string{"198.51.100.7, "}, refused: true},
		{name: "port out of range", xff: []string{"198.51.100.7:65536"}, refused: true},
		{name: "unbalanced bracket", xff: []string{"2001:db8::7]:5555"}, refused: true},
		{name: "IPv4 in brackets", xff: []string{"[198.51.100.7]:5555"}, refused: true},
		{name: "unknown behind a trusted hop", xff: []string{"unknown, 127.0.0.1"}, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.xff {
				h.Add("X-Forwarded-For", v)
			}
			ws, resp, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol}, HTTPHeader: h})
			if tc.refused {
				if err == nil {
					ws.CloseNow()
					t.Fatal("connected; want 400 forwarded-for")
				}
				if resp == nil || resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("response %v, err %v; want 400", resp, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fr, err := wire.ParseFrame(b)
			if err != nil || fr.Type != wire.FrameHello {
				t.Fatalf("first frame %v, %v", fr.Type, err)
			}
			if fr.Hello.MaxInFlight != DefaultMaxInFlight {
				t.Fatalf("HELLO max in flight %d, want %d (a remote client's)", fr.Hello.MaxInFlight, DefaultMaxInFlight)
			}
		})
	}
}

// TestForwardedForRefusal reads the refusal a client behind a trusted
// proxy gets when the proxy's hop does not parse, and checks that pages
// served through Exchange refuse the visitor too.
func TestForwardedForRefusal(t *testing.T) {
	cfg := testConfig()
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	s := New(cfg, nil)
	r := httptest.NewRequest("GET", "/relay", nil)
	r.RemoteAddr = "10.0.0.2:4000"
	r.Header.Set("X-Forwarded-For", "unknown")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusBadRequest || !strings.HasPrefix(string(body), "forwarded-for: ") || !strings.Contains(string(body), `"unknown"`) {
		t.Fatalf("got %d %q, want 400 naming the rule and the hop", rec.Code, body)
	}
	if s.AllowVisitor(r) {
		t.Fatal("AllowVisitor let a visitor through whose address is not known")
	}
}
