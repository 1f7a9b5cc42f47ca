package a2s_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	// The other protocols, to check detection does not collide.
	_ "github.com/querylens/querylens/codecs/bloodmasters"
	_ "github.com/querylens/querylens/codecs/gamespy2"
	_ "github.com/querylens/querylens/codecs/mumble"
	_ "github.com/querylens/querylens/codecs/ogp"
	_ "github.com/querylens/querylens/codecs/samp"
	_ "github.com/querylens/querylens/codecs/zandronum"
)

// TestDetectAmongAll: with every other protocol registered, each fixture's
// datagrams are detected as A2S, and no other protocol's detection is
// more confident.
func TestDetectAmongAll(t *testing.T) {
	for _, p := range readPackets(t) {
		for i, d := range p.datagrams {
			c, _, err := codecs.Detect(d)
			if err != nil || c.Name() != "a2s" {
				name := "none"
				if c != nil {
					name = c.Name()
				}
				t.Errorf("%s datagram %d: detected as %s (%v)", p.name, i, name, err)
			}
		}
	}
}
