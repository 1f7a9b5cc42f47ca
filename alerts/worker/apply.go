package worker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/history/outbox"
)

// DefaultHoldMax is how many samples a Holder keeps while the database
// does not answer.
const DefaultHoldMax = 10_000

// Holder feeds samples to a store's Apply, holding them in memory, in
// order, while the store fails (the database unreachable), up to HoldMax;
// past it the oldest are dropped and counted. Once the store answers
// again they are applied in order: the machine skips a sample it has
// seen, so none is told twice, and a transition inside the held samples
// is told late, not lost.
type Holder struct {
	Store   outbox.Store
	HoldMax int    // 0: DefaultHoldMax
	Wake    func() // called after rows may have been written (Worker.Wake); nil: none

	mu   sync.Mutex
	held []heldSample
	lost uint64
}

type heldSample struct {
	watch string
	s     alerts.Sample
	to    []alerts.Destination
	now   time.Time
}

// Apply applies s to the watch after any samples held, or holds it
// when the store fails. It returns the events of the samples applied;
// an error only for a watch the store does not know.
func (h *Holder) Apply(ctx context.Context, watch string, s alerts.Sample, to []alerts.Destination, now time.Time) ([]alerts.Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	limit := h.HoldMax
	if limit <= 0 {
		limit = DefaultHoldMax
	}
	if len(h.held) >= limit {
		drop := len(h.held) - limit + 1
		h.lost += uint64(drop)
		h.held = append(h.held[:0], h.held[drop:]...)
	}
	h.held = append(h.held, heldSample{watch, s, to, now})
	return h.flush(ctx)
}

// Flush applies the samples held, in order, until the store fails.
func (h *Holder) Flush(ctx context.Context) ([]alerts.Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.flush(ctx)
}

func (h *Holder) flush(ctx context.Context) ([]alerts.Event, error) {
	var out []alerts.Event
	var unknown error
	i := 0
	for ; i < len(h.held); i++ {
		x := h.held[i]
		ev, err := h.Store.Apply(ctx, x.watch, x.s, x.to, x.now)
		if errors.Is(err, outbox.ErrNoWatch) {
			unknown = err // deleted meanwhile: nothing to hold it for
			continue
		}
		if err != nil {
			break
		}
		out = append(out, ev...)
	}
	h.held = append(h.held[:0], h.held[i:]...)
	if len(out) > 0 && h.Wake != nil {
		h.Wake()
	}
	return out, unknown
}

// Held is the samples held now; Lost those dropped past HoldMax.
func (h *Holder) Held() (held int, lost uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held), h.lost
}
