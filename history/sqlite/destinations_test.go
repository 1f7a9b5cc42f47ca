package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/history/historytest"
)

func TestDestinations(t *testing.T) {
	historytest.RunDestinations(t, func(t *testing.T) historytest.DestinationStore {
		return open(t, filepath.Join(t.TempDir(), FileName))
	})
}
