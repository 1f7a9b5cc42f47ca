package demo

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake2"
	"github.com/querylens/querylens/codecs/quake3"
)

// TestQuake2Dialects: each dialect's server answers its own codec's
// conversation with a full status, players included, over an hour and
// a half of its clock; QuakeWorld's names keep their Quake characters in
// the fields and read plainly in the row.
func TestQuake2Dialects(t *testing.T) {
	for _, d := range []quake2.Dialect{quake2.Quake2, quake2.QuakeWorld, quake2.Hexen2} {
		t.Run(d.Protocol(), func(t *testing.T) {
			for seed := int64(0); seed < 4; seed++ {
				h := NewQuake2(seed, d, Normal)
				for min := 0; min < 90; min += 11 {
					now := bmTestTime.Add(time.Duration(min) * time.Minute)
					m, err := converse(t, d.Protocol(), nil, h, now)
					if err != nil {
						t.Fatalf("seed %d minute %d: %v", seed, min, err)
					}
					in := m.Info
					if in.Name == "" || in.Map == "" || in.MaxPlayers != 16 || in.NumPlayers < 2 || in.NumPlayers != len(in.Players) {
						t.Fatalf("seed %d: info %+v", seed, in)
					}
					for _, p := range in.Players {
						if p.Name == "" || strings.ContainsFunc(p.Name, func(r rune) bool { return r >= 0x7f }) {
							t.Fatalf("player %+v", p)
						}
					}
				}
			}
		})
	}
	m, _ := converse(t, quake2.ProtocolQuakeWorld, nil, NewQuake2(1, quake2.QuakeWorld, Normal), bmTestTime)
	if !strings.Contains(m.Info.Name, "[") {
		t.Errorf("the QuakeWorld name %q lost its gold number's brackets", m.Info.Name)
	}
	m, err := converse(t, quake2.ProtocolQuakeWorld, nil, NewQuake2(1, quake2.QuakeWorld, Truncated), bmTestTime)
	if err == nil {
		t.Errorf("a truncated reply decodes: %+v", m.Info)
	}
}

// TestQuake2Master: the QuakeWorld master lists its servers for the
// codec's master conversation.
func TestQuake2Master(t *testing.T) {
	servers := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:27500"), netip.MustParseAddrPort("127.0.0.2:27501")}
	for _, d := range []quake2.Dialect{quake2.QuakeWorld, quake2.Quake2} {
		m, err := converse(t, d.Protocol(), map[string]string{"master": "true"}, NewQuake2Master(d, servers), bmTestTime)
		if err != nil || m.Kind != codecs.KindMasterList || len(m.Servers) != 2 || m.Servers[1] != "127.0.0.2:27501" {
			t.Errorf("%s: %+v, %v", d.Protocol(), m, err)
		}
	}
}

// TestFiveM: the FiveM server answers the fivem codec's getinfo.
func TestFiveM(t *testing.T) {
	m, err := converse(t, quake3.ProtocolFiveM, nil, NewFiveM(3, false), bmTestTime)
	if err != nil || m.Info.Name == "" || m.Info.MaxPlayers != 48 || m.Info.Map == "" {
		t.Fatalf("%+v, %v", m, err)
	}
	if c, _ := m.Fields.Get("vars"); c == nil {
		t.Error("no vars")
	}
}
