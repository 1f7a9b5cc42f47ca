package postgres

import (
	"context"
	"testing"

	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/internal/testpg"
)

func TestBoards(t *testing.T) {
	pg := testpg.Start(t)
	historytest.RunBoards(t, func(t *testing.T) historytest.BoardStore {
		return openURL(t, pg.FreshURL(t))
	})
}

// TestMigrateToBoards opens a database as the program before the boards
// of several servers left it (schema version 3).
func TestMigrateToBoards(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	v3 := Dialect
	v3.Version = 3
	historytest.MigrateToBoards(t, func(t *testing.T) historytest.OutboxStore {
		s, err := openDialect(context.Background(), url, v3)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, func(t *testing.T) historytest.BoardStore { return openURL(t, url) })
}
