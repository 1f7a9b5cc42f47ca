package outbox

import (
	"context"
	"time"

	"github.com/querylens/querylens/alerts"
)

// Destinations are the destinations of the watches made by querylens
// watch add and /api/v1/watches (a watches file keeps its own): one per
// watch, named DestName(watch id), stored in the history database with
// the watch. Their URLs and secrets are credentials: whoever lists them
// masks them (alerts.MaskURL).
type Destinations interface {
	// PutDestination stores d by its name (insert or replace).
	PutDestination(ctx context.Context, d alerts.Destination, origin Origin, now time.Time) error
	// Destinations lists the stored destinations by name.
	Destinations(ctx context.Context) ([]alerts.Destination, error)
	// DeleteDestination deletes the destination named name; deleting one
	// not stored is not an error.
	DeleteDestination(ctx context.Context, name string) error
}

// DestName is the name of the stored destination of the watch id. The
// prefix keeps it apart from a watches file's names, which the file's
// parser takes as they are.
func DestName(id string) string { return "watch:" + id }

// DefaultMaxWatches is how many watches may be stored by default: each is
// sampled on its own schedule, pinned in the tracker.
const DefaultMaxWatches = 1000
