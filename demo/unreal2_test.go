package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/unreal2"
)

// u2Converse runs one conversation of the unreal2 codec against h, in
// memory, and returns its result and whether it completed.
func u2Converse(t *testing.T, h Handler, opts map[string]string) (*codecs.Message, bool, error) {
	t.Helper()
	q, err := (&unreal2.Codec{}).NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	for _, d := range q.Start() {
		for _, r := range h.Respond(d, bmTestFrom, bmTestTime) {
			_, done, _ = q.Feed(r)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	return m, done, err
}

func TestUnreal2Flavors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flavor  Unreal2Flavor
		dialect string
		teams   int
	}{
		{"ut2004", Unreal2UT2004, "ut2004", 2},
		{"killingfloor", Unreal2KillingFloor, "killingfloor", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(0); seed < 4; seed++ {
				h := NewUnreal2(seed, tc.flavor, Normal)
				if out := h.Respond([]byte{0x79, 0, 0, 0, 2}, bmTestFrom, bmTestTime); len(out) < 2 {
					t.Errorf("seed %d: the players in %d datagram(s), want several", seed, len(out))
				}
				m, done, err := u2Converse(t, h, nil)
				if err != nil || !done {
					t.Fatalf("seed %d: done %v, %v", seed, done, err)
				}
				info, _ := m.Fields.Get("info")
				if d, _ := info.(codecs.Object).Get("dialect"); d != tc.dialect {
					t.Errorf("seed %d: dialect %v", seed, d)
				}
				in := m.Info
				if !strings.HasPrefix(in.Name, "querylens ") || len(in.Teams) != tc.teams || in.Has&codecs.HasPassword == 0 || in.Version == "" {
					t.Errorf("seed %d: %+v", seed, in)
				}
				humans := 0
				for _, p := range in.Players {
					if !p.Bot {
						humans++
					}
				}
				if humans != in.NumPlayers {
					t.Errorf("seed %d: %d humans listed, %d counted", seed, humans, in.NumPlayers)
				}
				// A row asks without the players.
				if _, done, err := u2Converse(t, h, map[string]string{"players": "false"}); err != nil || !done {
					t.Errorf("seed %d: the row's query: done %v, %v", seed, done, err)
				}
			}
		})
	}
}

