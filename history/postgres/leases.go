package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlstore"
)

// Leases is a history.Leaser on the sampler_leases table: one row per
// server naming the instance that samples it and until when. Taking,
// renewing and reading a lease is one statement, so two instances asking
// at once cannot both win.
type Leases struct {
	db     *sql.DB
	holder string
}

var _ history.Leaser = (*Leases)(nil)

// NewLeases returns the leases of one instance on s's database. holder
// names the instance; empty means the host name and a random suffix.
func NewLeases(s *sqlstore.Store, holder string) *Leases {
	if holder == "" {
		host, _ := os.Hostname()
		var b [6]byte
		rand.Read(b[:])
		holder = host + "-" + hex.EncodeToString(b[:])
	}
	return &Leases{db: s.DB(), holder: holder}
}

// Holder is the name this instance's leases carry.
func (l *Leases) Holder() string { return l.holder }

// qLease takes the lease if it is free, expired or already the caller's,
// and returns the row as it is afterwards.
const qLease = `WITH up AS (
	INSERT INTO sampler_leases AS l (protocol, addr, holder, expires) VALUES ($1, $2, $3, $4)
	ON CONFLICT (protocol, addr) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
		WHERE l.holder = excluded.holder OR l.expires <= $5
	RETURNING holder, expires)
SELECT holder, expires FROM up
UNION ALL
SELECT holder, expires FROM sampler_leases
	WHERE protocol = $1 AND addr = $2 AND NOT EXISTS (SELECT 1 FROM up)`

// Lease implements history.Leaser.
func (l *Leases) Lease(ctx context.Context, k history.Key, now, until time.Time) (bool, time.Time, error) {
	var holder string
	var expires int64
	err := l.db.QueryRowContext(ctx, qLease, k.Protocol, k.Addr, l.holder, until.UnixMilli(), now.UnixMilli()).Scan(&holder, &expires)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("history: lease %s: %w", k, err)
	}
	return holder == l.holder, time.UnixMilli(expires), nil
}

// Release implements history.Leaser.
func (l *Leases) Release(ctx context.Context) error {
	if _, err := l.db.ExecContext(ctx, `DELETE FROM sampler_leases WHERE holder = $1`, l.holder); err != nil {
		return fmt.Errorf("history: release leases: %w", err)
	}
	return nil
}
