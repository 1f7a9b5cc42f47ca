package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/history/sqlstore"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/api"
	"github.com/querylens/querylens/web/internal/fakeserver"
)

const (
	adminToken = "adm1n-t0ken-0f-the-operator"
	hookToken  = "wh-t0ken-1n-the-url"
	hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

// secrets are the strings no answer, error or log line may carry.
var secrets = []string{adminToken, hookToken, hookSecret, strings.TrimPrefix(hookSecret, "whsec_")}

// adminSite is the site with the history on SQLite and token as its
// admin token; its log lines go to logs.
func adminSite(t *testing.T, token string) (http.Handler, *sqlstore.Store, *bytes.Buffer) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var logs bytes.Buffer
	h, err := web.New(web.Config{Exchanger: fakeserver.APIFixture(), StatusTimeout: 150 * time.Millisecond, History: store,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), AdminToken: token})
	if err != nil {
		t.Fatal(err)
	}
	return h, store, &logs
}

// adminTrip is roundTrip with an Authorization header (none when auth is
// empty).
func adminTrip(t *testing.T, h http.Handler, auth, method, path, body string) exchange {
	t.Helper()
	return roundTrip(t, withAuth(h, auth), method, path, body)
}

func withAuth(h http.Handler, auth string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		h.ServeHTTP(w, r)
	})
}

func noSecret(t *testing.T, what string, b []byte) {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s carries a secret (%.6s…): %s", what, s, b)
		}
	}
}

const newHook = `{"id":"duel","server":"webtest/10.0.0.1:7777","down":true,"up":true,"resend":"10m","full":true,
	"joins":true,"players":["[EU]*"],"mute":[{"start":"2026-12-24T20:00:00Z","end":"2026-12-25T08:00:00Z"}],
	"destination":{"kind":"webhook","url":"https://hooks.example.org/in/` + hookToken + `","secret":"` + hookSecret + `"}}`

// TestAdminAbsentWithoutToken: without a token the admin API does not
// exist, even with the right header.
func TestAdminAbsentWithoutToken(t *testing.T) {
	h, _, _ := adminSite(t, "")
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/watches", ""},
		{"POST", "/api/v1/watches", newHook},
		{"DELETE", "/api/v1/watches/duel", ""},
		{"GET", "/api/v1/outbox/failed", ""},
	} {
		x := adminTrip(t, h, "Bearer "+adminToken, tc.method, tc.path, tc.body)
		if x.resp.StatusCode != http.StatusNotFound || x.resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("%s %s: %d %v, want 404", tc.method, tc.path, x.resp.StatusCode, x.resp.Header)
		}
		noSecret(t, tc.path, x.body)
	}
}

