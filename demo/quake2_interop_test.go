package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake2"
	"github.com/querylens/querylens/codecs/quake3"
)

// gdQuake2 is what tools/gamedig/query.mjs prints for GameDig's quake2,
// quake1 and hexen2 protocols: the counts as GameDig leaves them (the
// rule's text, or a number), each player's fields under raw.
type gdQuake2 struct {
	Name       string         `json:"name"`
	Map        string         `json:"map"`
	NumPlayers any            `json:"numplayers"`
	MaxPlayers any            `json:"maxplayers"`
	Version    string         `json:"version"`
	Players    []gdPlayer     `json:"players"`
	Bots       []gdPlayer     `json:"bots"`
	Raw        map[string]any `json:"raw"`
}

// anyInt reads a count GameDig left as a number or as text (-1: neither).
func anyInt(v any) int {
	switch v := v.(type) {
	case float64:
		return int(v)
	case string:
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return -1
}

// TestQuake2GameDigInterop queries emulated Quake II, QuakeWorld and
// HexenWorld servers with GameDig's protocol-quake2, protocol-quake1 and
// protocol-hexen2: name, map, counts, version, every player's name, score
// and ping and every rule must be what our decoder reads from the same
// reply. Known differences, compared accordingly: GameDig keeps the Quake
// characters as sent, but decodes its "latin1" as Windows-1252 (0x93 is
// “, and the five bytes that code page leaves undefined, 0x90 among
// them, are lost as U+FFFD): its text is compared with ours read the
// same way (win1252), and our row's through quake2.Readable; it
// reads the map from mapname only, which QuakeWorld and HexenWorld call
// map (its raw map is compared); it sorts ping-0 players into bots (its
// players and bots together are compared with ours). Through a proxy
// that renames the first player, the comparison must fail.
func TestQuake2GameDigInterop(t *testing.T) {
	node := needGameDig(t)
	for _, tc := range []struct {
		d      quake2.Dialect
		gdType string
	}{
		{quake2.Quake2, "protocol-quake2"},
		{quake2.QuakeWorld, "protocol-quake1"},
		{quake2.Hexen2, "protocol-hexen2"},
	} {
		t.Run(tc.d.Protocol(), func(t *testing.T) {
			ask := func(addr string) gdQuake2 {
				host, port := hostPort(t, addr)
				out := runGameDig(t, node, host, port, tc.gdType)
				var gd gdQuake2
				if err := json.Unmarshal(out, &gd); err != nil {
					t.Fatalf("gamedig printed %q: %v", out, err)
				}
				return gd
			}
			c := &quake2.Codec{Dialect: tc.d}
			addr, conversation := recordingServer(t, NewQuake2(5, tc.d, Normal))
			gd := ask(addr)
			queries, replies := conversation()
			if len(replies) != 1 {
				t.Fatalf("GameDig asked %q", queries)
			}
			m, err := c.Decode(replies, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Info.Players) < 2 {
				t.Fatal("an empty server proves little")
			}
			if diffs := q2GameDigDiffs(gd, m, tc.d); len(diffs) > 0 {
				t.Errorf("GameDig and querylens differ:\n%s", strings.Join(diffs, "\n"))
			}

			addr, conversation = recordingServer(t, NewQuake2(5, tc.d, Normal))
			raw := q2RawName(m)
			p, changed := mutatingProxy(t, addr, replaceOnce(`"`+raw+`"`, `"`+renamed(raw)+`"`))
			gd = ask(p)
			if changed() == 0 {
				t.Fatal("the proxy changed no reply")
			}
			_, replies = conversation()
			m, err = c.Decode(replies, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(q2GameDigDiffs(gd, m, tc.d)) == 0 {
				t.Error("GameDig read a changed reply, and the comparison saw no difference")
			}
		})
	}
}

// q2RawName is the first player's name as sent.
func q2RawName(m *codecs.Message) string {
	ps, _ := m.Fields.Get("players")
	n, _ := ps.([]codecs.Object)[0].Get("name")
	return n.(string)
}

func q2GameDigDiffs(gd gdQuake2, m *codecs.Message, d quake2.Dialect) []string {
	var diffs []string
	in := m.Info
	gdMap := gd.Map
	if d != quake2.Quake2 {
		gdMap, _ = gd.Raw["map"].(string)
	}
	raw, _ := in.Rule("hostname")
	if gd.Name != win1252(raw) || gdMap != in.Map || anyInt(gd.MaxPlayers) != in.MaxPlayers ||
		anyInt(gd.NumPlayers) != in.NumPlayers || gd.Version != in.Version {
		diffs = append(diffs, "server: GameDig "+strconv.Quote(gd.Name)+" "+gdMap+" "+gd.Version+"; ours "+strconv.Quote(in.Name)+" "+in.Map+" "+in.Version)
	}
	var ours, theirs []playerRow
	ps, _ := m.Fields.Get("players")
	for i, p := range in.Players {
		n, _ := ps.([]codecs.Object)[i].Get("name")
		ours = append(ours, playerRow{name: win1252(n.(string)), score: p.Score, ping: p.Ping})
	}
	score := "frags"
	if d != quake2.Quake2 {
		score = "score"
	}
	for _, p := range append(gd.Players, gd.Bots...) {
		theirs = append(theirs, playerRow{name: p.Name, score: p.num(score), ping: p.num("ping")})
	}
	diffs = append(diffs, comparePlayers("GameDig", ours, theirs)...)
	for _, r := range in.Rules {
		if v, _ := gd.Raw[r[0]].(string); v != win1252(r[1]) {
			diffs = append(diffs, "rule "+r[0]+": ours "+strconv.Quote(r[1])+", GameDig "+strconv.Quote(v))
		}
	}
	return diffs
}

// cp1252 is Windows-1252's 0x80-0x9F; U+FFFD where it defines none.
var cp1252 = [32]rune{0x20ac, 0xfffd, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0xfffd, 0x017d, 0xfffd,
	0xfffd, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0xfffd, 0x017e, 0x0178}

// win1252 is text we decoded as Latin-1 as GameDig decodes the same
// bytes: as Windows-1252.
func win1252(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0x80 && r < 0xa0 {
			r = cp1252[r-0x80]
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestFiveMGameDigInterop asks the emulated FiveM server with GameDig's
// protocol-fivem, which asks getinfo over UDP and then /info.json and
// /players.json over HTTP on the same port: the test serves those (an
// empty player list), so that GameDig completes. Name, map, counts,
// version (the infoResponse's iv) and every infostring key must be what
// our decoder reads; a reply with the host name changed must make the
// comparison fail.
func TestFiveMGameDigInterop(t *testing.T) {
	node := needGameDig(t)
	var addr string
	var conversation func() ([][]byte, [][]byte)
	for try := 0; ; try++ {
		addr, conversation = recordingServer(t, NewFiveM(4, false))
		l, err := net.Listen("tcp4", addr)
		if err == nil {
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/players.json" {
					w.Write([]byte("[]"))
					return
				}
				w.Write([]byte(`{"vars":{}}`))
			})}
			go srv.Serve(l)
			t.Cleanup(func() { srv.Close() })
			break
		}
		if try == 5 {
			t.Fatalf("no TCP port beside the UDP one: %v", err)
		}
	}
	host, port := hostPort(t, addr)
	out := runGameDig(t, node, host, port, "protocol-fivem")
	var gd gdQuake2
	if err := json.Unmarshal(out, &gd); err != nil {
		t.Fatalf("gamedig printed %q: %v", out, err)
	}
	_, replies := conversation()
	if len(replies) != 1 {
		t.Fatalf("%d replies", len(replies))
	}
	c := &quake3.FiveMCodec{}
	m, err := c.Decode(replies, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	diffs := func(m *codecs.Message) []string {
		in := m.Info
		var d []string
		if gd.Name != in.Name || gd.Map != in.Map || anyInt(gd.NumPlayers) != in.NumPlayers || anyInt(gd.MaxPlayers) != in.MaxPlayers || gd.Version != in.Version {
			d = append(d, "server: GameDig "+gd.Name+" "+gd.Map+" "+gd.Version+"; ours "+in.Name+" "+in.Map+" "+in.Version)
		}
		for _, r := range in.Rules {
			if v, _ := gd.Raw[r[0]].(string); v != r[1] {
				d = append(d, "rule "+r[0]+": ours "+strconv.Quote(r[1])+", GameDig "+strconv.Quote(v))
			}
		}
		return d
	}
	if d := diffs(m); len(d) > 0 {
		t.Errorf("GameDig and querylens differ:\n%s\n%s", strings.Join(d, "\n"), out)
	}
	mutated := bytes.Replace(replies[0], []byte(`\hostname\q`), []byte(`\hostname\X`), 1)
	if mm, err := c.Decode([][]byte{mutated}, codecs.DecodeOptions{}); err != nil || len(diffs(mm)) == 0 {
		t.Errorf("a changed host name goes unnoticed (%v)", err)
	}
}

// qwStrip is qstat's reading of the Quake character set: the high bit
// goes, and the glyphs below 0x20 that are left go too.
func qwStrip(s string) string {
	var b strings.Builder
	for _, r := range s {
		if c := byte(r) & 0x7f; c >= 0x20 && r <= 0xff {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestQuake2QstatInterop queries emulated Quake II, QuakeWorld and
// HexenWorld servers with qstat (quakestat -q2s, -qws, -hws with -P -R
// -xml): name, map, counts, players and rules must be what our decoder
// reads from the same reply, within qstat's reading of the Quake
// characters (qwStrip: it drops the gold digits and brackets where we
// show their look-alikes). qstat's -h2s is Hexen II's NetQuake-style
// control protocol (80 00 … "HEXENII"), which the hexen2 codec does not
// speak: HexenWorld's -hws is the one GameDig's hexen2 reads too. A score
// changed in the reply we decode must make the comparison fail.
func TestQuake2QstatInterop(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		d    quake2.Dialect
		kind string
	}{
		{quake2.Quake2, "-q2s"},
		{quake2.QuakeWorld, "-qws"},
		{quake2.Hexen2, "-hws"},
	} {
		t.Run(tc.d.Protocol(), func(t *testing.T) {
			addr, conversation := recordingServer(t, NewQuake2(6, tc.d, Normal))
			qs, out := runQstatOne(t, qstat, tc.kind, addr, "-P", "-R", "-xml", "-retry", "3", "-timeout", "10")
			queries, replies := conversation()
			if len(replies) == 0 {
				t.Fatalf("qstat asked %q", queries)
			}
			c := &quake2.Codec{Dialect: tc.d}
			m, err := c.Decode(replies[:1], codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Info.Players) < 2 {
				t.Fatal("an empty server proves little")
			}
			if diffs := q2QstatDiffs(qs, m); len(diffs) > 0 {
				t.Errorf("qstat and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
			}
			p := m.Info.Players[0]
			from := " " + strconv.Itoa(p.Score) + " "
			mutated := bytes.Replace(replies[0], []byte("\n"+strconv.Itoa(p.Score)+" "), []byte("\n"+strconv.Itoa(p.Score+1)+" "), 1)
			if tc.d != quake2.Quake2 {
				id, _ := m.Fields.Get("players")
				n, _ := id.([]codecs.Object)[0].Get("id")
				from = "\n" + strconv.Itoa(n.(int)) + from
				mutated = bytes.Replace(replies[0], []byte(from), []byte("\n"+strconv.Itoa(n.(int))+" "+strconv.Itoa(p.Score+1)+" "), 1)
			}
			mm, err := c.Decode([][]byte{mutated}, codecs.DecodeOptions{})
			if err != nil || bytes.Equal(mutated, replies[0]) || len(q2QstatDiffs(qs, mm)) == 0 {
				t.Errorf("a mutated score goes unnoticed (%v)", err)
			}
		})
	}
}

func q2QstatDiffs(qs qstatServer, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	raw, _ := in.Rule("hostname")
	if qs.Name != qwStrip(raw) || qs.Map != in.Map || qs.NumPlayers != in.NumPlayers || qs.MaxPlayers != in.MaxPlayers {
		diffs = append(diffs, "server: qstat "+qs.Name+" "+qs.Map+" "+strconv.Itoa(qs.NumPlayers)+"/"+strconv.Itoa(qs.MaxPlayers)+
			"; ours "+in.Name+" "+in.Map+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	theirs := map[string]string{}
	for _, r := range qs.Rules {
		theirs[r.Name] = r.Value
	}
	// What qstat shows as elements, not rules.
	shown := map[string]bool{"hostname": true, "mapname": true, "map": true, "maxclients": true, "maxspectators": true}
	for _, r := range in.Rules {
		v, ok := theirs[r[0]]
		if !ok && shown[r[0]] {
			continue
		}
		if !ok || v != r[1] {
			diffs = append(diffs, "rule "+r[0]+": ours "+strconv.Quote(r[1])+", qstat "+strconv.Quote(v))
		}
	}
	ps, _ := m.Fields.Get("players")
	var ours, them []playerRow
	for i, p := range in.Players {
		n, _ := ps.([]codecs.Object)[i].Get("name")
		ours = append(ours, playerRow{name: qwStrip(n.(string)), score: p.Score, ping: p.Ping})
	}
	for _, p := range qs.Players {
		them = append(them, playerRow{name: p.Name, score: p.Score + p.Frags, ping: p.Ping})
	}
	return append(diffs, comparePlayers("qstat", ours, them)...)
}

// TestQuake2QstatMaster asks emulated QuakeWorld and Quake II masters with
// qstat's -qwm and -q2m, which then query every server listed: qstat must
// find each of them up, with the name our decoder reads; our decode of
// the master's reply must list exactly the servers qstat asked, and a
// reply with one entry's port changed must not.
func TestQuake2QstatMaster(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		d          quake2.Dialect
		kind, want string
	}{
		{quake2.QuakeWorld, "-qwm", "QWS"},
		{quake2.Quake2, "-q2m", "Q2S"},
	} {
		t.Run(tc.d.Protocol(), func(t *testing.T) {
			want := map[string]string{}
			var listed []netip.AddrPort
			for seed := int64(20); seed < 23; seed++ {
				h := NewQuake2(seed, tc.d, Normal)
				addr, _ := recordingServer(t, h)
				m, err := converse(t, tc.d.Protocol(), nil, h, gs2Now)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := m.Info.Rule("hostname")
				want[addr] = qwStrip(raw)
				listed = append(listed, netip.MustParseAddrPort(addr))
			}
			master, conversation := recordingServer(t, NewQuake2Master(tc.d, listed))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, qstat, tc.kind, master, "-xml", "-retry", "3", "-timeout", "10")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("quakestat: %v", err)
			}
			servers, _ := parseQstat(t, out)
			got := map[string]string{}
			for _, s := range servers {
				if s.Type == tc.want && s.Status == "UP" {
					got[s.Address] = s.Name
				}
			}
			if len(got) != len(want) {
				t.Fatalf("qstat found %v up, want %v\n%s", got, want, out)
			}
			for addr, name := range want {
				if got[addr] != name {
					t.Errorf("%s: qstat %q, ours %q", addr, got[addr], name)
				}
			}
			queries, replies := conversation()
			if len(replies) != 1 {
				t.Fatalf("qstat's master query %q got %d replies", queries, len(replies))
			}
			c := &quake2.Codec{Dialect: tc.d}
			sameList := func(reply []byte) bool {
				m, err := c.Decode([][]byte{reply}, codecs.DecodeOptions{})
				if err != nil || m.Kind != codecs.KindMasterList {
					return false
				}
				ours := slices.Sorted(slices.Values(m.Servers))
				return slices.Equal(ours, slices.Sorted(maps.Keys(got)))
			}
			if !sameList(replies[0]) {
				t.Errorf("our decode of the list differs from what qstat asked")
			}
			mutated := slices.Clone(replies[0])
			mutated[len(mutated)-1]++
			if sameList(mutated) {
				t.Error("a changed entry goes unnoticed")
			}
		})
	}
}

// parseQstat reads qstat's XML with each server's address.
func parseQstat(t *testing.T, out []byte) ([]struct {
	qstatServer
	Address string `xml:"address,attr"`
}, error) {
	t.Helper()
	var doc struct {
		Servers []struct {
			qstatServer
			Address string `xml:"address,attr"`
		} `xml:"server"`
	}
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.CharsetReader = latin1Reader
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("qstat printed %q: %v", out, err)
	}
	return doc.Servers, nil
}

// TestQstatH2SIsNotHexenWorld pins why the HexenWorld comparison uses
// qstat's -hws: its -h2s asks Hexen II's NetQuake-style control query
// (80 00 length 02 "HEXENII" 00 version), which no codec of this family
// takes as a query.
func TestQstatH2SIsNotHexenWorld(t *testing.T) {
	qstat := needQstat(t)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qstat, "-h2s", conn.LocalAddr().String(), "-xml", "-retry", "1", "-timeout", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	q := buf[:n]
	if !bytes.Contains(q, []byte("HEXENII")) || q[0] != 0x80 {
		t.Errorf("qstat -h2s asked %q", q)
	}
	for _, d := range []quake2.Dialect{quake2.Quake2, quake2.QuakeWorld, quake2.Hexen2} {
		if (&quake2.Codec{Dialect: d}).CheckQuery(q) == nil {
			t.Errorf("%s takes qstat -h2s's %q as a query", d.Protocol(), q)
		}
	}
}
