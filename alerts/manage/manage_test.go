package manage_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/manage"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/sqlite"
)

const token = "s3cr3t-t0ken"

var t0 = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

func TestAddListRemove(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	discord := alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/1/" + token, ThreadID: "7"}
	o := manage.Options{Max: 2, Now: func() time.Time { return t0 }}
	// A watches file's watch, stored as the server would.
	if err := st.PutWatch(ctx, alerts.Watch{ID: "file", Server: srv, Down: true, To: []string{"ops"}}, outbox.OriginFile, t0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		w    alerts.Watch
		d    alerts.Destination
		o    manage.Options
		err  error
	}{
		{"ok", alerts.Watch{ID: "duel", Server: srv, Down: true, Up: true}, discord, o, nil},
		{"exists", alerts.Watch{ID: "duel", Server: srv, Down: true}, discord, o, manage.ErrExists},
		{"cap", alerts.Watch{ID: "ctf", Server: srv, Down: true}, discord, o, manage.ErrCap},
		{"bad id", alerts.Watch{ID: "a/b", Server: srv, Down: true}, discord, o, manage.ErrBadID},
		{"nothing to tell", alerts.Watch{ID: "x", Server: srv}, discord, o, alerts.ErrNothingToTell},
		{"no kind", alerts.Watch{ID: "x", Server: srv, Down: true}, alerts.Destination{URL: discord.URL}, o, manage.ErrDest},
		{"secret for discord", alerts.Watch{ID: "x", Server: srv, Down: true},
			alerts.Destination{Kind: alerts.DestDiscord, URL: discord.URL, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, o, manage.ErrDest},
		{"thread for slack", alerts.Watch{ID: "x", Server: srv, Down: true},
			alerts.Destination{Kind: alerts.DestSlack, URL: "https://hooks.slack.com/services/T/" + token, ThreadID: "1"}, o, manage.ErrDest},
		{"check refuses", alerts.Watch{ID: "x", Server: srv, Down: true}, discord,
			manage.Options{Check: func(alerts.Destination) error { return errors.New("no") }}, manage.ErrDest},
		{"partial players", alerts.Watch{ID: "x", Server: srv, Joins: true}, discord,
			manage.Options{Complete: func(string) bool { return false }}, alerts.ErrPartialPlayers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manage.Add(ctx, st, tc.w, tc.d, outbox.OriginCLI, tc.o)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Add = %v, want %v", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Fatalf("the error carries the token: %v", err)
			}
		})
	}
	got, err := manage.List(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Watch.ID != "duel" || got[1].Origin != outbox.OriginFile {
		t.Fatalf("List = %+v", got)
	}
	want := manage.Dest{Name: "watch:duel", Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/1/***", ThreadID: "7"}
	if len(got[0].Dests) != 1 || got[0].Dests[0] != want || len(got[1].Dests) != 0 {
		t.Fatalf("List's destinations = %+v and %+v", got[0].Dests, got[1].Dests)
	}
	if err := manage.Remove(ctx, st, "file"); !errors.Is(err, manage.ErrFileWatch) {
		t.Fatalf("Remove of the file's watch = %v", err)
	}
	if err := manage.Remove(ctx, st, "duel"); err != nil {
		t.Fatal(err)
	}
	if err := manage.Remove(ctx, st, "duel"); !errors.Is(err, manage.ErrNotFound) {
		t.Fatalf("Remove again = %v", err)
	}
	if ds, err := st.Destinations(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("the destination stays: %v %v", ds, err)
	}
	// A random id when none is given.
	w, err := manage.Add(ctx, st, alerts.Watch{Server: srv, Down: true}, discord, outbox.OriginAPI, o)
	if err != nil || !strings.HasPrefix(w.ID, "w-") || w.To[0] != outbox.DestName(w.ID) {
		t.Fatalf("Add without id = %+v, %v", w, err)
	}
}

func TestSamples(t *testing.T) {
	w := alerts.Watch{ID: "duel", Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}}
	ev := manage.Samples(w, t0)
	if len(ev) != len(alerts.Kinds()) {
		t.Fatalf("%d samples, want one per kind", len(ev))
	}
	ids := map[string]bool{}
	for i, e := range ev {
		if e.Kind != alerts.Kinds()[i] || ids[e.ID()] {
			t.Fatalf("sample %d: %s %s", i, e.Kind, e.ID())
		}
		ids[e.ID()] = true
		for _, k := range []alerts.DestKind{alerts.DestDiscord, alerts.DestSlack, alerts.DestWebhook} {
			if m := alerts.Render(k, e); len(m.Body) == 0 {
				t.Fatalf("%s for %s renders nothing", e.Kind, k)
			}
		}
	}
}

func TestAllPlayers(t *testing.T) {
	for p, want := range map[string]bool{"zandronum": true, "quake3": true, "minecraft": false, "nope": false} {
		if got := manage.AllPlayers(p); got != want {
			t.Errorf("AllPlayers(%q) = %v", p, got)
		}
	}
}
