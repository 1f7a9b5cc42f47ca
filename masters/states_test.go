package masters

import (
	"context"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
)

// stubStore is a history store that tracks two servers and counts lookups.
type stubStore struct {
	history.Store // the methods HistoryStates does not call panic
	samples       map[history.Key][]history.Sample
	tracked       int
	lookups       int
}

func (s *stubStore) Tracked(context.Context) ([]history.Server, error) {
	s.tracked++
	var out []history.Server
	for k := range s.samples {
		out = append(out, history.Server{Key: k})
	}
	return out, nil
}

func (s *stubStore) Samples(_ context.Context, k history.Key, from, to time.Time) ([]history.Sample, error) {
	s.lookups++
	var out []history.Sample
	for _, x := range s.samples[k] {
		if !x.At.Before(from) && x.At.Before(to) {
			out = append(out, x)
		}
	}
	return out, nil
}

func TestHistoryStates(t *testing.T) {
	clock := newFakeClock()
	on := history.Key{Protocol: "a2s", Addr: "203.0.113.1:27015"}
	old := history.Key{Protocol: "a2s", Addr: "203.0.113.2:27015"}
	st := &stubStore{samples: map[history.Key][]history.Sample{
		on: {
			{Key: on, At: epoch.Add(-10 * time.Minute), State: history.StateOffline},
			{Key: on, At: epoch.Add(-time.Minute), State: history.StateOnline, Name: "up", Players: 3, MaxPlayers: 8},
		},
		old: {{Key: old, At: epoch.Add(-5 * time.Hour), State: history.StateOnline}}, // beyond the window
	}}
	h := &HistoryStates{Store: st, Now: clock.now}
	refs := []server.Ref{{Protocol: "a2s", Addr: on.Addr}, {Protocol: "a2s", Addr: old.Addr}, {Protocol: "a2s", Addr: "203.0.113.3:27015"}}
	got := h.States(context.Background(), refs)
	if len(got) != 1 || got[on.String()].State != server.Online || got[on.String()].Name != "up" || got[on.String()].Source != server.SourceHistory {
		t.Fatalf("States = %+v", got)
	}
	if st.lookups != 2 {
		t.Errorf("%d sample lookups, want 2 (the untracked server is not looked up)", st.lookups)
	}
	// Within CacheFor, nothing is asked again.
	clock.advance(10 * time.Second)
	h.States(context.Background(), refs)
	if st.lookups != 2 || st.tracked != 1 {
		t.Errorf("after 10 s: %d lookups, %d tracked calls; want 2 and 1", st.lookups, st.tracked)
	}
	clock.advance(30 * time.Second)
	h.States(context.Background(), refs)
	if st.lookups != 4 || st.tracked != 2 {
		t.Errorf("after 40 s: %d lookups, %d tracked calls; want 4 and 2", st.lookups, st.tracked)
	}
	// MaxLookups bounds one call.
	h2 := &HistoryStates{Store: st, Now: clock.now, MaxLookups: 1}
	st.lookups = 0
	h2.States(context.Background(), refs)
	if st.lookups != 1 {
		t.Errorf("MaxLookups 1: %d lookups", st.lookups)
	}
}
