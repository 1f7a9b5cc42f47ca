package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/api"
	"github.com/querylens/querylens/web/internal/fakeserver"
)

var update = flag.Bool("update", false, "rewrite the State enum of openapi.yaml from server.States()")

// stateNames is the State enum as it must be: "unknown" (the zero State)
// and every state's name, in order.
func stateNames() []string {
	names := []string{server.Unknown}
	for _, s := range server.States() {
		names = append(names, s.String())
	}
	return names
}

// TestStateEnum: the document's State enum is server.States(); -update
// rewrites it between its markers.
func TestStateEnum(t *testing.T) {
	if *update {
		b, err := os.ReadFile("../openapi.yaml")
		if err != nil {
			t.Fatal(err)
		}
		begin, end := []byte("# states:begin"), []byte("# states:end")
		i, j := bytes.Index(b, begin), bytes.Index(b, end)
		if i < 0 || j < i {
			t.Fatal("openapi.yaml: no # states:begin … # states:end block")
		}
		lineStart := bytes.LastIndexByte(b[:i], '\n') + 1
		indent := string(b[lineStart:i])
		i += bytes.IndexByte(b[i:], '\n') + 1
		var out bytes.Buffer
		for _, n := range stateNames() {
			out.WriteString(indent + "- " + n + "\n")
		}
		out.WriteString(indent)
		b = slices.Concat(b[:i], out.Bytes(), b[j:])
		if err := os.WriteFile("../openapi.yaml", b, 0o644); err != nil {
			t.Fatal(err)
		}
		api.OpenAPI = b
	}
	enum, ok := loadDoc(t).at(pointer("components", "schemas", "State", "enum")).([]any)
	if !ok {
		t.Fatal("openapi.yaml has no State schema with an enum")
	}
	var got []string
	for _, n := range enum {
		s, _ := n.(string)
		got = append(got, s)
	}
	if want := stateNames(); !slices.Equal(got, want) {
		t.Errorf("openapi.yaml State enum = %v\nserver.States() gives %v\n(go test ./web/api/openapitest -run TestStateEnum -update)", got, want)
	}
}

