package web_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/internal/fakeserver"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// TestStatusPageWatched: a watched server's page and live article say so,
// with its last alert, and nothing of the watch's rules or destination;
// another server's page says nothing.
func TestStatusPageWatched(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const token = "d1sc0rd-t0ken"
	w := alerts.Watch{ID: "ops-watch-id", Server: alerts.Ref{Protocol: fakeserver.Protocol, Addr: "10.0.0.1:7777"}, Down: true, Up: true,
		To: []string{outbox.DestName("ops-watch-id")}}
	dest := alerts.Destination{Name: w.To[0], Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/1/" + token}
	if err := store.PutWatch(ctx, w, outbox.OriginCLI, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := store.PutDestination(ctx, dest, outbox.OriginCLI, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Never sampled yet: watched, no alert.
	h, err := web.New(web.Config{Exchanger: fakes, StatusTimeout: 150 * time.Millisecond, History: store})
	if err != nil {
		t.Fatal(err)
	}
	d := ht.Parse(t, get(t, h, "/s/webtest/10.0.0.1:7777").Body.Bytes())
	if got := ht.Text(d.TestID(t, "status-watched")); got != "watched" {
		t.Errorf("badge %q", got)
	}
	if n := len(d.TestIDs("status-last-alert")); n != 0 {
		t.Errorf("a last alert before any")
	}

	// Three lost samples tell down.
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := store.Apply(ctx, w.ID, alerts.Sample{Time: t0.Add(time.Duration(i) * time.Minute), State: alerts.StateOffline}, []alerts.Destination{dest}, t0); err != nil {
			t.Fatal(err)
		}
	}
	h, err = web.New(web.Config{Exchanger: fakes, StatusTimeout: 150 * time.Millisecond, History: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/s/webtest/10.0.0.1:7777", "/s/webtest/10.0.0.1:7777/live"} {
		rec := get(t, h, path)
		d := ht.Parse(t, rec.Body.Bytes())
		d.TestID(t, "status-watched")
		last := d.TestID(t, "status-last-alert")
		if got := ht.Text(last); !strings.Contains(got, "last alert: down") || !strings.Contains(got, "1 Dec 20:02 UTC") {
			t.Errorf("%s: last alert %q", path, got)
		}
		for _, secret := range []string{token, "discord.com", w.ID} {
			if strings.Contains(rec.Body.String(), secret) {
				t.Errorf("%s shows %q", path, secret)
			}
		}
	}
	d = ht.Parse(t, get(t, h, "/s/webtest/10.0.0.6:7777").Body.Bytes())
	if n := len(d.TestIDs("status-watched")); n != 0 {
		t.Error("an unwatched server is shown watched")
	}
}