// TestAdminWatches drives the admin API with no, wrong and right tokens,
// validates every answer against openapi.yaml, and searches every answer
// and log line for the token, the webhook's URL token and its secret.
func TestAdminWatches(t *testing.T) {
	v := newValidator(t)
	h, store, logs := adminSite(t, adminToken)
	ctx := context.Background()
	if err := store.PutWatch(ctx, alerts.Watch{ID: "from-file", Server: alerts.Ref{Protocol: "webtest", Addr: "10.0.0.2:7777"}, Down: true, To: []string{"ops"}},
		outbox.OriginFile, time.Now()); err != nil {
		t.Fatal(err)
	}
	right := "Bearer " + adminToken
	var bodies [][]byte
	for _, tc := range []struct {
		name, auth, method, path, body string
		status                         int
		has                            string
	}{
		{"no token", "", "GET", "/api/v1/watches", "", 401, "admin token"},
		{"wrong token", "Bearer nope", "GET", "/api/v1/watches", "", 401, "admin token"},
		{"token with a suffix", right + "x", "GET", "/api/v1/watches", "", 401, ""},
		{"token in another scheme", "Basic " + adminToken, "GET", "/api/v1/watches", "", 401, ""},
		{"wrong token posts", "Bearer nope", "POST", "/api/v1/watches", newHook, 401, ""},
		{"wrong token deletes", "Bearer nope", "DELETE", "/api/v1/watches/from-file", "", 401, ""},
		{"wrong token, failed rows", "Bearer nope", "GET", "/api/v1/outbox/failed", "", 401, ""},
		{"list", right, "GET", "/api/v1/watches", "", 200, `"from-file"`},
		{"create", right, "POST", "/api/v1/watches", newHook, 201, `"url":"https://hooks.example.org/***"`},
		{"create again", right, "POST", "/api/v1/watches", newHook, 409, "exists"},
		{"discord elsewhere", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","down":true,
			"destination":{"kind":"discord","url":"https://evil.example/api/webhooks/1/` + hookToken + `"}}`, 400, "discord.com"},
		{"http webhook", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","down":true,
			"destination":{"kind":"webhook","url":"http://hooks.example.org/` + hookToken + `","secret":"` + hookSecret + `"}}`, 400, "http is not allowed"},
		{"bad secret", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","down":true,
			"destination":{"kind":"webhook","url":"https://hooks.example.org/` + hookToken + `","secret":"` + hookToken + `"}}`, 400, ""},
		{"url of the wrong type", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","down":true,
			"destination":{"kind":"slack","url":["https://hooks.slack.com/services/` + hookToken + `"]}}`, 400, "destination.url"},
		{"not JSON", right, "POST", "/api/v1/watches", `{"server":"https://x/` + hookToken, 400, ""},
		{"unknown field", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","color":"red"}`, 400, "unknown field"},
		{"bad server", right, "POST", "/api/v1/watches", `{"server":"webtest:10.0.0.1","down":true,"destination":{"kind":"discord","url":"https://discord.com/api/webhooks/1/x"}}`, 400, `"server"`},
		{"tells nothing", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","destination":{"kind":"discord","url":"https://discord.com/api/webhooks/1/x"}}`, 400, "tells nothing"},
		{"bad resend", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","down":true,"resend":"often","destination":{"kind":"discord","url":"https://discord.com/api/webhooks/1/x"}}`, 400, `"resend"`},
		{"too long", right, "POST", "/api/v1/watches", `{"id":"` + strings.Repeat("x", api.MaxWatchBody) + `"}`, 413, ""},
		{"bad every", right, "POST", "/api/v1/watches", `{"server":"webtest/10.0.0.1:7777","down":true,"every":"1x","destination":{"kind":"discord","url":"https://discord.com/api/webhooks/1/x"}}`, 400, `"every"`},
		{"board only", right, "POST", "/api/v1/watches", `{"id":"board","server":"webtest/10.0.0.1:7777","every":"1m","board":true,
			"destination":{"kind":"discord","url":"https://discord.com/api/webhooks/1/` + hookToken + `"}}`, 201, `"every":"1m0s","board":true`},
		{"list both", right, "GET", "/api/v1/watches", "", 200, `"signed":true`},
		{"failed rows", right, "GET", "/api/v1/outbox/failed", "", 200, `"failed":[`},
		{"failed rows, bad limit", right, "GET", "/api/v1/outbox/failed?limit=0", "", 400, "limit"},
		{"delete the file's", right, "DELETE", "/api/v1/watches/from-file", "", 409, "watches file"},
		{"delete", right, "DELETE", "/api/v1/watches/duel", "", 204, ""},
		{"delete again", right, "DELETE", "/api/v1/watches/duel", "", 404, ""},
		{"delete the board", right, "DELETE", "/api/v1/watches/board", "", 204, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := adminTrip(t, h, tc.auth, tc.method, tc.path, tc.body)
			bodies = append(bodies, x.body)
			if x.resp.StatusCode != tc.status || !bytes.Contains(x.body, []byte(tc.has)) {
				t.Fatalf("status %d, want %d (with %q): %s", x.resp.StatusCode, tc.status, tc.has, x.body)
			}
			if tc.status == 401 && x.resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tc.auth != "" && x.resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", x.resp.Header.Get("Cache-Control"))
			}
			for _, e := range x.validate(v) {
				t.Errorf("%s", e)
			}
			noSecret(t, "the answer", x.body)
			for k, vs := range x.resp.Header {
				noSecret(t, "header "+k, []byte(strings.Join(vs, " ")))
			}
		})
	}

	// The watch made, as the answer shows it.
	x := adminTrip(t, h, right, "GET", "/api/v1/watches", "")
	var list api.Watches
	if err := json.Unmarshal(x.body, &list); err != nil || len(list.Watches) != 1 || list.Max != outbox.DefaultMaxWatches {
		t.Fatalf("list: %v %s", err, x.body)
	}
	// The validator does check these answers.
	for _, tc := range []struct{ from, to string }{
		{`"origin":"file"`, `"origin":"web"`},
		{`"destinations":[]`, `"destinations":[{"name":"watch:x","kind":"discord","url":"https://discord.com/api/webhooks/1/***","secret":"x"}]`},
		{`"max":`, `"total":`},
	} {
		bad := x
		bad.body = bytes.Replace(x.body, []byte(tc.from), []byte(tc.to), 1)
		bad.resp.Header.Del("Content-Length")
		if bytes.Equal(bad.body, x.body) || bad.validate(v) == nil {
			t.Errorf("%s → %s validated: %s", tc.from, tc.to, bad.body)
		}
	}
	// A failed row whose error a careless sender wrote with the URL in
	// it: the answer masks it all the same.
	if err := store.PutWatch(ctx, alerts.Watch{ID: "w2", Server: alerts.Ref{Protocol: "webtest", Addr: "10.0.0.1:7777"}, Down: true, To: []string{"watch:w2"}},
		outbox.OriginAPI, time.Now()); err != nil {
		t.Fatal(err)
	}
	dest := alerts.Destination{Name: "watch:w2", Kind: alerts.DestWebhook, URL: "https://hooks.example.org/in/" + hookToken, Secret: hookSecret}
	if err := store.PutDestination(ctx, dest, outbox.OriginAPI, time.Now()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	for i := range 3 {
		if _, err := store.Apply(ctx, "w2", alerts.Sample{Time: t0.Add(time.Duration(i) * time.Minute), State: alerts.StateOffline},
			[]alerts.Destination{dest}, t0); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := store.Claim(ctx, "test", 10, time.Now(), time.Now().Add(time.Minute))
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %v %v", rows, err)
	}
	if err := store.Fail(ctx, rows[0].ID, "test", "Post "+dest.URL+": 500 for secret "+hookSecret, time.Now()); err != nil {
		t.Fatal(err)
	}
	x = adminTrip(t, h, right, "GET", "/api/v1/outbox/failed", "")
	var failed api.Failed
	if err := json.Unmarshal(x.body, &failed); err != nil || len(failed.Failed) != 1 || failed.Failed[0].Kind != alerts.KindDown ||
		!strings.Contains(failed.Failed[0].LastError, "***") {
		t.Fatalf("failed rows: %v %s", err, x.body)
	}
	for _, e := range x.validate(v) {
		t.Errorf("failed rows: %s", e)
	}
	noSecret(t, "the failed rows", x.body)

	// The store gone: 503, and a log line that names no secret.
	store.Close()
	x = adminTrip(t, h, right, "POST", "/api/v1/watches", strings.Replace(newHook, `"duel"`, `"duel2"`, 1))
	if x.resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("closed store: %d %s", x.resp.StatusCode, x.body)
	}
	for _, e := range x.validate(v) {
		t.Errorf("closed store: %s", e)
	}
	noSecret(t, "the answer", x.body)
	if !strings.Contains(logs.String(), "api: ") {
		t.Errorf("no log line: %q", logs.String())
	}
	noSecret(t, "the log", logs.Bytes())
	for _, b := range bodies {
		noSecret(t, "an answer", b)
	}
}

// TestAlertWebhookSchema: the OpenAPI document's AlertWebhook is
// alerts/webhook.schema.json (without $schema and $id).
func TestAlertWebhookSchema(t *testing.T) {
	doc := loadDoc(t)
	sp := doc.at(pointer("components", "schemas", "AlertWebhook"))
	if sp == nil {
		t.Fatal("openapi.yaml has no AlertWebhook schema")
	}
	got, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "alerts", "webhook.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want, have map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	delete(want, "$schema")
	delete(want, "$id")
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	hb, _ := json.Marshal(have)
	if !bytes.Equal(wb, hb) {
		t.Errorf("openapi.yaml's AlertWebhook differs from alerts/webhook.schema.json:\n%s\n%s", hb, wb)
	}
	if doc.at(pointer("webhooks", "alert")) == nil {
		t.Error("openapi.yaml has no alert webhook")
	}
}
