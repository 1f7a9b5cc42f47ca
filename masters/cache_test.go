package masters

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/server"
)

// cachePeeker plays a relay cache holding every answer of the servers it
// has, by asking them in memory; it counts peeks.
type cachePeeker struct {
	servers map[netip.AddrPort]demo.Handler
	peeks   int
}

func (c *cachePeeker) Peek(_ string, target netip.AddrPort, d []byte) ([][]byte, bool) {
	c.peeks++
	h := c.servers[target]
	if h == nil {
		return nil, false
	}
	return h.Respond(d, netip.MustParseAddrPort("192.0.2.1:1"), epoch), true
}

func TestCacheStates(t *testing.T) {
	a := netip.MustParseAddrPort("203.0.113.1:27015")
	b := netip.MustParseAddrPort("203.0.113.2:27015")
	q := netip.MustParseAddrPort("203.0.113.3:27960")
	silent := netip.MustParseAddrPort("203.0.113.4:27015")
	p := &cachePeeker{servers: map[netip.AddrPort]demo.Handler{
		a:      demo.NewA2S(1, demo.A2SConfig{InfoChallenge: true}, demo.Normal), // challenges, then answers
		b:      demo.NewA2S(2, demo.A2SConfig{GoldSrc: true}, demo.Normal),
		q:      demo.NewQuake3(3, demo.Quake3IOQ3, demo.Normal),
		silent: demo.NewA2S(4, demo.A2SConfig{}, demo.Silent), // cached, but what it cached is nothing
	}}
	refs := []server.Ref{{Protocol: "a2s", Addr: a.String()}, {Protocol: "a2s", Addr: b.String()}, {Protocol: "quake3", Addr: q.String()},
		{Protocol: "a2s", Addr: silent.String()}, {Protocol: "a2s", Addr: "203.0.113.9:27015"}}
	c := &CacheStates{Relay: p, Now: func() time.Time { return epoch }}
	got := c.States(context.Background(), refs)
	for _, r := range refs[:3] {
		s, ok := got[r.Key().String()]
		if !ok || s.State != server.Online || s.Source != server.SourceCache || s.Name == "" || !s.At.Equal(epoch) {
			t.Errorf("%s: %+v %v, want online from the cache with a name", r, s, ok)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d states, want 3 (a server the cache cannot answer for is left out)", len(got))
	}

	// FirstOf: the cache first, then the history for the rest.
	both := FirstOf{c, knownStates{}}
	got = both.States(context.Background(), append(refs, server.Ref{Protocol: "a2s", Addr: "203.0.113.1:27016"}))
	if len(got) != 3 {
		t.Errorf("FirstOf: %d states, want 3", len(got))
	}
	if s := got[refs[0].Key().String()]; s.Source != server.SourceCache {
		t.Errorf("FirstOf: %s from %q, want the cache first", refs[0], s.Source)
	}
}
