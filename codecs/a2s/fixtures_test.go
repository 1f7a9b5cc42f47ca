package a2s_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// packet is one testdata/*.hexlines file: its first comment line says where
// the bytes came from; every other non-comment line is one datagram. The
// extension is not .hex because codecs/all's tests read every
// ../*/testdata/*.hex as one single-datagram message, and most of these
// are conversations of several.
type packet struct {
	name      string
	source    string
	datagrams [][]byte
}

func readPacket(t testing.TB, path string) packet {
	t.Helper()
	datagrams, source := codectest.ReadHexFile(t, path)
	return packet{name: strings.TrimSuffix(filepath.Base(path), ".hexlines"), source: source, datagrams: datagrams}
}

func readPackets(t testing.TB) []packet {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.hexlines")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.hexlines: %v", err)
	}
	var out []packet
	for _, p := range paths {
		out = append(out, readPacket(t, p))
	}
	return out
}

func writePacket(t testing.TB, name, source string, datagrams [][]byte) {
	t.Helper()
	codectest.WriteHexFile(t, filepath.Join("testdata", name+".hexlines"), source, datagrams)
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// sourceInfo is a Source info reply with every extra data field.
func sourceInfo() *a2s.Info {
	return &a2s.Info{Protocol: 17, Name: "Ünïcode Server · 2fort", Map: "ctf_2fort", Folder: "tf", Game: "Team Fortress",
		AppID: 440, Players: 20, MaxPlayers: 24, Bots: 2, ServerType: 'd', Environment: 'l', Visibility: 1, VAC: 1,
		Version: "9543365", HasEDF: true, EDF: a2s.EDFPort | a2s.EDFSteamID | a2s.EDFSourceTV | a2s.EDFKeywords | a2s.EDFGameID,
		Port: 27015, SteamID: 90071992547409921, SourceTVPort: 27020, SourceTVName: "2fort TV",
		Keywords: "cp,increased_maxplayers,valve", GameID: 440}
}

func shipInfo() *a2s.Info {
	return &a2s.Info{Protocol: 7, Name: "The Ship Server", Map: "batavier", Folder: "ship", Game: "The Ship",
		AppID: a2s.ShipAppID, Players: 3, MaxPlayers: 16, ServerType: 'd', Environment: 'w',
		HasShip: true, Ship: a2s.ShipInfo{Mode: 0, Witnesses: 2, Duration: 3}, Version: "1.0.0.4"}
}

func goldSrcInfo() *a2s.Info {
	return &a2s.Info{GoldSrc: true, Address: "127.0.0.1:27015", Name: "Half-Life DM", Map: "crossfire", Folder: "valve",
		Game: "Half-Life", Players: 4, MaxPlayers: 16, Protocol: 47, ServerType: 'D', Environment: 'L', Mod: 1,
		ModInfo: a2s.ModInfo{Link: "http://example.org/mod", DownloadLink: "http://example.org/mod.zip", Version: 1, Size: 1 << 20, Type: 1, DLL: 1},
		VAC:     1, Bots: 1}
}

func demoPlayers(ship bool) *a2s.Players {
	p := &a2s.Players{Count: 3, Ship: ship, Players: []a2s.Player{
		{Name: "Heavy", Score: 12, Duration: 612.5, Deaths: 3, Money: 500},
		{Name: "Scout ⚡", Score: -1, Duration: 30.25, Deaths: 7, Money: 20},
		{Name: "", Score: 0, Duration: 1},
	}}
	return p
}

func demoRules(n int) *a2s.Rules {
	r := &a2s.Rules{}
	for i := range n {
		r.Rules = append(r.Rules, a2s.Rule{Name: "sv_rule_" + strconv.Itoa(i), Value: strings.Repeat("v", i%40)})
	}
	r.Count = uint16(len(r.Rules))
	return r
}

// bzip2 compresses b with the bzip2 tool (only run with -update).
func bzip2(t testing.TB, b []byte) []byte {
	t.Helper()
	cmd := exec.Command("bzip2", "-9", "-c")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bzip2 (needed with -update for the compressed fixture): %v", err)
	}
	return out
}

