package demo

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs/ase"
)

// gdASE is what tools/gamedig/query.mjs prints for an ASE server.
type gdASE struct {
	Name       string `json:"name"`
	Map        string `json:"map"`
	Password   bool   `json:"password"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers int    `json:"maxplayers"`
	Version    string `json:"version"`
	Players    []struct {
		Name string         `json:"name"`
		Raw  map[string]any `json:"raw"`
	} `json:"players"`
	Raw map[string]any `json:"raw"`
}

// TestASEGameDigInterop queries emulated ASE servers on loopback with
// GameDig (type protocol-ase), a client written independently of
// querylens: the server's strings, counts and rules, and each player's
// fields, must be what our decoder reads from the same reply, absent
// fields included (GameDig leaves out of a player's raw object the fields
// whose flag bit is off, as our fields object does). GameDig parses
// score, ping and time with parseInt, so an empty one (the MTA-like
// server's time) is NaN, null in its JSON. A reply changed in one player's fields (a field
// removed with its bit, or a score) must make the comparison fail.
func TestASEGameDigInterop(t *testing.T) {
	node := needGameDig(t)
	for _, tc := range []struct {
		name string
		h    Handler
	}{
		{"mta", NewASE(3, ASEMTA, Normal)},
		{"farcry", NewASE(4, ASEFarCry, Normal)},
		{"flags", NewASE(5, ASEFlags, Normal)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conversation := recordingServer(t, tc.h)
			host, port := hostPort(t, addr)
			out := runGameDig(t, node, host, port, "protocol-ase")
			var gd gdASE
			if err := json.Unmarshal(out, &gd); err != nil {
				t.Fatalf("gamedig printed %q: %v", out, err)
			}
			_, replies := conversation()
			if len(replies) != 1 {
				t.Fatalf("%d replies, want 1", len(replies))
			}
			r, err := ase.DecodeResponse(replies[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Players) == 0 {
				t.Fatal("an empty server proves little")
			}
			if diffs := aseGameDigDiffs(gd, r); len(diffs) > 0 {
				t.Errorf("GameDig and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
			}
			// Each change to one player must be seen: a field dropped
			// with its flag bit (absent, where GameDig read one), and a
			// score.
			for i, mutate := range []func(p *ase.Player){
				func(p *ase.Player) { p.Flags &^= ase.FlagPing; p.Ping = "" },
				func(p *ase.Player) { p.Flags |= ase.FlagScore; p.Score = "9999" },
			} {
				m := r
				m.Players = append([]ase.Player(nil), r.Players...)
				// The first player with a ping.
				at := slices.IndexFunc(m.Players, func(p ase.Player) bool { return p.Flags&ase.FlagPing != 0 })
				mutate(&m.Players[at])
				b, err := ase.AppendResponse(nil, m)
				if err != nil {
					t.Fatal(err)
				}
				mr, err := ase.DecodeResponse(b, nil)
				if err != nil || len(aseGameDigDiffs(gd, mr)) == 0 {
					t.Errorf("mutation %d goes unnoticed (%v)", i, err)
				}
			}
		})
	}
}

// aseGameDigDiffs lists where GameDig's view differs from our decode.
func aseGameDigDiffs(gd gdASE, r ase.Response) []string {
	var diffs []string
	num, _ := strconv.Atoi(r.NumPlayers)
	max, _ := strconv.Atoi(r.MaxPlayers)
	if gd.Name != r.Name || gd.Map != r.Map || gd.Version != r.Version || gd.Password != (r.Password == "1") ||
		gd.NumPlayers != num || gd.MaxPlayers != max {
		diffs = append(diffs, "server: GameDig "+gd.Name+" "+gd.Map+" "+gd.Version+" "+strconv.Itoa(gd.NumPlayers)+"/"+strconv.Itoa(gd.MaxPlayers)+
			"; ours "+r.Name+" "+r.Map+" "+r.Version+" "+r.NumPlayers+"/"+r.MaxPlayers)
	}
	want := map[string]any{"gamename": r.Game, "gametype": r.GameType}
	for _, x := range r.Rules {
		want[x.Key] = x.Value
	}
	if !reflect.DeepEqual(gd.Raw, want) {
		diffs = append(diffs, "raw: GameDig "+jsonText(gd.Raw)+", ours "+jsonText(want))
	}
	if len(gd.Players) != len(r.Players) {
		return append(diffs, "GameDig lists "+strconv.Itoa(len(gd.Players))+" players, ours "+strconv.Itoa(len(r.Players)))
	}
	for i, p := range r.Players {
		raw := map[string]any{}
		for _, f := range []struct {
			bit    ase.Flags
			key, v string
			number bool
		}{
			{ase.FlagTeam, "team", p.Team, false}, {ase.FlagSkin, "skin", p.Skin, false},
			{ase.FlagScore, "score", p.Score, true}, {ase.FlagPing, "ping", p.Ping, true}, {ase.FlagTime, "time", p.Time, true},
		} {
			if !p.Has(f.bit) {
				continue // absent: no key
			}
			raw[f.key] = f.v
			if f.number {
				raw[f.key] = nil // parseInt of something not a number: NaN, null in JSON
				if n, err := strconv.Atoi(f.v); err == nil {
					raw[f.key] = float64(n)
				}
			}
		}
		g := gd.Players[i]
		if g.Name != p.Name || !reflect.DeepEqual(g.Raw, raw) {
			diffs = append(diffs, "player "+strconv.Itoa(i)+": GameDig "+strconv.Quote(g.Name)+" "+jsonText(g.Raw)+
				", ours "+strconv.Quote(p.Name)+" "+jsonText(raw))
		}
	}
	return diffs
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
