package status

import (
	"context"
	"sync"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/server"
)

// WatchLister lists the alerts' watches (the history database's
// outbox.Store is one). The page reads only whether a server is watched
// and its last alert: never a rule, a destination or an id.
type WatchLister interface {
	Watches(ctx context.Context) ([]outbox.Watch, error)
}

// watchedTTL is how long the page reuses the list of watched servers.
const watchedTTL = 10 * time.Second

// watched is what the page shows of a watched server.
type watched struct {
	Last   alerts.Kind // the last alert told of it, by any of its watches ("" when none yet)
	LastAt time.Time
}

// watchedCache is the watched servers by history key, read at most once
// per watchedTTL.
type watchedCache struct {
	mu   sync.Mutex
	at   time.Time
	byKy map[history.Key]watched
}

// watched reports whether ref is watched, from h.Watches.
func (h *Handler) watched(ctx context.Context, ref server.Ref) *watched {
	if h.Watches == nil {
		return nil
	}
	c := &h.watchedCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKy == nil || time.Since(c.at) > watchedTTL {
		ws, err := h.Watches.Watches(ctx)
		if err != nil {
			h.Logger.Warn("status: watched servers", "err", err)
			if c.byKy == nil {
				return nil
			}
		} else {
			c.byKy, c.at = map[history.Key]watched{}, time.Now()
			for _, w := range ws {
				r, err := server.New(w.Watch.Server.Protocol, w.Watch.Server.Addr, w.Watch.Server.Options)
				if err != nil {
					continue
				}
				k := r.Key()
				have := c.byKy[k]
				if w.State.LastKind != "" && w.State.LastAt.After(have.LastAt) {
					have = watched{Last: w.State.LastKind, LastAt: w.State.LastAt}
				}
				c.byKy[k] = have
			}
		}
	}
	w, ok := c.byKy[ref.Key()]
	if !ok {
		return nil
	}
	return &w
}

// kindLabels are the alerts' kinds as the page words them.
var kindLabels = map[alerts.Kind]string{
	alerts.KindDown: "down", alerts.KindStillDown: "still down", alerts.KindMalformed: "answering garbage",
	alerts.KindUp: "back up", alerts.KindCannotCheck: "cannot check", alerts.KindChecking: "checking again",
	alerts.KindAtLeast: "players reached the threshold", alerts.KindFull: "full", alerts.KindEmpty: "empty",
	alerts.KindMap: "map changed", alerts.KindName: "name changed", alerts.KindPlayers: "players joined or left",
	alerts.KindPlayersMore: "more player changes",
}

func kindLabel(k alerts.Kind) string {
	if s, ok := kindLabels[k]; ok {
		return s
	}
	return string(k)
}
