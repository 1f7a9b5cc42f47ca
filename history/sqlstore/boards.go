package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/querylens/querylens/history/outbox"
)

var _ outbox.Boards = (*Store)(nil)

// The live boards' message ids (schema step 4).
const (
	qBoardPut = `INSERT INTO boards (id, messages, updated) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET messages = excluded.messages, updated = excluded.updated`
	qBoards      = `SELECT id, messages FROM boards ORDER BY id`
	qBoardDelete = `DELETE FROM boards WHERE id = ?`
)

type boardRow struct {
	id       string
	messages []string
}

// BoardMessages implements outbox.Boards.
func (s *Store) BoardMessages(ctx context.Context) (map[string][]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, err := query(ctx, s.db, "boards", s.d.Bind(qBoards), nil, func(r *sql.Rows) (boardRow, error) {
		var b boardRow
		var messages string
		if err := r.Scan(&b.id, &messages); err != nil {
			return b, err
		}
		if err := json.Unmarshal([]byte(messages), &b.messages); err != nil {
			return b, fmt.Errorf("board %q does not decode: %w", b.id, err)
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(rows))
	for _, b := range rows {
		out[b.id] = b.messages
	}
	return out, nil
}

// SetBoardMessages implements outbox.Boards.
func (s *Store) SetBoardMessages(ctx context.Context, id string, messages []string, now time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	if messages == nil {
		messages = []string{}
	}
	b, _ := json.Marshal(messages)
	if _, err := s.db.ExecContext(ctx, s.d.Bind(qBoardPut), id, string(b), ms(now)); err != nil {
		return fmt.Errorf("history: board %q: %w", id, err)
	}
	return nil
}

// DeleteBoardMessages implements outbox.Boards.
func (s *Store) DeleteBoardMessages(ctx context.Context, id string) error {
	if err := s.check(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.d.Bind(qBoardDelete), id); err != nil {
		return fmt.Errorf("history: delete board %q: %w", id, err)
	}
	return nil
}