// TestWriteFixtures writes testdata/*.hexlines from this package's encoder with
// -update (then run -update again for the goldens). No public captures are
// stored in the repository; the layouts are those of the Valve Developer
// Community's "Server queries" page, checked against the demo server.
func TestWriteFixtures(t *testing.T) {
	if !*codectest.Update {
		t.Skip("only with -update")
	}
	m := must[[]byte](t)
	ms := must[[][]byte](t)
	const built = "built with this package's encoder: "
	w := func(name, source string, dgs ...[]byte) { writePacket(t, name, built+source, dgs) }

	w("info_request", "A2S_INFO without a challenge", m(a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypeInfoRequest})))
	w("info_request_challenge", "A2S_INFO with the challenge appended (servers since Dec 2020)",
		m(a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypeInfoRequest, HasChallenge: true, Challenge: 0x4a3b2c1d})))
	w("player_request_ask", "A2S_PLAYER asking for a challenge (FF FF FF FF)", m(a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypePlayerRequest})))
	w("rules_request", "A2S_RULES with a challenge",
		m(a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypeRulesRequest, HasChallenge: true, Challenge: 0x4a3b2c1d})))
	w("challenge", "S2C_CHALLENGE", m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: 0x4a3b2c1d})))
	w("info_source_full", "Source info reply with every extra data flag, UTF-8 name",
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: sourceInfo()})))
	plain := sourceInfo()
	plain.HasEDF, plain.EDF = false, 0
	w("info_source_plain", "Source info reply without the extra data flag byte",
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: plain})))
	w("info_ship", "The Ship's info reply (app 2400): mode, witnesses, duration before the version",
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: shipInfo()})))
	w("info_goldsrc_mod", "GoldSrc 'm' info reply with mod info (note the NUL byte after the download link)",
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfoGoldSrc, Info: goldSrcInfo()})))
	w("players", "player reply, three players (one unnamed)",
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: demoPlayers(false)})))
	w("players_ship", "The Ship's player reply: deaths and money after the list",
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: demoPlayers(true)})))
	w("rules", "rules reply, five rules", m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: demoRules(5)})))

	big := m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: demoRules(60)}))
	parts := ms(a2s.SplitResponse(big, 0x11223344, a2s.SplitSource, 600))
	w("rules_split_source", "rules reply split in the Source form (size field), parts 2, 0, 1 and 0 again (a duplicate)",
		parts[2], parts[0], parts[1], parts[0])
	parts = ms(a2s.SplitResponse(big, 0x0000abcd, a2s.SplitSourceNoSize, 700))
	w("rules_split_nosize", "rules reply split in the older Source form without the size field, parts 1, 2, 0",
		parts[1], parts[2], parts[0])
	pl := m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: demoPlayers(false)}))
	parts = ms(a2s.SplitResponse(pl, 0x00000007, a2s.SplitGoldSrc, 40))
	w("players_split_goldsrc", "player reply split in the GoldSrc form (number and total in one byte), parts in reverse",
		parts[1], parts[0])
	parts = ms(a2s.SplitCompressed(big, bzip2(t, big), 0x00000042, a2s.SplitSource, 64))
	w("rules_split_bzip2", "rules reply compressed with bzip2 -9 and split in the Source form, parts in reverse",
		reversed(parts)...)

	w("master_query", `Steam master query: region all, first page, filter \appid\440\dedicated\1`,
		m(a2s.AppendMasterRequest(nil, a2s.MasterRequest{Region: a2s.RegionAll, Filter: `\appid\440\dedicated\1`})))
	list := []a2s.Addr{{IP: [4]byte{127, 0, 0, 1}, Port: 27015}, {IP: [4]byte{127, 0, 0, 2}, Port: 27016}, {IP: [4]byte{10, 1, 2, 3}, Port: 443}}
	w("master_pages", "Steam master reply in two pages: two servers, then one and 0.0.0.0:0",
		a2s.AppendMasterReply(nil, list[:2], false), a2s.AppendMasterReply(nil, list[2:], true))

	ch := m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: 0x4a3b2c1d}))
	w("conversation", "a conversation's replies: a challenge, the info, the players, the rules",
		ch, m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: sourceInfo()})),
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: demoPlayers(false)})),
		m(a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: demoRules(3)})))
}

func reversed(parts [][]byte) [][]byte {
	out := make([][]byte, 0, len(parts))
	for i := len(parts) - 1; i >= 0; i-- {
		out = append(out, parts[i])
	}
	return out
}
