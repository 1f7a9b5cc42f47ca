package games

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
)

// root is the repository, from this package's directory.
var root = filepath.Join("..", "..")

// inFlight are the protocols being added beside this table (issue 41),
// each by its own package: a game of theirs counts as served once the
// package is registered. The goal is 295 of GameDig 5.3.3's 358 games.
var inFlight = []string{"ase", "unreal2", "doom3", "quake2", "quakeworld", "hexen2", "fivem", "samp", "vcmp", "mumble", "minecraft", "bedrock"}

// TestTable checks the committed table by itself: ids unique and sorted,
// old ids naming one game, every game with a protocol or why it has none,
// ports that are ports, and filters its master takes.
func TestTable(t *testing.T) {
	if len(table) != 358 {
		t.Errorf("%d games, want GameDig %s's 358", len(table), GameDigVersion)
	}
	ids := map[string]string{}
	filters := map[string]string{} // master, its address and filter: the game listed
	for i, g := range table {
		if g.Filter != "" {
			k := g.Master + " " + g.MasterAddr + " " + g.Filter
			if o, dup := filters[k]; dup {
				t.Errorf("%s and %s are both listed by %s", o, g.ID, k)
			}
			filters[k] = g.ID
		}
		if i > 0 && table[i-1].ID >= g.ID {
			t.Errorf("%q after %q: want the table sorted by id", g.ID, table[i-1].ID)
		}
		for _, id := range append([]string{g.ID}, g.OldIDs...) {
			if id != strings.ToLower(id) || id == "" {
				t.Errorf("%s: id %q, want lower case", g.ID, id)
			}
			if o, dup := ids[id]; dup {
				t.Errorf("id %q is both %s's and %s's", id, o, g.ID)
			}
			ids[id] = g.ID
		}
		if g.Name == "" || g.GameDig == "" {
			t.Errorf("%s: want a name and GameDig's protocol", g.ID)
		}
		if g.Protocol == "" && g.Why == "" {
			t.Errorf("%s: no protocol and no reason", g.ID)
		}
		if w := g.Why; w != "" && !strings.HasPrefix(w, "HTTP only: ") && !strings.HasPrefix(w, "a TCP protocol not done yet: ") &&
			!strings.HasPrefix(w, "a UDP protocol not done yet: ") {
			t.Errorf("%s: why %q, want one of the three reasons", g.ID, w)
		}
		for _, p := range []int{g.Port, g.QueryPort, g.DefaultQueryPort()} {
			if p < 0 || p > 65535 {
				t.Errorf("%s: port %d", g.ID, p)
			}
		}
		if (g.Master == "") != (g.Filter == "") {
			t.Errorf("%s: master %q with filter %q", g.ID, g.Master, g.Filter)
		}
		if g.Master != "" {
			d, err := codecs.LookupDescription(g.Master)
			if err != nil {
				continue // a master of a protocol not built in
			}
			if d.Master == nil {
				t.Errorf("%s: %s has no master", g.ID, g.Master)
				continue
			}
			if d.Master.Filter != nil {
				if _, err := d.Master.Filter(g.Filter); err != nil {
					t.Errorf("%s: %s's master refuses filter %q: %v", g.ID, g.Master, g.Filter, err)
				}
			}
			if d.Master.NewList != nil {
				if _, err := d.Master.NewList(g.Filter); err != nil {
					t.Errorf("%s: %s's master list refuses filter %q: %v", g.ID, g.Master, g.Filter, err)
				}
			}
		}
	}
	for _, tc := range []struct{ id, want string }{
		{"rust", "rust"}, {"RUST", "rust"}, {"tf2", "teamfortress2"}, {"teamfortress2", "teamfortress2"},
		{"quake3", "q3a"}, {"samp", "gtasam"}, {"fivem", "gta5f"}, {"7d2d", "sdtd"}, {"nope", ""},
	} {
		g, ok := Lookup(tc.id)
		if ok != (tc.want != "") || g.ID != tc.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.id, g.ID, ok, tc.want)
		}
	}
}

