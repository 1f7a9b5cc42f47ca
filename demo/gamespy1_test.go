package demo

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
)

// gs1Converse runs one conversation of the gamespy1 codec against h, in
// memory, and returns its result and whether it completed.
func gs1Converse(t *testing.T, h Handler, opts map[string]string, now time.Time) (*codecs.Message, bool, error) {
	t.Helper()
	c, err := codecs.Lookup(gamespy1.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	for _, d := range q.Start() {
		for _, r := range h.Respond(d, bmTestFrom, now) {
			_, done, _ = q.Feed(r)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	return m, done, err
}

func TestGameSpy1Flavors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flavor  GameSpy1Flavor
		version string
		extra   int      // numplayers over the players listed
		warn    []string // with players on
		parts   int      // datagrams of a status reply
	}{
		{"ut99", GameSpy1UT99, "436", 0, nil, 3},
		{"bf1942", GameSpy1BF1942, "v1.61", 1, []string{gamespy1.WarnPlayerCount}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(0); seed < 6; seed++ {
				h := NewGameSpy1(seed, tc.flavor, Normal)
				for min := 0; min < 90; min += 7 {
					now := bmTestTime.Add(time.Duration(min) * time.Minute)
					out := h.Respond([]byte(`\status\`), bmTestFrom, now)
					first, err := gamespy1.DecodeResponse(out[0], nil)
					if err != nil || !first.Final || len(out) != tc.parts {
						t.Fatalf("seed %d: %d datagrams, the first final %v: %v", seed, len(out), first.Final, err)
					}
					m, done, err := gs1Converse(t, h, nil, now)
					if err != nil || !done {
						t.Fatalf("seed %d minute %d: done %v, %v", seed, min, done, err)
					}
					in := m.Info
					if in.Name == "" || in.Map == "" || in.MaxPlayers != gs1Max || in.Version != tc.version || in.NumPlayers != len(in.Players)+tc.extra {
						t.Fatalf("seed %d: info %+v", seed, in)
					}
					var want []string
					if len(in.Players) > 0 {
						want = tc.warn
					}
					if !slices.Equal(m.Warnings, want) {
						t.Fatalf("seed %d: warnings %q, want %q", seed, m.Warnings, want)
					}
					teams := tc.flavor == GameSpy1BF1942 || h.(*gs1Server).ctf
					for _, p := range in.Players {
						if p.Name == "" || p.Ping <= 0 || p.HasTeam != teams {
							t.Fatalf("seed %d: player %+v", seed, p)
						}
					}
					info, done, err := gs1Converse(t, h, map[string]string{"query": "info", "xserverquery": "true"}, now)
					if err != nil || !done || info.Info.NumPlayers != in.NumPlayers || info.Info.Name != in.Name {
						t.Fatalf("info says %+v, status %d players: %v", info.Info, in.NumPlayers, err)
					}
				}
			}
		})
	}
}

func TestGameSpy1Words(t *testing.T) {
	h := NewGameSpy1(3, GameSpy1UT99, Normal)
	m, done, err := gs1Converse(t, h, map[string]string{"query": "rules", "echo": "4242"}, bmTestTime)
	if err != nil || !done {
		t.Fatal(done, err)
	}
	if v, _ := m.Info.Rule("echo"); v != "4242" {
		t.Errorf("echo %q", v)
	}
	if _, ok := m.Info.Rule("fraglimit"); !ok || m.Info.Has&codecs.HasName != 0 {
		t.Errorf("a rules reply: %+v", m.Info)
	}
	m, done, err = gs1Converse(t, h, map[string]string{"query": "all"}, bmTestTime)
	all, _, _ := gs1Converse(t, h, nil, bmTestTime)
	if err != nil || !done || m.Info.Name != all.Info.Name || len(m.Info.Players) != len(all.Info.Players) {
		t.Errorf("all four words differ from status: %+v, %v", m.Info, err)
	}
	for _, q := range []string{`\secure\abcdef\`, `\rcon\x\`, `status`, ``} {
		if out := h.Respond([]byte(q), bmTestFrom, bmTestTime); out != nil {
			t.Errorf("%q answered %q", q, out)
		}
	}
}

func TestGameSpy1Behaviors(t *testing.T) {
	q := []byte(`\status\`)
	if out := NewGameSpy1(1, GameSpy1UT99, Silent).Respond(q, bmTestFrom, bmTestTime); out != nil {
		t.Errorf("a silent server answered %q", out)
	}
	// UT99: the middle datagram never comes.
	m, done, err := gs1Converse(t, NewGameSpy1(1, GameSpy1UT99, Truncated), nil, bmTestTime)
	if done || err != nil || !slices.Equal(m.Warnings, []string{gamespy1.WarnMissing}) {
		t.Errorf("a missing middle datagram: done %v, warnings %q, %v", done, m.Warnings, err)
	}
	// Battlefield 1942: the server keys come cut short, without a queryid.
	m, done, err = gs1Converse(t, NewGameSpy1(1, GameSpy1BF1942, Truncated), nil, bmTestTime)
	if done || err != nil || !slices.Contains(m.Warnings, gamespy1.WarnMissing) {
		t.Errorf("a cut datagram: done %v, warnings %q, %v", done, m.Warnings, err)
	}
	h := NewGameSpy1(1, GameSpy1BF1942, RateLimit)
	if len(h.Respond(q, bmTestFrom, bmTestTime)) == 0 || h.Respond(q, bmTestFrom, bmTestTime.Add(time.Second)) != nil ||
		len(h.Respond(q, bmTestFrom, bmTestTime.Add(11*time.Second))) == 0 {
		t.Error("the rate limit does not answer once per 10 s")
	}
}

// TestGameSpy1QueryNumbers: UT99 numbers its queries 1 to 100 and starts
// again; each reply's datagrams share one number.
func TestGameSpy1QueryNumbers(t *testing.T) {
	h := NewGameSpy1(2, GameSpy1UT99, Normal)
	for i := 1; i <= 205; i++ {
		out := h.Respond([]byte(`\info\`), bmTestFrom, bmTestTime)
		r, err := gamespy1.DecodeResponse(out[0], nil)
		id, n, ok := r.Packet()
		want := (i-1)%100 + 1
		if err != nil || !ok || n != 1 || id != strconv.Itoa(want) {
			t.Fatalf("query %d: queryid %q, %v", i, r.QueryID, err)
		}
	}
}
