package relay

import (
	"slices"
	"testing"

	"github.com/querylens/querylens/relay/wire"
)

// TestMessageEnd: the writer sends each queued frame alone in
// Subprotocol, and with SubprotocolBatch as many together as fit in
// wire.MaxBatch bytes, a frame that would pass it starting the next message.
func TestMessageEnd(t *testing.T) {
	small := make([]byte, 100)
	big := make([]byte, wire.MaxBatch-1-2-100-2) // fits with one small one exactly
	for _, tc := range []struct {
		name    string
		queued  [][]byte
		batches bool
		want    []int // the ends, message by message
	}{
		{"v1", [][]byte{small, small, small}, false, []int{1, 2, 3}},
		{"batch, all in one", [][]byte{small, small, small}, true, []int{3}},
		{"batch, one alone", [][]byte{small}, true, []int{1}},
		{"batch, full", [][]byte{small, big, small}, true, []int{2, 3}},
		{"batch, past wire.MaxBatch", [][]byte{small, append(big, 0), small}, true, []int{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for i := 0; i < len(tc.queued); {
				i = messageEnd(tc.queued, i, tc.batches)
				got = append(got, i)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("messages end at %v, want %v", got, tc.want)
			}
		})
	}
}
