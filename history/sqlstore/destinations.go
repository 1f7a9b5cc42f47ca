package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
)

var _ outbox.Destinations = (*Store)(nil)

// The stored destinations (schema step 3).
const (
	qDestPut = `INSERT INTO destinations (name, dest, origin, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET dest = excluded.dest, origin = excluded.origin, updated = excluded.updated`
	qDests      = `SELECT name, dest FROM destinations ORDER BY name`
	qDestDelete = `DELETE FROM destinations WHERE name = ?`
)

// PutDestination implements outbox.Destinations. Its errors name the
// destination, never its URL or secret.
func (s *Store) PutDestination(ctx context.Context, d alerts.Destination, origin outbox.Origin, now time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	if d.Name == "" {
		return fmt.Errorf("history: destination without a name")
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("history: destination %q: %w", d.Name, err)
	}
	if _, err := s.db.ExecContext(ctx, s.d.Bind(qDestPut), d.Name, string(b), string(origin), ms(now)); err != nil {
		return fmt.Errorf("history: destination %q: %w", d.Name, err)
	}
	return nil
}

// Destinations implements outbox.Destinations.
func (s *Store) Destinations(ctx context.Context) ([]alerts.Destination, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return query(ctx, s.db, "destinations", s.d.Bind(qDests), nil, func(r *sql.Rows) (alerts.Destination, error) {
		var d alerts.Destination
		var name, dest string
		if err := r.Scan(&name, &dest); err != nil {
			return d, err
		}
		if err := json.Unmarshal([]byte(dest), &d); err != nil {
			// json's syntax errors quote no input, but say nothing
			// of it either way.
			return d, fmt.Errorf("destination %q does not decode", name)
		}
		d.Name = name
		return d, nil
	})
}

// DeleteDestination implements outbox.Destinations.
func (s *Store) DeleteDestination(ctx context.Context, name string) error {
	if err := s.check(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.d.Bind(qDestDelete), name); err != nil {
		return fmt.Errorf("history: delete destination %q: %w", name, err)
	}
	return nil
}
