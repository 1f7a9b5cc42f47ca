package worker

import (
	"context"
	"testing"
	"time"

	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/internal/testpg"
)

// TestSharedPostgres: two instances (two pools) on one PostgreSQL
// history, each with its worker; every message is delivered once.
func TestSharedPostgres(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	var stores []outbox.Store
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err := postgres.Open(ctx, url)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	sharedRun(t, stores, 30)
}