// TestUnreal2Hostile: the truncating server's info and the lying name
// length fail with the field and offset at fault.
func TestUnreal2Hostile(t *testing.T) {
	for _, tc := range []struct {
		b     Behavior
		field string
	}{
		{Truncated, "info."},
		{BadLength, "players[0].name"},
	} {
		t.Run(tc.b.String(), func(t *testing.T) {
			_, _, err := u2Converse(t, NewUnreal2(5, Unreal2UT2004, tc.b), nil)
			var e *codecs.Error
			if !errors.As(err, &e) || !errors.Is(err, codecs.ErrShort) || !strings.HasPrefix(e.Field, tc.field) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// gdUnreal2 is what tools/gamedig/query.mjs prints for an Unreal 2 server.
type gdUnreal2 struct {
	Name       string     `json:"name"`
	Map        string     `json:"map"`
	NumPlayers int        `json:"numplayers"`
	MaxPlayers int        `json:"maxplayers"`
	Players    []gdPlayer `json:"players"`
	Bots       []gdPlayer `json:"bots"`
	Raw        struct {
		Rules      map[string]string `json:"rules"`
		Mutators   []string          `json:"mutators"`
		Scoreboard map[string]int    `json:"scoreboard"`
		WaveCurr   *int              `json:"wavecurrent"`
		WaveTotal  *int              `json:"wavetotal"`
		GameType   string            `json:"gametype"`
	} `json:"raw"`
}

// TestUnreal2GameDigInterop queries the emulated UT2004 and Killing Floor
// servers with GameDig's protocol-unreal2 (which waits out its socket
// timeout after each of its three queries: 1.5 s here): name, map,
// counts, game type, every rule, the mutators, the team rows, the waves
// and every player's name, score and ping must be our reading of the same
// replies. GameDig's own ways, compared accordingly: it joins repeated
// rules with a comma and keeps the mutators apart; it files ping-0
// players as bots; its password is GamePassword != "True", the opposite
// of what the rule says (docs/protocols/unreal2.md), so it is not
// compared. A player renamed in a reply must make the comparison fail.
func TestUnreal2GameDigInterop(t *testing.T) {
	node := needGameDig(t)
	// GameDig waits out its socket timeout after each of its three
	// queries: the servers are asked side by side, beside the other tests.
	t.Parallel()
	ask := func(t *testing.T, addr string) gdUnreal2 {
		host, port := hostPort(t, addr)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "query.mjs", host, port, "protocol-unreal2")
		cmd.Dir = gameDigDir
		cmd.Env = append(os.Environ(), "GAMEDIG_SOCKET_TIMEOUT=1500")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gamedig: %v\n%s", err, stderr.Bytes())
		}
		var gd gdUnreal2
		if err := json.Unmarshal(out, &gd); err != nil {
			t.Fatalf("gamedig printed %q: %v", out, err)
		}
		return gd
	}
	for i, tc := range []struct {
		name string
		h    func() Handler
	}{
		{"ut2004", func() Handler { return NewUnreal2(3, Unreal2UT2004, Normal) }},
		{"killingfloor", func() Handler { return NewUnreal2(4, Unreal2KillingFloor, Normal) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, conversation := recordingServer(t, tc.h())
			gd := ask(t, addr)
			_, replies := conversation()
			m, err := (&unreal2.Codec{}).Decode(replies, codecs.DecodeOptions{Query: []byte{0x79, 0, 0, 0, 0}})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Info.Players) < 2 {
				t.Fatalf("an empty server proves little: %+v", m.Info)
			}
			if diffs := compareUnreal2GameDig(gd, m); len(diffs) > 0 {
				t.Errorf("GameDig and querylens differ:\n%s", strings.Join(diffs, "\n"))
			}
			if i > 0 {
				return
			}
			n := m.Info.Players[0].Name
			addr, conversation = recordingServer(t, tc.h())
			p, changed := mutatingProxy(t, addr, replaceOnce(n+"\x00", renamed(n)+"\x00"))
			gd = ask(t, p)
			if changed() == 0 {
				t.Fatal("the proxy changed no reply")
			}
			_, replies = conversation()
			m, _ = (&unreal2.Codec{}).Decode(replies, codecs.DecodeOptions{Query: []byte{0x79, 0, 0, 0, 0}})
			if len(compareUnreal2GameDig(gd, m)) == 0 {
				t.Error("GameDig read a changed reply, and the comparison saw no difference")
			}
		})
	}
}

func compareUnreal2GameDig(gd gdUnreal2, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	if gd.Name != in.Name || gd.Map != in.Map || gd.Raw.GameType != in.GameType || gd.NumPlayers != in.NumPlayers || gd.MaxPlayers != in.MaxPlayers {
		diffs = append(diffs, "server: GameDig "+gd.Name+" "+gd.Map+" "+gd.Raw.GameType+" "+strconv.Itoa(gd.NumPlayers)+"/"+strconv.Itoa(gd.MaxPlayers)+
			"; ours "+in.Name+" "+in.Map+" "+in.GameType+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	rules := map[string]string{}
	var mutators []string
	for _, r := range in.Rules {
		switch {
		case r[0] == "Mutator" || r[0] == "mutator":
			mutators = append(mutators, r[1])
		case r[0] == "" && r[1] == "":
		default:
			if v, ok := rules[r[0]]; ok {
				rules[r[0]] = v + "," + r[1]
			} else {
				rules[r[0]] = r[1]
			}
		}
	}
	if !mapsEqual(rules, gd.Raw.Rules) || !slices.Equal(mutators, gd.Raw.Mutators) {
		diffs = append(diffs, "rules differ")
	}
	teams := map[string]int{}
	for _, tm := range in.Teams {
		teams[tm.Name] = tm.Score
	}
	if len(teams) > 0 || len(gd.Raw.Scoreboard) > 0 {
		if !mapsEqual(teams, gd.Raw.Scoreboard) {
			diffs = append(diffs, "team rows differ")
		}
	}
	if f, _ := m.Fields.Get("info"); f != nil {
		o := f.(codecs.Object)
		if w, ok := o.Get("wave_current"); ok {
			wt, _ := o.Get("wave_total")
			if gd.Raw.WaveCurr == nil || gd.Raw.WaveTotal == nil || *gd.Raw.WaveCurr != w.(int) || *gd.Raw.WaveTotal != wt.(int) {
				diffs = append(diffs, "waves differ")
			}
		} else if gd.Raw.WaveCurr != nil {
			diffs = append(diffs, "GameDig reads waves")
		}
	}
	var ours, theirs []playerRow
	for _, p := range in.Players {
		ours = append(ours, playerRow{name: p.Name, score: p.Score, ping: p.Ping})
	}
	for _, p := range append(append([]gdPlayer(nil), gd.Players...), gd.Bots...) {
		theirs = append(theirs, playerRow{name: p.Name, score: p.num("score"), ping: p.num("ping")})
	}
	return append(diffs, comparePlayers("GameDig", ours, theirs)...)
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
