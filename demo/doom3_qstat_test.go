package demo

import (
	"bytes"
	"encoding/xml"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/doom3"
)

// TestDoom3QstatInterop queries an emulated id Tech 4 server of each game
// on loopback with Debian's qstat (quakestat -dm3s, -q4s, -preys, -etqws
// or -wolfs with -P -R -xml), a client written independently of
// querylens: name, map, player count, maximum, every key and the players
// (name, ping) it reports must be what our decoder reads from the same
// reply, asked with the same game.
func TestDoom3QstatInterop(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		kind string
		g    doom3.Game
		seed int64
	}{
		{"-dm3s", doom3.GameDoom3, 3},
		{"-q4s", doom3.GameQuake4, 4},
		{"-preys", doom3.GamePrey, 5},
		{"-etqws", doom3.GameETQW, 6},
		{"-wolfs", doom3.GameWolf, 7},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			addr, conversation := recordingServer(t, NewDoom3(tc.seed, tc.g, Normal))
			qs, out := runQstatOne(t, qstat, tc.kind, addr, "-P", "-R", "-xml", "-retry", "3", "-timeout", "10")
			var doc struct {
				Players []d3QstatPlayer `xml:"server>players>player"`
			}
			dec := xml.NewDecoder(bytes.NewReader(out))
			dec.CharsetReader = latin1Reader
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			queries, replies := conversation()
			if len(replies) == 0 {
				t.Fatalf("qstat asked %q", queries)
			}
			q, _ := (&doom3.Codec{}).NewQuery(map[string]string{"game": tc.g.String()})
			q.Feed(replies[len(replies)-1])
			m, err := q.Result(codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Info.Players) == 0 {
				t.Fatal("an empty server proves little")
			}
			if tc.g == doom3.GameETQW && !slices.ContainsFunc(m.Info.Players, func(p codecs.Player) bool { return p.Bot }) {
				t.Error("no bot to compare")
			}
			if diffs := d3QstatDiffs(qs, doc.Players, m); len(diffs) > 0 {
				t.Errorf("qstat and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
			}
			// The comparison sees one byte changed: the last player's
			// rate, one more in the reply we decode.
			r, _ := doom3.DecodeGame(replies[len(replies)-1], tc.g)
			r.Players[len(r.Players)-1].Ping++
			mutated, _ := doom3.AppendResponse(nil, r)
			mq, _ := (&doom3.Codec{}).NewQuery(map[string]string{"game": tc.g.String()})
			mq.Feed(mutated)
			mm, err := mq.Result(codecs.DecodeOptions{})
			if err != nil || len(d3QstatDiffs(qs, doc.Players, mm)) == 0 {
				t.Errorf("a mutated ping goes unnoticed (%v)", err)
			}
		})
	}
}

// d3QstatPlayer is a player as qstat prints one of an id Tech 4 server.
type d3QstatPlayer struct {
	Number int     `xml:"number"`
	Name   string  `xml:"name"`
	Ping   int     `xml:"ping"`
	Rate   *int    `xml:"rate"`
	Clan   *string `xml:"clan"`
	Type   string  `xml:"type"`
}

// d3QstatDiffs lists where qstat's view of a server differs from ours,
// within what qstat shows its own way: colour codes ('^' and a
// character) stripped from the server's and the players' names, si_map
// without ETQW's and Wolfenstein's "maps/" and ".entities" (as our map),
// the version as the rule "protocol", the os mask in hex, ETQW's tail as
// rules, a player's bot flag as its type.
func d3QstatDiffs(qs qstatServer, players []d3QstatPlayer, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	if qs.Name != in.Name || qs.Map != in.Map || qs.NumPlayers != in.NumPlayers || qs.MaxPlayers != in.MaxPlayers {
		diffs = append(diffs, "server: qstat "+qs.Name+" "+qs.Map+" "+strconv.Itoa(qs.NumPlayers)+"/"+strconv.Itoa(qs.MaxPlayers)+
			"; ours "+in.Name+" "+in.Map+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	theirs := map[string]string{}
	for _, r := range qs.Rules {
		theirs[r.Name] = r.Value
	}
	want := append([][2]string{}, in.Rules...)
	for i, r := range want {
		if r[0] == "si_map" {
			want[i][1] = in.Map
		}
	}
	want = append(want, [2]string{"protocol", in.Version})
	osMask, _ := m.Fields.Get("os_mask")
	want = append(want, [2]string{"osmask", "0x" + strings.ToUpper(strconv.FormatUint(uint64(osMask.(uint32)), 16))})
	if g, _ := m.Fields.Get("game"); g == "etqw" {
		for _, k := range [...][2]string{{"ranked", "ranked"}, {"timeleft", "time_left"}, {"gamestate", "game_state"},
			{"servertype", "server_type"}, {"interested_clients", "interested"}} {
			v, _ := m.Fields.Get(k[1])
			want = append(want, [2]string{k[0], string(codecs.AppendJSON(nil, v))})
		}
	}
	for _, r := range want {
		if v, ok := theirs[r[0]]; !ok || v != r[1] {
			diffs = append(diffs, "rule "+r[0]+": ours "+strconv.Quote(r[1])+", qstat "+strconv.Quote(v))
		}
	}
	type row struct {
		id         int
		name, clan string
		ping       int
		rate       int
		bot        bool
	}
	var ours, theirPlayers []row
	ps, _ := m.Fields.Get("players")
	for i, p := range ps.([]codecs.Object) {
		id, _ := p.Get("id")
		name, _ := p.Get("name")
		clan, _ := p.Get("clan")
		c, _ := clan.(string)
		rate := -1
		if v, ok := p.Get("rate"); ok {
			rate = int(v.(uint32))
		}
		ours = append(ours, row{int(id.(uint8)), qstatStrip(name.(string)), qstatStrip(c), in.Players[i].Ping, rate, in.Players[i].Bot})
	}
	for _, p := range players {
		c, rate := "", -1
		if p.Clan != nil {
			c = *p.Clan
		}
		if p.Rate != nil {
			rate = *p.Rate
		}
		theirPlayers = append(theirPlayers, row{p.Number, p.Name, c, p.Ping, rate, p.Type == "bot"})
	}
	by := func(a, b row) int { return a.id - b.id }
	slices.SortFunc(ours, by)
	slices.SortFunc(theirPlayers, by)
	if !slices.Equal(ours, theirPlayers) {
		diffs = append(diffs, "players differ")
	}
	return diffs
}
