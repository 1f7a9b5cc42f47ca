package outbox

import (
	"context"
	"time"
)

// Boards are the message ids of the live boards of several servers (a
// watches file's [[board]], alerts.Board), by board id: what a board
// edits next time, on this instance or another one sharing the
// database. A watch's own board keeps its ids in Watch.Board.
type Boards interface {
	// BoardMessages lists the stored boards' message ids, by board id.
	BoardMessages(ctx context.Context) (map[string][]string, error)
	// SetBoardMessages stores board id's message ids, in page order
	// (insert or replace).
	SetBoardMessages(ctx context.Context, id string, messages []string, now time.Time) error
	// DeleteBoardMessages forgets board id's message ids (the messages
	// stay in the channel); forgetting one not stored is not an error.
	DeleteBoardMessages(ctx context.Context, id string) error
}
