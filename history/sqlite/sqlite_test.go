package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/historytest"
)

func TestConformance(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), FileName))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
