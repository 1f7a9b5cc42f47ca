package drive

import (
	"context"
	"slices"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay/wire"
)

// stepQuery is a conversation in the shape of A2S's: "part" is a split
// part (more to come), "chal" a challenge answered by asking again, "ans"
// the complete answer.
type stepQuery struct{}

func (stepQuery) Start() [][]byte { return [][]byte{[]byte("Q")} }
func (stepQuery) Feed(b []byte) ([][]byte, bool, error) {
	switch string(b) {
	case "chal":
		return [][]byte{[]byte("Q+")}, false, nil
	case "ans":
		return nil, true, nil
	}
	return nil, false, nil
}
func (stepQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) { return nil, nil }

// scriptTransport hands drive a fixed list of events and records, at each
// next, which ids are open (sent, not cancelled).
type scriptTransport struct {
	events    []Event
	sent      []uint32
	cancelled []uint32
	openAt    [][]uint32
}

func (s *scriptTransport) Send(_ context.Context, _ []byte) (uint32, error) {
	id := uint32(len(s.sent) + 1)
	s.sent = append(s.sent, id)
	return id, nil
}

func (s *scriptTransport) Cancel(id uint32) { s.cancelled = append(s.cancelled, id) }

func (s *scriptTransport) Next(context.Context) (Event, error) {
	var open []uint32
	for _, id := range s.sent {
		if !slices.Contains(s.cancelled, id) {
			open = append(open, id)
		}
	}
	s.openAt = append(s.openAt, open)
	if len(s.events) == 0 {
		return Event{}, context.Canceled // drive waited for an Event the script does not have
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

// TestDriveCancelsAnsweredQuery: a reply that makes the conversation ask
// again ends the query it answered at once, so that a conversation holds
// one exchange at a time instead of one per step for the whole reply
// window; a reply that asks nothing (a split part) leaves it open.
func TestDriveCancelsAnsweredQuery(t *testing.T) {
	rep := func(id uint32, s string) Event { return Event{Type: wire.FrameReply, ID: id, Data: []byte(s)} }
	end := func(id uint32) Event { return Event{Type: wire.FrameEnd, ID: id, Reason: wire.EndWindow} }
	for _, tc := range []struct {
		name      string
		events    []Event
		done      bool
		openAt    [][]uint32
		cancelled []uint32
	}{
		{"challenge then answer", []Event{rep(1, "part"), rep(1, "chal"), rep(2, "ans")}, true,
			[][]uint32{{1}, {1}, {2}}, []uint32{1, 2}},
		{"two challenges", []Event{rep(1, "chal"), rep(2, "chal"), rep(3, "ans")}, true,
			[][]uint32{{1}, {2}, {3}}, []uint32{1, 2, 3}},
		{"parts until the window closes", []Event{rep(1, "part"), rep(1, "part"), end(1)}, false,
			[][]uint32{{1}, {1}, {1}}, nil},
		{"the cancelled query's END after all", []Event{rep(1, "chal"), end(1), rep(2, "ans")}, true,
			[][]uint32{{1}, {2}, {2}}, []uint32{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &scriptTransport{events: tc.events}
			res, err := Run(context.Background(), stepQuery{}, tr)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Done != tc.done {
				t.Errorf("Done = %v, want %v", res.Done, tc.done)
			}
			if !slices.EqualFunc(tr.openAt, tc.openAt, slices.Equal) {
				t.Errorf("open ids at each wait = %v, want %v", tr.openAt, tc.openAt)
			}
			if !slices.Equal(tr.cancelled, tc.cancelled) {
				t.Errorf("cancelled = %v, want %v", tr.cancelled, tc.cancelled)
			}
		})
	}
}
