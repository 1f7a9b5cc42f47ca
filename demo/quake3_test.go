package demo

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake3"
)

// q3Converse runs one conversation of the quake3 codec against h, in
// memory, and returns its result.
func q3Converse(t *testing.T, h Handler, opts map[string]string, now time.Time) (*codecs.Message, error) {
	t.Helper()
	c, err := codecs.Lookup(quake3.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range q.Start() {
		for _, r := range h.Respond(d, bmTestFrom, now) {
			if _, _, err := q.Feed(r); err != nil {
				t.Fatalf("Feed: %v", err)
			}
		}
	}
	return q.Result(codecs.DecodeOptions{Query: q.Start()[0]})
}

func TestQuake3Flavors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flavor  Quake3Flavor
		version string
		teams   bool
	}{
		{"ioq3", Quake3IOQ3, "ioq3 1.36 linux-x86_64", false},
		{"xonotic", Quake3Xonotic, "20000", true},
		{"cod4", Quake3CoD4, "1.7", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(0); seed < 6; seed++ {
				h := NewQuake3(seed, tc.flavor, Normal)
				for min := 0; min < 90; min += 7 {
					now := bmTestTime.Add(time.Duration(min) * time.Minute)
					m, err := q3Converse(t, h, map[string]string{"challenge": "c" + string(rune('a'+min%26))}, now)
					if err != nil || len(m.Warnings) != 0 {
						t.Fatalf("seed %d minute %d: %v, warnings %v", seed, min, err, m.Warnings)
					}
					in := m.Info
					if in.Name == "" || in.Map == "" || in.MaxPlayers != 12 || in.Version != tc.version || in.NumPlayers != len(in.Players) {
						t.Fatalf("seed %d: info %+v", seed, in)
					}
					for _, p := range in.Players {
						if p.HasTeam != tc.teams || p.Name == "" {
							t.Fatalf("seed %d: player %+v", seed, p)
						}
					}
					info, err := q3Converse(t, h, map[string]string{"query": "info"}, now)
					if err != nil || info.Info.NumPlayers != len(in.Players) {
						t.Fatalf("getinfo says %+v, getstatus %d players: %v", info.Info, len(in.Players), err)
					}
				}
			}
		})
	}
}

func TestQuake3Behaviors(t *testing.T) {
	if out := NewQuake3(1, Quake3IOQ3, Silent).Respond([]byte("\xff\xff\xff\xffgetstatus"), bmTestFrom, bmTestTime); out != nil {
		t.Errorf("a silent server answered %q", out)
	}
	if _, err := q3Converse(t, NewQuake3(1, Quake3IOQ3, Truncated), nil, bmTestTime); err == nil {
		t.Error("a truncated reply decodes")
	}
	h := NewQuake3(1, Quake3IOQ3, RateLimit)
	q := []byte("\xff\xff\xff\xffgetstatus")
	if len(h.Respond(q, bmTestFrom, bmTestTime)) != 1 || h.Respond(q, bmTestFrom, bmTestTime.Add(time.Second)) != nil ||
		len(h.Respond(q, bmTestFrom, bmTestTime.Add(11*time.Second))) != 1 {
		t.Error("the rate limit does not answer once per 10 s")
	}
	if NewQuake3(1, Quake3IOQ3, Normal).Respond([]byte("\xff\xff\xff\xffrcon x status"), bmTestFrom, bmTestTime) != nil {
		t.Error("answered what is not a query")
	}
}

func TestQuake3Master(t *testing.T) {
	var servers []netip.AddrPort
	var want4, wantAll []string
	for i := range 10 {
		ap := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + i)}), uint16(27960+i))
		if i%4 == 3 {
			ap = netip.AddrPortFrom(netip.IPv6Loopback(), uint16(27960+i))
		} else {
			want4 = append(want4, ap.String())
		}
		servers = append(servers, ap)
		wantAll = append(wantAll, ap.String())
	}
	m := NewQuake3Master("Xonotic", servers, 3, false)
	out := m.Respond([]byte("\xff\xff\xff\xffgetserversExt Xonotic 3"), bmTestFrom, bmTestTime)
	if len(out) != 4 {
		t.Fatalf("%d datagrams for 10 entries at 3 each", len(out))
	}
	got, err := q3Converse(t, m, map[string]string{"master": "true", "ext": "true", "game": "Xonotic", "protocol": "3"}, bmTestTime)
	if err != nil || !slices.Equal(got.Servers, wantAll) || len(got.Warnings) != 0 {
		t.Fatalf("ext list %v %v, %v", got.Servers, got.Warnings, err)
	}
	got, err = q3Converse(t, m, map[string]string{"master": "true", "protocol": "3"}, bmTestTime)
	if err != nil || !slices.Equal(got.Servers, want4) {
		t.Fatalf("getservers list %v, %v", got.Servers, err)
	}
	got, err = q3Converse(t, m, map[string]string{"master": "true", "ext": "true", "game": "Nexuiz", "protocol": "3"}, bmTestTime)
	if err != nil || len(got.Servers) != 0 {
		t.Fatalf("another game's list %v, %v", got.Servers, err)
	}
	old := NewQuake3Master("", servers[:2], 1, true)
	got, err = q3Converse(t, old, map[string]string{"master": "true"}, bmTestTime)
	if err != nil || len(got.Servers) != 2 || !slices.Contains(got.Warnings, quake3.WarnNoEnd) {
		t.Fatalf("old master %v %v, %v", got.Servers, got.Warnings, err)
	}
}