// TestServed checks what this binary serves: every served game's options
// make a query of its protocol, the others say why not, and the counts
// (now, and once the protocols in flight are built in) reach the goal.
func TestServed(t *testing.T) {
	served, all := Counts()
	would := 0
	for _, g := range table {
		if g.Served() {
			c, _ := codecs.Lookup(g.Protocol)
			if _, err := c.NewQuery(g.Options); err != nil {
				t.Errorf("%s: %s refuses the game's options %v: %v", g.ID, g.Protocol, g.Options, err)
			}
			if g.WhyNot() != "" {
				t.Errorf("%s: served, and WhyNot says %q", g.ID, g.WhyNot())
			}
		} else if g.WhyNot() == "" {
			t.Errorf("%s: not served and no reason", g.ID)
		}
		if g.Served() || slices.Contains(inFlight, g.Protocol) {
			would++
		}
		if g.Protocol != "" && !g.Served() && !slices.Contains(inFlight, g.Protocol) {
			t.Errorf("%s: protocol %q, neither registered nor in flight", g.ID, g.Protocol)
		}
	}
	t.Logf("served: %d of %d; with every protocol in flight: %d", served, all, would)
	// Today's protocols (a2s, GameSpy 1 to 3, Quake III) serve 264.
	if served < 264 {
		t.Errorf("%d games served, want at least 264", served)
	}
	if would < 295 {
		t.Errorf("%d games would be served, want at least 295", would)
	}
	for _, tc := range []struct {
		id   string
		port int
		want int
	}{
		{"rust", 0, 28015}, {"valheim", 0, 2457}, {"valheim", 2500, 2501}, {"ase", 0, 27015}, {"ase", 7777, 27015},
		{"ase", 7800, 7800}, {"unrealtournament3", 7777, 6500}, {"vrising", 27015, 27016}, {"nla", 0, 27015},
	} {
		g, _ := Lookup(tc.id)
		got := g.DefaultQueryPort()
		if tc.port != 0 {
			got = g.QueryPortFor(tc.port)
		}
		if got != tc.want {
			t.Errorf("%s, game port %d: query port %d, want %d", tc.id, tc.port, got, tc.want)
		}
	}
}

// needGameDig returns node's path, or skips where node or GameDig is
// missing (fails in CI, which installs both).
func needGameDig(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "tools", "gamedig", "node_modules", "gamedig", "lib", "games.js"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("GameDig is not installed (run npm ci --prefix tools/gamedig): %v", err)
		}
		t.Skipf("GameDig is not installed (npm ci --prefix tools/gamedig): %v", err)
	}
	return node
}

// TestAgainstGameDig reads GameDig's games list itself and checks every
// game is in the table as GameDig gives it: name, ports, protocol, old id.
func TestAgainstGameDig(t *testing.T) {
	node := needGameDig(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := `import(process.argv[1]).then(m => process.stdout.write(JSON.stringify(m.games)))`
	lib, err := filepath.Abs(filepath.Join(root, "tools", "gamedig", "node_modules", "gamedig", "lib", "games.js"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, node, "--input-type=module", "-e", script, "file://"+filepath.ToSlash(lib)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var gd map[string]struct {
		Name        string `json:"name"`
		ReleaseYear int    `json:"release_year"`
		Options     struct {
			Port            int             `json:"port"`
			PortQuery       int             `json:"port_query"`
			PortQueryOffset json.RawMessage `json:"port_query_offset"`
			Protocol        string          `json:"protocol"`
		} `json:"options"`
		Extra struct {
			OldID string `json:"old_id"`
		} `json:"extra"`
	}
	if err := json.Unmarshal(out, &gd); err != nil {
		t.Fatal(err)
	}
	if len(gd) != len(table) {
		t.Errorf("GameDig has %d games, the table %d", len(gd), len(table))
	}
	for id, want := range gd {
		g, ok := Lookup(id)
		if !ok || g.ID != id {
			t.Errorf("GameDig's %s (%s) is not in the table", id, want.Name)
			continue
		}
		var offs []int
		if o := want.Options.PortQueryOffset; len(o) > 0 {
			if o[0] == '[' {
				json.Unmarshal(o, &offs)
			} else {
				var n int
				json.Unmarshal(o, &n)
				offs = []int{n}
			}
		}
		var old []string
		if want.Extra.OldID != "" {
			old = []string{want.Extra.OldID}
		}
		if g.Name != want.Name || g.Year != want.ReleaseYear || g.Port != want.Options.Port || g.QueryPort != want.Options.PortQuery ||
			!slices.Equal(g.Offsets, offs) || g.GameDig != want.Options.Protocol || !slices.Equal(g.OldIDs, old) {
			t.Errorf("%s: table %+v, GameDig %+v", id, g, want)
		}
	}
}

// TestGenerated regenerates the table and its page from GameDig's list
// and compares them with the committed ones.
func TestGenerated(t *testing.T) {
	node := needGameDig(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(root, "scripts", "gen-games.mjs"), "--out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-games.mjs: %v\n%s", err, out)
	}
	for _, f := range []string{"server/games/gamedig.go", "docs/games.md"} {
		got, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go tool task gen:games and commit", f)
		}
	}
}
