package relay

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs/gamespy3"
	"github.com/querylens/querylens/relay/wire"
)

// TestCheckRequestGameSpy3 checks stage 1 with the gamespy3 codec's
// CheckQuery: GameDig's challenge request, padded with four zero bytes
// after the session id, is admitted like the bare one, and what no client
// sends is refused as not a query. Only the decision is checked: nothing
// is sent.
func TestCheckRequestGameSpy3(t *testing.T) {
	s := newRelay(t, testConfig()).srv
	for _, tc := range []struct {
		name, hex string
		ok        bool
	}{
		{"challenge request", "fefd09 00000001", true},
		{"challenge request padded (GameDig)", "fefd09 00000001 00000000", true},
		{"v4 stat query", "fefd00 00000001 0091295b ffffff01", true},
		{"challenge request with other padding", "fefd09 00000001 ffffff01", false},
		{"challenge request with 5 bytes after", "fefd09 00000001 0000000000", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := hex.DecodeString(strings.ReplaceAll(tc.hex, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			req, ref := s.checkRequest(gamespy3.Protocol, "127.0.0.1:29900", d)
			switch {
			case tc.ok && ref != nil:
				t.Fatalf("refused: %v", ref)
			case tc.ok && req.proto != gamespy3.Protocol:
				t.Fatalf("admitted as %q", req.proto)
			case !tc.ok && (ref == nil || ref.Code != wire.CodeNotAQuery):
				t.Fatalf("got %+v, want a refusal with code %v", ref, wire.CodeNotAQuery)
			}
		})
	}
}
