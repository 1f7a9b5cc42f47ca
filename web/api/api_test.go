package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/api"
	"github.com/querylens/querylens/web/internal/fakeserver"
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

// newFakes is the API tests' fake servers (fakeserver.APIFixture).
func newFakes() *fakeserver.Exchanger { return fakeserver.APIFixture() }

// allowN is a visitor limit that lets the first n asks through.
func allowN(n int) func(*http.Request) bool {
	var mu sync.Mutex
	return func(*http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		n--
		return n >= 0
	}
}

func newAPI(t *testing.T, cfg api.Config) http.Handler {
	t.Helper()
	if cfg.Exchanger == nil {
		cfg.Exchanger = newFakes()
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 150 * time.Millisecond
	}
	return api.New(cfg)
}

func do(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	return v
}

func TestServer(t *testing.T) {
	h := newAPI(t, api.Config{})
	for _, tc := range []struct {
		name, target string
		state        server.State
		detail       bool
	}{
		{"online", "10.0.0.1:7777", server.Online, false},
		{"silent", "10.0.0.2:7777", server.Offline, true},
		{"too soon", "10.0.0.3:7777", server.RateLimited, true},
		{"banned", "10.0.0.4:7777", server.Banned, true},
		{"garbage", "10.0.0.5:7777", server.Malformed, true},
		{"refused by policy", "10.0.0.7:7777", server.Refused, true},
		{"limited by the relay", "10.0.0.8:7777", server.Limited, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, "GET", "/api/v1/servers/webtest/"+tc.target, "")
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			s := decode[server.Summary](t, rec)
			if s.State != tc.state || s.Address != tc.target || s.Protocol != "webtest" || s.Source != server.SourceQuery {
				t.Errorf("got %+v, want state %s", s, tc.state)
			}
			if (s.Detail != "") != tc.detail {
				t.Errorf("detail %q", s.Detail)
			}
			if tc.state == server.Online && (s.Name != "CTF Night" || s.Players != 3 || s.Bots != 1 || s.MaxPlayers != 8 || s.Map != "MAP01") {
				t.Errorf("online summary %+v", s)
			}
		})
	}
}

func TestServerBadRequest(t *testing.T) {
	fakes := newFakes()
	h := newAPI(t, api.Config{Exchanger: fakes})
	for _, tc := range []struct {
		name, path, field, says string
	}{
		{"unknown protocol", "/api/v1/servers/nope/10.0.0.1:7777", "protocol", `does not speak "nope"`},
		{"not host:port", "/api/v1/servers/webtest/10.0.0.1", "address", `"10.0.0.1" is not host:port`},
		{"port zero", "/api/v1/servers/webtest/10.0.0.1:0", "address", "not host:port"},
		{"unknown option", "/api/v1/servers/webtest/10.0.0.1:7777?x=1", "options", "webtest"},
		{"option twice", "/api/v1/servers/webtest/10.0.0.1:7777?x=1&x=2", "options", "more than once"},
		{"bad query", "/api/v1/servers/webtest/10.0.0.1:7777?%zz", "options", "bad query options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, "GET", tc.path, "")
			if rec.Code != 400 {
				t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
			}
			e := decode[api.Error](t, rec)
			if e.Field != tc.field || !strings.Contains(e.Error, tc.says) {
				t.Errorf("got %+v, want field %q saying %q", e, tc.field, tc.says)
			}
		})
	}
	if n := fakes.CallCount(); n != 0 {
		t.Errorf("bad requests asked %d servers", n)
	}
}

