package postgres

import (
	"context"
	"database/sql"
	"errors"
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
