package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/history/outbox"
)

func TestDestinations(t *testing.T) {
	historytest.RunDestinations(t, func(t *testing.T) historytest.DestinationStore {
		return open(t, filepath.Join(t.TempDir(), FileName))
	})
}

// TestMigrateToDestinations opens a database as the program before the
// stored destinations left it, with a watch in it: the watch stays, and
// destinations can be stored.
func TestMigrateToDestinations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	v2 := Dialect
	v2.Version = 2
	old, err := openDialect(ctx, path, v2)
	if err != nil {
		t.Fatal(err)
	}
	w := alerts.Watch{ID: "w1", Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}, Down: true, To: []string{"ops"}}
	if err := old.PutWatch(ctx, w, outbox.OriginFile, historytest.T0); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Destinations(ctx); err == nil {
		t.Fatal("a version 2 database has destinations")
	}
	old.Close()
	s := open(t, path)
	defer s.Close()
	ws, err := s.Watches(ctx)
	if err != nil || len(ws) != 1 || ws[0].Watch.ID != "w1" || ws[0].Origin != outbox.OriginFile {
		t.Fatalf("watches after the migration: %+v %v", ws, err)
	}
	d := alerts.Destination{Name: outbox.DestName("w2"), Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/1/x"}
	if err := s.PutDestination(ctx, d, outbox.OriginCLI, historytest.T0); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Destinations(ctx); err != nil || len(ds) != 1 || ds[0] != d {
		t.Fatalf("destinations: %v %v", ds, err)
	}
}
