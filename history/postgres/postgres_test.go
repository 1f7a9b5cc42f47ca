package postgres

import (
	"context"
	"database/sql"
	"errors"
	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/sqlstore"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/internal/testpg"
)

func TestConformance(t *testing.T) {
	pg := testpg.Start(t)
	historytest.Run(t, func(t *testing.T) history.Store {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := Open(ctx, pg.FreshURL(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestOpenRefuses(t *testing.T) {
	pg := testpg.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Open(ctx, "mysql://x"); err == nil {
		t.Error("a mysql URL opened")
	}
	// A database holding another program's tables is left alone.
	url := pg.FreshURL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE invoices (id INT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url); !errors.Is(err, history.ErrForeign) {
		t.Fatalf("foreign database: %v, want ErrForeign", err)
	}
	// Reopening our own database works and keeps its data.
	url = pg.FreshURL(t)
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	k := history.Key{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	if err := s.Record(ctx, []history.Sample{{Key: k, At: historytest.T0, State: history.StateOffline}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Samples(ctx, k, historytest.T0, historytest.T0.Add(time.Second))
	if err != nil || len(got) != 1 {
		t.Fatalf("after reopening: %v %v", got, err)
	}
}

func TestOutboxConformance(t *testing.T) {
	pg := testpg.Start(t)
	historytest.RunOutbox(t, func(t *testing.T) historytest.OutboxStore {
		return openURL(t, pg.FreshURL(t))
	})
}

func openURL(t *testing.T, url string) *sqlstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMigrateToOutbox(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	v1 := Dialect
	v1.Version = 1
	historytest.Migration(t, func(t *testing.T) history.Store {
		s, err := openDialect(context.Background(), url, v1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, func(t *testing.T) interface {
		history.Store
		outbox.Store
	} {
		return openURL(t, url)
	})
}

// TestTwoClaimers: two instances (two pools on one database) claiming at
// once never get the same row (FOR UPDATE SKIP LOCKED).
func TestTwoClaimers(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	a, b := openURL(t, url), openURL(t, url)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	dests := []alerts.Destination{{Name: "hook", Kind: alerts.DestWebhook, URL: "https://example.org/h"}}
	const watches = 40
	for i := range watches {
		w := alerts.Watch{ID: "w" + strconv.Itoa(i), Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}, Down: true}
		if err := a.PutWatch(ctx, w, outbox.OriginAPI, historytest.T0); err != nil {
			t.Fatal(err)
		}
		for j := 1; j <= 3; j++ {
			at := historytest.T0.Add(time.Duration(j) * time.Second)
			if _, err := b.Apply(ctx, w.ID, alerts.Sample{Time: at, State: alerts.StateOffline}, dests, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	historytest.SharedClaims(t, []outbox.Store{a, b, a, b, a, b}, watches)
}
