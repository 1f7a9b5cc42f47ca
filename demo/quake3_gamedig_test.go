package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake3"
)

// gdQuake3 is what tools/gamedig/query.mjs prints for a Quake III server.
type gdQuake3 struct {
	Name       string `json:"name"`
	Map        string `json:"map"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers any    `json:"maxplayers"` // a number, or the rule's text
	Password   any    `json:"password"`   // a bool, or g_needpass's text ("0" or "1")
	Players    []struct {
		Name string `json:"name"`
		Raw  struct {
			Frags int `json:"frags"`
			Ping  int `json:"ping"`
		} `json:"raw"`
	} `json:"players"`
	Bots []struct {
		Name string `json:"name"`
		Raw  struct {
			Frags int `json:"frags"`
			Ping  int `json:"ping"`
		} `json:"raw"`
	} `json:"bots"`
	Raw map[string]any `json:"raw"`
}

// TestQuake3GameDigInterop queries emulated Quake III servers on loopback
// with GameDig (type protocol-quake3), a client written independently of
// querylens: name, map, password, players and rules must be what our
// decoder reads from the same reply, within what GameDig reads its own
// way: it counts ping-0 players as bots (docs/protocols/quake3.md), so its
// players and bots together are compared with ours (its player count
// holds both); it passes sv_maxclients and g_needpass on as text,
// and does not read Call of Duty's pswrd.
func TestQuake3GameDigInterop(t *testing.T) {
	node := needGameDig(t)
	for _, tc := range []struct {
		name string
		h    Handler
	}{
		{"ioq3", NewQuake3(3, Quake3IOQ3, Normal)},
		{"cod4", NewQuake3(6, Quake3CoD4, Normal)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			addr, conversation := recordingServer(t, tc.h)
			_, port, _ := strings.Cut(addr, ":")
			cmd := exec.CommandContext(ctx, node, "query.mjs", "127.0.0.1", port, "protocol-quake3")
			cmd.Dir = gameDigDir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("gamedig: %v\n%s", err, stderr.Bytes())
			}
			var gd gdQuake3
			if err := json.Unmarshal(out, &gd); err != nil {
				t.Fatalf("gamedig printed %q: %v", out, err)
			}
			queries, replies := conversation()
			i := slices.IndexFunc(replies, func(r []byte) bool { return bytes.Contains(r, []byte("statusResponse")) })
			if i < 0 {
				t.Fatalf("GameDig got no statusResponse: %q", queries)
			}
			m, err := (&quake3.Codec{}).Decode([][]byte{replies[i]}, codecs.DecodeOptions{Query: queries[i]})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Info.Players) == 0 {
				t.Fatal("an empty server proves little")
			}
			if diffs := q3GameDigDiffs(gd, m); len(diffs) > 0 {
				t.Errorf("GameDig and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
			}
			mutated := bytes.Replace(replies[i], []byte(`"`+strings.Split(q3RawName(m), `"`)[0]), []byte(`"X`), 1)
			mm, err := (&quake3.Codec{}).Decode([][]byte{mutated}, codecs.DecodeOptions{})
			if err != nil || len(q3GameDigDiffs(gd, mm)) == 0 {
				t.Errorf("a mutated player name goes unnoticed (%v)", err)
			}
		})
	}
}

// q3RawName is the first player's name as sent.
func q3RawName(m *codecs.Message) string {
	ps, _ := m.Fields.Get("players")
	first := ps.([]codecs.Object)[0]
	n, _ := first.Get("name")
	return n.(string)
}

// q3GameDigDiffs lists where GameDig's view differs from our decode.
func q3GameDigDiffs(gd gdQuake3, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	type row struct {
		name        string
		score, ping int
	}
	var ours, theirs []row
	for _, p := range in.Players {
		ours = append(ours, row{p.Name, p.Score, p.Ping})
	}
	for _, p := range append(gd.Players, gd.Bots...) {
		theirs = append(theirs, row{p.Name, p.Raw.Frags, p.Raw.Ping})
	}
	max := -1
	switch v := gd.MaxPlayers.(type) {
	case float64:
		max = int(v)
	case string:
		max, _ = strconv.Atoi(v)
	}
	password := gd.Password == true || gd.Password == "1"
	if gd.Name != in.Name || gd.Map != in.Map || max != in.MaxPlayers || password != in.Password ||
		gd.NumPlayers != in.NumPlayers {
		diffs = append(diffs, "server: GameDig "+gd.Name+" "+gd.Map+" "+strconv.Itoa(gd.NumPlayers)+"/"+strconv.Itoa(max)+
			"; ours "+in.Name+" "+in.Map+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	by := func(a, b row) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(ours, by)
	slices.SortFunc(theirs, by)
	if !slices.Equal(ours, theirs) {
		diffs = append(diffs, "players differ")
	}
	for _, r := range in.Rules {
		v, ok := gd.Raw[r[0]]
		// GameDig strips colour codes from the rules too.
		if s, _ := v.(string); !ok || s != quake3.StripColors(r[1]) {
			diffs = append(diffs, "rule "+r[0]+": ours "+strconv.Quote(r[1])+", GameDig "+strconv.Quote(s))
		}
	}
	return diffs
}