func TestNotFound(t *testing.T) {
	h := newAPI(t, api.Config{})
	for _, p := range []string{"/api/v1/nope", "/api/v1/servers/webtest", "/api/v1/masters/a2s/127.0.0.1:27011"} {
		rec := do(t, h, "GET", p, "")
		if rec.Code != 404 || !strings.Contains(decode[api.Error](t, rec).Error, "no API endpoint") {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	rec := do(t, h, "GET", "/api/v1/tracked", "")
	if rec.Code != 404 || !strings.Contains(decode[api.Error](t, rec).Error, "history") {
		t.Errorf("tracked without history: %d %s", rec.Code, rec.Body)
	}
}

func TestBatch(t *testing.T) {
	fakes := newFakes()
	h := newAPI(t, api.Config{Exchanger: fakes})
	body := `{"servers":["webtest/10.0.0.4:7777","webtest/10.0.0.1:7777","webtest/10.0.0.7:7777","webtest/10.0.0.4:7777"]}`
	rec := do(t, h, "POST", "/api/v1/servers", body)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	got := decode[api.BatchResponse](t, rec)
	want := []server.State{server.Banned, server.Online, server.Refused, server.Banned}
	if len(got.Servers) != len(want) {
		t.Fatalf("%d servers, want %d", len(got.Servers), len(want))
	}
	for i, s := range got.Servers {
		if s.State != want[i] {
			t.Errorf("servers[%d] = %s %s, want %s", i, s.Address, s.State, want[i])
		}
	}
	if n := fakes.CallCount(); n != 3 {
		t.Errorf("%d exchanges for 3 distinct servers", n)
	}
	if rec.Header().Get("Retry-After") != "" {
		t.Errorf("Retry-After without a limit")
	}
	rec = do(t, h, "POST", "/api/v1/servers", `{"servers":[]}`)
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"servers":[]}` {
		t.Errorf("empty batch: %d %s", rec.Code, rec.Body)
	}
}

func TestBatchBadRequest(t *testing.T) {
	fakes := newFakes()
	h := newAPI(t, api.Config{Exchanger: fakes})
	list := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = `"webtest/10.0.0.1:` + strconv.Itoa(1000+i) + `"`
		}
		return `{"servers":[` + strings.Join(s, ",") + `]}`
	}
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
		says       string
	}{
		{"not json", `servers`, 400, "body", "not a batch"},
		{"two values", `{"servers":[]} {}`, 400, "body", "goes on after its JSON value, which ends at byte 14"},
		{"a stray bracket after it", `{"servers":[]}]`, 400, "body", "goes on after its JSON value, which ends at byte 14"},
		{"unknown field", `{"servers":[],"x":1}`, 400, "body", `unknown field "x"`},
		{"no list", `{}`, 400, "servers", "no servers list"},
		{"null list", `{"servers":null}`, 400, "servers", "no servers list"},
		{"object entry", `{"servers":[{"protocol":"webtest","address":"10.0.0.1:7777"}]}`, 400, "servers[0]", "not a string"},
		{"no slash", `{"servers":["webtest/10.0.0.1:7777","webtest=10.0.0.1:7777"]}`, 400, "servers[1]", "want PROTOCOL/HOST:PORT"},
		{"bad protocol", `{"servers":["nope/10.0.0.1:7777"]}`, 400, "servers[0]", `does not speak "nope"`},
		{"bad address", `{"servers":["webtest/10.0.0.1"]}`, 400, "servers[0]", "not host:port"},
		{"bad option", `{"servers":["webtest/10.0.0.1:7777?a=1&a=2"]}`, 400, "servers[0]", "more than once"},
		{"101 servers", list(101), 413, "servers", "at most 100 servers per request, got 101"},
		{"huge body", `{"servers":["` + strings.Repeat("a", api.MaxBodyBytes) + `"]}`, 413, "body", "larger than 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, "POST", "/api/v1/servers", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			e := decode[api.Error](t, rec)
			if e.Field != tc.field || !strings.Contains(e.Error, tc.says) {
				t.Errorf("got %+v, want field %q saying %q", e, tc.field, tc.says)
			}
		})
	}
	if n := fakes.CallCount(); n != 0 {
		t.Errorf("bad batches asked %d servers", n)
	}
	if rec := do(t, h, "POST", "/api/v1/servers", "{\"servers\":[]} \r\n"); rec.Code != 200 {
		t.Errorf("white space after the batch: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, "POST", "/api/v1/servers", list(100)); rec.Code != 200 || len(decode[api.BatchResponse](t, rec).Servers) != 100 {
		t.Errorf("100 servers: %d", rec.Code)
	}
}

// cacheFakes is the fake exchanger with a cache-only path: targets in
// cached answer from "the cache", others are refused not-cached.
type cacheFakes struct {
	*fakeserver.Exchanger
	cached map[string]bool
	mu     sync.Mutex
	asked  []string // targets asked past the limit
}

func (c *cacheFakes) ExchangeCached(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	c.mu.Lock()
	c.asked = append(c.asked, target)
	c.mu.Unlock()
	if !c.cached[target] {
		return netquery.Result{}, &wire.RefusedError{ID: 1, Code: wire.CodeRateLimited, Message: string(wire.RuleNotCached) + ": " + target}
	}
	res, err := c.Exchanger.Exchange(ctx, protocol, target, q)
	res.FromCache = true
	return res, err
}

func TestVisitorLimit(t *testing.T) {
	body := `{"servers":["webtest/10.0.0.1:7777","webtest/10.0.0.3:7777","webtest/10.0.0.4:7777","webtest/10.0.0.1:7777"]}`
	for _, tc := range []struct {
		name    string
		ex      func() netquery.Exchanger
		allow   int
		want    []server.State
		sources []string
		retry   bool
	}{
		{"within the limit", func() netquery.Exchanger { return newFakes() }, 3,
			[]server.State{server.Online, server.RateLimited, server.Banned, server.Online},
			[]string{"query", "query", "query", "query"}, false},
		{"past it, no cache", func() netquery.Exchanger { return newFakes() }, 1,
			[]server.State{server.Online, server.Limited, server.Limited, server.Online},
			[]string{"query", "cache", "cache", "query"}, true},
		{"past it, from the cache", func() netquery.Exchanger {
			return &cacheFakes{Exchanger: newFakes(), cached: map[string]bool{"10.0.0.4:7777": true}}
		}, 1,
			[]server.State{server.Online, server.Limited, server.Banned, server.Online},
			[]string{"query", "cache", "cache", "query"}, true},
		{"all from the cache", func() netquery.Exchanger {
			return &cacheFakes{Exchanger: newFakes(), cached: map[string]bool{"10.0.0.1:7777": true, "10.0.0.3:7777": true, "10.0.0.4:7777": true}}
		}, 0,
			[]server.State{server.Online, server.RateLimited, server.Banned, server.Online},
			[]string{"cache", "cache", "cache", "cache"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.ex()
			h := newAPI(t, api.Config{Exchanger: ex, Allow: allowN(tc.allow)})
			rec := do(t, h, "POST", "/api/v1/servers", body)
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			got := decode[api.BatchResponse](t, rec).Servers
			for i, s := range got {
				if s.State != tc.want[i] || s.Source != tc.sources[i] {
					t.Errorf("servers[%d] %s: %s from %s, want %s from %s", i, s.Address, s.State, s.Source, tc.want[i], tc.sources[i])
				}
				if s.State == server.Limited && !strings.Contains(s.Detail, "limit") {
					t.Errorf("servers[%d] detail %q", i, s.Detail)
				}
			}
			if got := rec.Header().Get("Retry-After") != ""; got != tc.retry {
				t.Errorf("Retry-After set %v, want %v", got, tc.retry)
			}
			if cf, ok := ex.(*cacheFakes); ok {
				for _, a := range cf.asked {
					if a == "10.0.0.1:7777" && tc.allow > 0 {
						t.Errorf("the server within the limit was asked from the cache only")
					}
				}
			}
		})
	}
	// One server past the limit: answered, never 429.
	h := newAPI(t, api.Config{Allow: allowN(0)})
	rec := do(t, h, "GET", "/api/v1/servers/webtest/10.0.0.1:7777", "")
	if s := decode[server.Summary](t, rec); rec.Code != 200 || s.State != server.Limited || rec.Header().Get("Retry-After") == "" ||
		rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("past the limit: %d %+v %v", rec.Code, s, rec.Header())
	}
}

func TestCORS(t *testing.T) {
	h := newAPI(t, api.Config{})
	req := httptest.NewRequest("OPTIONS", "/api/v1/servers", nil)
	req.Header.Set("Origin", "https://elsewhere.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 204 {
		t.Fatalf("preflight status %d", rec.Code)
	}
	for k, want := range map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "GET, POST, OPTIONS",
		"Access-Control-Allow-Headers": "Content-Type",
	} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if rec.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("credentials allowed")
	}
	for _, p := range []string{"/api/v1/openapi.yaml", "/api/v1/servers/nope/1.2.3.4:5", "/api/v1/nope"} {
		if got := do(t, h, "GET", p, "").Header().Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", p, got)
		}
	}
}
