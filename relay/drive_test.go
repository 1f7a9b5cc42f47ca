package relay

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
	events    []event
	sent      []uint32
	cancelled []uint32
	openAt    [][]uint32
}

func (s *scriptTransport) send(_ context.Context, _ []byte) (uint32, error) {
	id := uint32(len(s.sent) + 1)
	s.sent = append(s.sent, id)
	return id, nil
}

func (s *scriptTransport) cancel(id uint32) { s.cancelled = append(s.cancelled, id) }

func (s *scriptTransport) next(context.Context) (event, error) {
	var open []uint32
	for _, id := range s.sent {
		if !slices.Contains(s.cancelled, id) {
			open = append(open, id)
		}
	}
	s.openAt = append(s.openAt, open)
	if len(s.events) == 0 {
		return event{}, context.Canceled // drive waited for an event the script does not have
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
	rep := func(id uint32, s string) event { return event{typ: wire.FrameReply, id: id, data: []byte(s)} }
	end := func(id uint32) event { return event{typ: wire.FrameEnd, id: id, reason: wire.EndWindow} }
	for _, tc := range []struct {
		name      string
		events    []event
		done      bool
		openAt    [][]uint32
		cancelled []uint32
	}{
		{"challenge then answer", []event{rep(1, "part"), rep(1, "chal"), rep(2, "ans")}, true,
			[][]uint32{{1}, {1}, {2}}, []uint32{1, 2}},
		{"two challenges", []event{rep(1, "chal"), rep(2, "chal"), rep(3, "ans")}, true,
			[][]uint32{{1}, {2}, {3}}, []uint32{1, 2, 3}},
		{"parts until the window closes", []event{rep(1, "part"), rep(1, "part"), end(1)}, false,
			[][]uint32{{1}, {1}, {1}}, nil},
		{"the cancelled query's END after all", []event{rep(1, "chal"), end(1), rep(2, "ans")}, true,
			[][]uint32{{1}, {2}, {2}}, []uint32{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &scriptTransport{events: tc.events}
			res, err := drive(context.Background(), stepQuery{}, tr)
			if err != nil {
				t.Fatalf("drive: %v", err)
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