// site is the whole site as serve builds it, on the fake servers, with a
// history holding one tracked server with a sample and one without.
func site(t *testing.T) http.Handler {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now()
	on := history.Key{Protocol: fakeserver.Protocol, Addr: "10.0.0.1:7777"}
	never := history.Key{Protocol: fakeserver.Protocol, Addr: "10.0.0.9:7777"}
	if err := store.Track(ctx, []history.Server{{Key: on, Source: history.SourceView, LastViewed: now}, {Key: never, Source: history.SourceMaster, LastViewed: now}}); err != nil {
		t.Fatal(err)
	}
	if err := store.Record(ctx, []history.Sample{{Key: on, At: now.Add(-time.Minute), State: history.StateOnline, Players: 5, MaxPlayers: 16, Map: "MAP07", Name: "Tracked One", RTT: 30 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Exchanger: fakeserver.APIFixture(), StatusTimeout: 150 * time.Millisecond, History: store, PublicURL: "https://ql.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// exchange is one request to the site and its response.
type exchange struct {
	req  *http.Request
	resp *http.Response
	body []byte
}

func roundTrip(t *testing.T, h http.Handler, method, path, body string) exchange {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return exchange{req: req, resp: rec.Result(), body: rec.Body.Bytes()}
}

// TestResponsesMatchOpenAPI sends every kind of request to the whole site
// and validates each real response against openapi.yaml.
func TestResponsesMatchOpenAPI(t *testing.T) {
	v := newValidator(t)
	h := site(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"online", "GET", "/api/v1/servers/webtest/10.0.0.1:7777", "", 200},
		{"offline", "GET", "/api/v1/servers/webtest/10.0.0.2:7777", "", 200},
		{"rate-limited", "GET", "/api/v1/servers/webtest/10.0.0.3:7777", "", 200},
		{"banned", "GET", "/api/v1/servers/webtest/10.0.0.4:7777", "", 200},
		{"malformed", "GET", "/api/v1/servers/webtest/10.0.0.5:7777", "", 200},
		{"refused", "GET", "/api/v1/servers/webtest/10.0.0.7:7777", "", 200},
		{"relay-limited", "GET", "/api/v1/servers/webtest/10.0.0.8:7777", "", 200},
		{"bad protocol", "GET", "/api/v1/servers/nope/10.0.0.1:7777", "", 400},
		{"bad address", "GET", "/api/v1/servers/webtest/nowhere", "", 400},
		{"bad option", "GET", "/api/v1/servers/webtest/10.0.0.1:7777?x=1", "", 400},
		{"batch", "POST", "/api/v1/servers", `{"servers":["webtest/10.0.0.1:7777","webtest/10.0.0.5:7777","webtest/10.0.0.1:7777"]}`, 200},
		{"bad batch", "POST", "/api/v1/servers", `{"servers":["webtest/10.0.0.1"]}`, 400},
		{"long batch", "POST", "/api/v1/servers", `{"servers":[` + strings.Repeat(`"webtest/10.0.0.1:7777",`, 100) + `"webtest/10.0.0.1:7777"]}`, 413},
		{"preflight", "OPTIONS", "/api/v1/servers", "", 204},
		{"tracked", "GET", "/api/v1/tracked", "", 200},
		{"document", "GET", "/api/v1/openapi.yaml", "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := roundTrip(t, h, tc.method, tc.path, tc.body)
			if x.resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", x.resp.StatusCode, tc.status, x.body)
			}
			for _, e := range x.validate(v) {
				t.Errorf("%s", e)
			}
		})
	}
}

// TestTracked reads the tracked set from the history: the sampled server
// with its last sample, the other unknown.
func TestTracked(t *testing.T) {
	x := roundTrip(t, site(t), "GET", "/api/v1/tracked", "")
	var got api.Tracked
	if err := json.Unmarshal(x.body, &got); err != nil {
		t.Fatalf("body %q: %v", x.body, err)
	}
	if len(got.Servers) != 2 {
		t.Fatalf("%d servers: %s", len(got.Servers), x.body)
	}
	on, never := got.Servers[0], got.Servers[1]
	if on.Address != "10.0.0.1:7777" || on.State != server.Online || on.Source != server.SourceHistory ||
		on.Name != "Tracked One" || on.Players != 5 || on.MaxPlayers != 16 || on.Map != "MAP07" {
		t.Errorf("sampled server: %+v", on)
	}
	if never.Address != "10.0.0.9:7777" || never.State != 0 || !strings.Contains(string(x.body), `"state":"unknown"`) || never.Detail == "" {
		t.Errorf("server never sampled: %+v", never)
	}
}

// TestValidatorRejects: responses that break the document fail, so that
// the test above means something.
func TestValidatorRejects(t *testing.T) {
	v := newValidator(t)
	h := site(t)
	good := roundTrip(t, h, "GET", "/api/v1/servers/webtest/10.0.0.1:7777", "")
	if errs := good.validate(v); errs != nil {
		t.Fatalf("the good response fails: %v", errs)
	}
	batch := roundTrip(t, h, "POST", "/api/v1/servers", `{"servers":["webtest/10.0.0.1:7777"]}`)
	for _, tc := range []struct {
		name     string
		x        exchange
		from, to string
	}{
		{"state not in the enum", good, `"state":"online"`, `"state":"asleep"`},
		{"players missing", good, `"players":3,`, ``},
		{"players a string", good, `"players":3`, `"players":"3"`},
		{"unknown source", good, `"source":"query"`, `"source":"guess"`},
		{"field not in the schema", good, `"protocol":`, `"color":"red","protocol":`},
		{"batch entry broken", batch, `"state":"online"`, `"state":5`},
		{"batch not a list", batch, `{"servers":[`, `{"servers":{"0":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(tc.x.body, []byte(tc.from)) {
				t.Fatalf("%q not in %s", tc.from, tc.x.body)
			}
			bad := tc.x
			bad.body = bytes.Replace(tc.x.body, []byte(tc.from), []byte(tc.to), 1)
			if tc.name == "batch not a list" {
				bad.body = bytes.Replace(bad.body, []byte("]}"), []byte("}}"), 1)
			}
			bad.resp.Header.Del("Content-Length")
			if errs := bad.validate(v); errs == nil {
				t.Errorf("validated: %s", bad.body)
			}
		})
	}
}
