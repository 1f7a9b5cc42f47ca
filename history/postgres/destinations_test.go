package postgres

import (
	"testing"

	"github.com/querylens/querylens/history/historytest"
	"github.com/querylens/querylens/internal/testpg"
)

func TestDestinations(t *testing.T) {
	pg := testpg.Start(t)
	historytest.RunDestinations(t, func(t *testing.T) historytest.DestinationStore {
		return openURL(t, pg.FreshURL(t))
	})
}
