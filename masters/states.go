package masters

import (
	"context"
	"sync"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
)

// HistoryStates is a StateSource reading the history store: a listed
// server that is tracked gets its last sample within Window. It never
// asks a server. Lookups are bounded (MaxLookups per call) and their
// answers kept for CacheFor, since a page polls the list.
type HistoryStates struct {
	Store      history.Store
	Window     time.Duration // default 2 h
	MaxLookups int           // default 2,000
	CacheFor   time.Duration // default 30 s
	Now        func() time.Time

	mu      sync.Mutex
	tracked map[history.Key]bool
	at      time.Time
	known   map[string]cached
}

type cached struct {
	s     server.Summary
	found bool
	at    time.Time
}

// States implements StateSource.
func (h *HistoryStates) States(ctx context.Context, refs []server.Ref) map[string]server.Summary {
	now := time.Now()
	if h.Now != nil {
		now = h.Now()
	}
	window, maxLookups, cacheFor := h.Window, h.MaxLookups, h.CacheFor
	if window <= 0 {
		window = 2 * time.Hour
	}
	if maxLookups <= 0 {
		maxLookups = 2000
	}
	if cacheFor <= 0 {
		cacheFor = 30 * time.Second
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tracked == nil || now.Sub(h.at) >= cacheFor {
		servers, err := h.Store.Tracked(ctx)
		if err != nil {
			return nil
		}
		h.tracked = make(map[history.Key]bool, len(servers))
		for _, s := range servers {
			h.tracked[s.Key] = true
		}
		h.at = now
		if len(h.known) > 4*maxLookups {
			h.known = nil
		}
	}
	if h.known == nil {
		h.known = map[string]cached{}
	}
	out := map[string]server.Summary{}
	lookups := 0
	for _, ref := range refs {
		k := ref.Key()
		if !h.tracked[k] {
			continue
		}
		ks := k.String()
		if c, ok := h.known[ks]; ok && now.Sub(c.at) < cacheFor {
			if c.found {
				out[ks] = c.s
			}
			continue
		}
		if lookups >= maxLookups {
			continue
		}
		lookups++
		samples, err := h.Store.Samples(ctx, k, now.Add(-window), now.Add(time.Second))
		if err != nil {
			continue
		}
		c := cached{at: now}
		if len(samples) > 0 {
			c.s, c.found = server.SummaryOfSample(ref, samples[len(samples)-1]), true
			out[ks] = c.s
		}
		h.known[ks] = c
	}
	return out
}
