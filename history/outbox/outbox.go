// Package outbox is what the history database keeps for alerts: each
// watch with its machine's State, and the outbox of messages still to
// send. The statements live in history/sqlstore with the rest of the
// schema (both dialects); this package names the interface and its rows,
// so that the alerts' worker depends on no database.
//
//	tracker sample ─▶ Apply: in one transaction, read the watch's State,
//	                  alerts.Next, write the new State, insert one row
//	                  per alerts.Deliveries (ignoring rows already there)
//	worker ─▶ Claim (a lease) ─▶ send ─▶ Delivered (delete)
//	                                  └▶ Retry (error, next time) or Fail
//
// A row is claimed for a while (the lease); a worker that stops between
// the claim and the outcome leaves it to the next claim after the lease:
// at least once, always under the same message id.
package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/querylens/querylens/alerts"
)

// Origin says where a watch came from.
type Origin string

const (
	OriginFile Origin = "file" // the --watches file
	OriginCLI  Origin = "cli"  // querylens watch add
	OriginAPI  Origin = "api"  // /api/v1/watches
)

// Watch is a stored watch: its rules, its origin, the machine's memory
// and the live board's Discord message ids.
type Watch struct {
	Watch   alerts.Watch
	Origin  Origin
	State   alerts.State
	Board   []string // message ids of the live status board, in order
	Updated time.Time
}

// Row is one message for one destination.
type Row struct {
	ID        string          // unique per event and destination: MessageID + "/" + Dest
	MessageID string          // alerts.Event.ID: sent as webhook-id on every attempt
	Watch     string          // the watch's id
	Dest      string          // the destination's name
	DestKind  alerts.DestKind // the kind it was rendered for
	Kind      alerts.Kind     // the event's kind
	Body      []byte
	Attempts  int       // claims so far, this one included
	Next      time.Time // not claimed before
	LastError string    // the last failure, masked (never a URL or secret)
	Created   time.Time
	FailedAt  time.Time // zero while it is still to send
}

// RowID is the row id of message id sent to dest.
func RowID(messageID, dest string) string { return messageID + "/" + dest }

// Stats is the outbox at a glance.
type Stats struct {
	Depth     int       // rows still to send (claimed or not)
	Failed    int       // rows given up on, kept for the operator
	OldestDue time.Time // when the oldest row due now was written (zero: none due)
}

// ErrNoWatch is Apply's and SetBoard's error for an id not stored.
var ErrNoWatch = errors.New("outbox: no such watch")

// Store is the watches and the outbox, in the history database. Times
// are passed in (the callers' clock), stored to the millisecond.
type Store interface {
	// PutWatch stores w (insert or replace its rules and origin); a
	// watch already stored keeps its State and board.
	PutWatch(ctx context.Context, w alerts.Watch, origin Origin, now time.Time) error
	// Watches lists the stored watches by id.
	Watches(ctx context.Context) ([]Watch, error)
	// DeleteWatch deletes a watch and its rows still to send (its failed
	// rows stay for the operator until pruned).
	DeleteWatch(ctx context.Context, id string) error
	// SetBoard records the live board's message ids.
	SetBoard(ctx context.Context, id string, board []string, now time.Time) error

	// Apply folds one sample into the watch: in one transaction it reads
	// the State, runs alerts.Next, writes the new State and inserts a
	// row per alerts.Deliveries(events, to), due at once. A row whose id
	// exists is left as it is. It returns the events.
	Apply(ctx context.Context, id string, s alerts.Sample, to []alerts.Destination, now time.Time) ([]alerts.Event, error)

	// Claim takes up to n rows due at now (not failed, Next and any
	// lease past), leases them to holder until until, counts the
	// attempt, and returns them oldest due first. Two claimers never get
	// the same row while its lease holds.
	Claim(ctx context.Context, holder string, n int, now, until time.Time) ([]Row, error)
	// Delivered deletes a row sent.
	Delivered(ctx context.Context, id string) error
	// Retry releases a row holder claimed, to be claimed again at next,
	// with its error. A row claimed since by another holder (the lease
	// ran out) is left to that one.
	Retry(ctx context.Context, id, holder, lastError string, next time.Time) error
	// Fail marks a row holder claimed as given up on at now, with its
	// error (a row claimed since by another holder is left to it).
	Fail(ctx context.Context, id, holder, lastError string, now time.Time) error
	// Failed lists the failed rows, newest first, at most limit.
	Failed(ctx context.Context, limit int) ([]Row, error)
	// Stats counts the outbox at now.
	Stats(ctx context.Context, now time.Time) (Stats, error)
	// PruneOutbox deletes failed rows that failed before before, then,
	// when more than max rows remain, the oldest beyond max (failed
	// ones first). It returns the rows deleted.
	PruneOutbox(ctx context.Context, before time.Time, max int) (int, error)
}

// Retention bounds the worker prunes with by default: failed rows are
// kept a week; the table holds at most MaxRows rows.
const (
	KeepFailed = 7 * 24 * time.Hour
	MaxRows    = 100_000
)
