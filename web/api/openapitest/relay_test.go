package openapitest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/api"
)

// TestDemoThroughRelay runs the site as serve does (web.New on the relay,
// on a loopback HTTP server) against demo servers on loopback, with a
// visitor limit of three servers: what the visitor asks past it comes from
// the relay's cache when someone asked it, and is relay-limited
// otherwise. Every response is validated against openapi.yaml.
func TestDemoThroughRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var normal []server.Ref
	for _, tg := range d.Targets() {
		if tg.Protocol == "zandronum" && tg.Behavior == demo.Normal {
			normal = append(normal, tg.Ref())
		}
	}
	if len(normal) < 4 {
		t.Fatalf("the demo has %d normal Zandronum servers, want 4", len(normal))
	}
	fast := shared.Rate{PerSecond: 1e6, Burst: 1e6}
	rs := relay.New(relay.Config{
		AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey, CacheTTL: time.Minute,
		TargetRate: fast, TargetHostRate: fast,
		// Three servers, and no refill within the test.
		VisitorRate: shared.Rate{PerSecond: 1e-6, Burst: 3},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer rs.Shutdown(context.Background())
	h, err := web.New(web.Config{Exchanger: rs, StatusTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	v := newValidator(t)

	call := func(method, path, body string) (exchange, []server.Summary) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		var resp *http.Response
		for attempt := 0; ; attempt++ { // a loopback connection may be refused under load
			req, _ := http.NewRequestWithContext(ctx, method, ts.URL+path, rd)
			req.Header.Set("Content-Type", "application/json")
			resp, err = ts.Client().Do(req)
			if err == nil || attempt == 2 || body != "" {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		x := exchange{req: resp.Request, resp: resp, body: b}
		for _, e := range x.validate(v) {
			t.Errorf("%s %s: %s", method, path, e)
		}
		var out []server.Summary
		if method == "POST" {
			var br api.BatchResponse
			if err := json.Unmarshal(b, &br); err != nil {
				t.Fatal(err)
			}
			out = br.Servers
		} else {
			var s server.Summary
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			out = []server.Summary{s}
		}
		return x, out
	}
	a, b, c, e := normal[0], normal[1], normal[2], normal[3]

	// Two of the visitor's three tokens: a and b are asked.
	for _, ref := range []server.Ref{a, b} {
		_, got := call("GET", "/api/v1/servers/"+ref.Protocol+"/"+ref.Addr, "")
		if got[0].State != server.Online || got[0].Source != server.SourceQuery || got[0].Name == "" {
			t.Fatalf("%s: %+v", ref, got[0])
		}
	}
	// The last token asks c; a and b come from the relay's cache; e was
	// never asked and is not asked now.
	list, _ := json.Marshal(api.BatchRequest{Servers: []string{c.String(), a.String(), e.String(), b.String()}})
	x, got := call("POST", "/api/v1/servers", string(list))
	want := []struct {
		state  server.State
		source string
	}{{server.Online, server.SourceQuery}, {server.Online, server.SourceCache}, {server.Limited, server.SourceCache}, {server.Online, server.SourceCache}}
	if len(got) != len(want) {
		t.Fatalf("%d servers: %s", len(got), x.body)
	}
	for i, s := range got {
		t.Logf("servers[%d] %s: %s from %s", i, s.Address, s.State, s.Source)
		// One past the limit may join its exchange still in flight
		// instead of the cache: answered all the same, without a query.
		joined := want[i].source == server.SourceCache && want[i].state == server.Online && s.Source == server.SourceQuery
		if s.State != want[i].state || (s.Source != want[i].source && !joined) {
			t.Errorf("servers[%d] %s: %s from %s (%s), want %s from %s", i, s.Address, s.State, s.Source, s.Detail, want[i].state, want[i].source)
		}
	}
	if x.resp.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After with a server left unasked")
	}
}
