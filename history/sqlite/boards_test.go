package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/history/historytest"
)

func TestBoards(t *testing.T) {
	historytest.RunBoards(t, func(t *testing.T) historytest.BoardStore {
		return open(t, filepath.Join(t.TempDir(), FileName))
	})
}

// TestMigrateToBoards opens a database as the program before the boards
// of several servers left it (schema version 3).
func TestMigrateToBoards(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	v3 := Dialect
	v3.Version = 3
	historytest.MigrateToBoards(t, func(t *testing.T) historytest.OutboxStore {
		s, err := openDialect(context.Background(), path, v3)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, func(t *testing.T) historytest.BoardStore { return open(t, path) })
}
