package api

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
)

// TrackedTTL is how long GET /api/v1/tracked is reused: a sample of each
// server comes once a minute at most, and reading the last sample of
// thousands of servers is not free.
const TrackedTTL = 30 * time.Second

// Tracked is the body of GET /api/v1/tracked.
type Tracked struct {
	Generated time.Time        `json:"generated"`
	Servers   []server.Summary `json:"servers"` // sorted by key
}

// trackedList serves GET /api/v1/tracked: the tracked set (the store's,
// as /history/tracked.json lists it), each server with its last recorded
// sample. It reads the store only and never asks a server.
func (h *Handler) trackedList(w http.ResponseWriter, r *http.Request) {
	if h.cfg.History == nil {
		writeError(w, http.StatusNotFound, "", "this site does not record server history (serve --history)")
		return
	}
	b, err := h.tracked.Get("tracked", TrackedTTL, func() ([]byte, error) {
		// Others may be waiting for this fill: it must not end with the
		// first asker.
		t, err := h.readTracked(context.WithoutCancel(r.Context()))
		if err != nil {
			return nil, err
		}
		return marshal(t)
	})
	if err != nil {
		h.cfg.Logger.Warn("api: tracked", "err", err)
		writeError(w, http.StatusServiceUnavailable, "", "the history store could not be read; try again later")
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=30")
	writeRaw(w, http.StatusOK, b)
}

// lastWindow is how far back a tracked server's last sample is looked
// for: a few sampling intervals. A server with no sample that recent is
// "unknown": what it said longer ago is not its state.
func (h *Handler) lastWindow() time.Duration {
	every := history.DefaultSampleEvery
	if h.cfg.Tracker != nil {
		every = h.cfg.Tracker.Interval()
	}
	return max(3*every, 10*time.Minute)
}

func (h *Handler) readTracked(ctx context.Context) (Tracked, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	servers, err := h.cfg.History.Tracked(ctx)
	if err != nil {
		return Tracked{}, err
	}
	now := h.now()
	from := now.Add(-h.lastWindow())
	out := Tracked{Generated: now.UTC(), Servers: make([]server.Summary, 0, len(servers))}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 4) // the store's readers, not the visitors'
	var wg sync.WaitGroup
	for _, hs := range servers {
		ref, err := server.FromKey(hs.Key)
		if err != nil {
			h.cfg.Logger.Warn("api: tracked key does not parse", "key", hs.Key.String(), "err", err)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			samples, err := h.cfg.History.Samples(ctx, hs.Key, from, now.Add(time.Second))
			var s server.Summary
			if len(samples) > 0 {
				s = server.SummaryOfSample(ref, samples[len(samples)-1])
			} else {
				// State 0, "unknown", at the zero time.
				s = server.SummaryOfSample(ref, history.Sample{})
				s.Detail = "No sample recorded since " + from.UTC().Format(time.RFC3339) + "."
			}
			if s.Name == "" {
				s.Name = hs.Name
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			out.Servers = append(out.Servers, s)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return Tracked{}, firstErr
	}
	sort.Slice(out.Servers, func(i, j int) bool { return out.Servers[i].Key < out.Servers[j].Key })
	return out, nil
}
