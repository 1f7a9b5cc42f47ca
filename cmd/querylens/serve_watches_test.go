package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/manage"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/sqlite"
)

// TestServeAlertsAdminWatch: a watch created through POST
// /api/v1/watches (serve --admin-token, no watches file) pointing at a
// Discord-shaped receiver on loopback (--webhook-allow 127.0.0.0/8
// --allow-http-webhooks) is sampled and delivered by the same serve: the
// receiver is told the demo's flapping server is down, and the API
// shows that last event. Driven by what the receiver is sent.
func TestServeAlertsAdminWatch(t *testing.T) {
	t.Parallel()
	rcv := demo.NewDiscordReceiver()
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	dir := t.TempDir()
	flap := freeUDP(t)
	o := alertServeOptions(dir, "", flap)
	o.adminToken = "admin-s3cret"
	o.alerts.sync = 200 * time.Millisecond
	base, _, stop := serveFor(t, o)
	defer stop()

	admin := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+o.adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	hook := ts.URL + "/api/webhooks/42/s3cret-token"
	// Joins need a protocol that lists every player: Quake III does.
	code, body := admin("POST", "api/v1/watches", `{"id":"flap","server":"quake3/`+flap+`","every":"200ms","down":true,
		"down_samples":1,"joins":true,"destination":{"kind":"discord","url":"`+hook+`"}}`)
	if code != http.StatusCreated || !strings.Contains(body, `"every":"200ms"`) || strings.Contains(body, "s3cret-token") {
		t.Fatalf("POST /api/v1/watches: %d %s", code, body)
	}
	// Without --webhook-allow's range the loopback fake is no Discord
	// webhook; with it, a Slack URL elsewhere is still refused.
	code, body = admin("POST", "api/v1/watches", `{"server":"quake3/`+flap+`","down":true,
		"destination":{"kind":"slack","url":"http://10.1.2.3/services/T1/x"}}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "destination") {
		t.Errorf("a Slack URL not at hooks.slack.com: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := rcv.Wait(ctx, func(got []demo.Received) bool { return titled(got, " is down") }); err != nil {
		var b strings.Builder
		for _, r := range rcv.Received() {
			b.WriteString(r.Method + " " + r.MessageID + ": " + r.Content() + "\n")
		}
		t.Fatalf("%v; the receiver got:\n%s", err, b.String())
	}
	for _, r := range rcv.Received() {
		if r.Webhook != "42/s3cret-token" {
			t.Errorf("sent to webhook %q", r.Webhook)
		}
	}
	code, body = admin("GET", "api/v1/watches", "")
	if code != http.StatusOK || !strings.Contains(body, `"last_event":{"kind":"down"`) {
		t.Errorf("GET /api/v1/watches after the down: %d %s", code, body)
	}
	if code, body := admin("DELETE", "api/v1/watches/flap", ""); code != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", code, body)
	}
}

// TestAlertsStoredDestination: serve's worker finds a watch's own
// destination (querylens watch add's, the API's) in the history
// database, reads it again at each send, so that one deleted with its
// watch is not used even before the next reading of the watches, and
// one made again under the same id is the new one; the Sender takes a
// loopback Discord fake inside --webhook-allow as discord.com.
func TestAlertsStoredDestination(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := alertOptions{webhookAllow: prefixFlag{netip.MustParsePrefix("127.0.0.0/8")}, allowHTTP: true, max: 10}
	a, err := newAlerts(o, st, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.sender.get().Close() }()
	add := func(url string) alerts.Watch {
		t.Helper()
		w, err := manage.Add(ctx, st, alerts.Watch{ID: "w1", Server: alerts.Ref{Protocol: "quake3", Addr: "127.0.0.1:27960"}, Down: true},
			alerts.Destination{Kind: alerts.DestDiscord, URL: url}, outbox.OriginAPI, o.watchOptions())
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	name := outbox.DestName("w1")
	const first, second = "http://127.0.0.1:9/api/webhooks/1/one", "http://127.0.0.2:9/api/webhooks/2/two"
	w := add(first)
	if err := a.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if d, ok := a.dest(name); !ok || d.URL != first {
		t.Fatalf("dest(%q) = %v %v", name, d.Kind, ok)
	}
	if to := a.to(w); len(to) != 1 || to[0].URL != first {
		t.Fatalf("to: %d destinations", len(to))
	}
	if got := a.senderHosts(); !slices.Equal(got, []string{"127.0.0.1:9"}) {
		t.Errorf("test hosts %v", got)
	}
	if _, err := a.sender.get().Check(a.to(w)[0]); err != nil {
		t.Errorf("the Sender refuses the stored loopback fake: %v", err)
	}

	// Deleted with its watch: gone at once.
	if err := manage.Remove(ctx, st, "w1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.dest(name); ok {
		t.Error("a destination deleted with its watch is still used")
	}
	// Made again under the same id, before the next sync: the new one.
	add(second)
	if d, ok := a.dest(name); !ok || d.URL != second {
		t.Errorf("after the watch was made again: %v %v", d.URL == first, ok)
	}
	if err := manage.Remove(ctx, st, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := a.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.dest(name); ok || len(a.to(w)) != 0 {
		t.Error("a deleted destination after the sync")
	}
	if got := a.senderHosts(); len(got) != 0 {
		t.Errorf("test hosts %v after the destination was deleted", got)
	}
	// A database that does not answer: the destinations last read stand.
	add(first)
	if err := a.sync(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if d, ok := a.dest(name); !ok || d.URL != first {
		t.Errorf("with the database closed: %v", ok)
	}
}
