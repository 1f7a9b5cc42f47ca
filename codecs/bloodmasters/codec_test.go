package bloodmasters_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	if (&bloodmasters.Codec{}).Name() != "bloodmasters" || (&bloodmasters.Codec{}).Title() != "Bloodmasters" || (&bloodmasters.Codec{}).DefaultPort() != 6969 {
		t.Errorf("codec = %q %q %d", (&bloodmasters.Codec{}).Name(), (&bloodmasters.Codec{}).Title(), (&bloodmasters.Codec{}).DefaultPort())
	}
	opts := (&bloodmasters.Codec{}).Options()
	if len(opts) != 1 || opts[0].Name != "token" || opts[0].Kind != "uint" {
		t.Errorf("Options = %+v", opts)
	}
}

func TestDetect(t *testing.T) {
	dm := packet(t, "dm-3-clients")
	tests := []struct {
		name string
		b    []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"request", codectest.Unhex(t, "0700 0d 12345678"), codecs.KindQuery, codecs.Certain},
		{"reply", dm, codecs.KindResponse, codecs.Certain},
		{"reliable reply", packet(t, "reliable-reply"), codecs.KindResponse, codecs.Certain},
		{"several messages", packet(t, "multi-message"), codecs.KindResponse, codecs.Certain},
		{"reply cut after the title", dm[:60], codecs.KindResponse, codecs.Likely},
		{"reply cut in the title", dm[:12], codecs.KindResponse, codecs.Weak},
		{"reply cut in the token", dm[:5], "", codecs.NotMine},
		{"empty", nil, "", codecs.NotMine},
		{"two bytes", []byte{7, 0}, "", codecs.NotMine},
		{"other command", codectest.Unhex(t, "0700 0e 12345678"), "", codecs.NotMine},
		{"gamespy2 query", codectest.Unhex(t, "fefd00434f5259ffffff"), "", codecs.NotMine},
		{"ogp header", codectest.Unhex(t, "ffffffff4f475000"), "", codecs.NotMine},
		{"length larger than a cut reply at offset 0 but not ours", codectest.Unhex(t, "ff00 0d"), "", codecs.NotMine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, conf := (&bloodmasters.Codec{}).Detect(tc.b)
			if kind != tc.kind || conf != tc.conf {
				t.Errorf("Detect = %q %d, want %q %d", kind, conf, tc.kind, tc.conf)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	tests := []struct {
		name     string
		b        string
		sentinel error
	}{
		{"request", "0700 0d 00000000", nil},
		{"request with token", "0700 0d deadbeef", nil},
		{"short", "0700 0d 0000", codecs.ErrShort},
		{"one byte more than MaxQueryLen", "0700 0d 00000000 00", codecs.ErrTooLong},
		{"a reply", "1100 0d 00000000 03 4f6e65 00 0000 0800", codecs.ErrTooLong},
		{"wrong length", "0800 0d 00000000", codecs.ErrBadValue},
		{"other command", "0700 01 00000000", codecs.ErrNotQuery},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := (&bloodmasters.Codec{}).CheckQuery(codectest.Unhex(t, tc.b))
			if tc.sentinel == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			codectest.WantError(t, err, tc.sentinel, "", -1)
		})
	}
}

func TestDecodeDatagrams(t *testing.T) {
	dm := packet(t, "dm-3-clients")
	m, err := (&bloodmasters.Codec{}).Decode(nil, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrIncomplete, "datagrams", 0)
	if m == nil {
		t.Fatal("nil message")
	}
	_, err = (&bloodmasters.Codec{}).Decode([][]byte{dm, dm}, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrBadValue, "datagrams", 0)

	m, err = (&bloodmasters.Codec{}).Decode([][]byte{codectest.Unhex(t, "0700 0d 12345678")}, codecs.DecodeOptions{})
	if err != nil || m.Kind != codecs.KindQuery || m.Info != nil {
		t.Fatalf("request: %+v, %v", m, err)
	}
}

// TestWarnings lists what each golden packet should warn about.
func TestWarnings(t *testing.T) {
	tests := map[string][]string{
		"dm-3-clients":        nil,
		"tdm-teams":           {bloodmasters.WarnNegative},
		"protocol-26":         nil,
		"protocol-27":         {bloodmasters.WarnLauncherSkipsExtended},
		"protocol-27-build":   {bloodmasters.WarnLauncherSkipsExtended, bloodmasters.WarnBuildBefore28},
		"protocol-28-nobuild": {bloodmasters.WarnLauncherSkipsExtended, bloodmasters.WarnNoBuild},
		"protocol-30":         {bloodmasters.WarnUnknownProtocol, bloodmasters.WarnLauncherSkipsExtended},
		"long-title":          {bloodmasters.WarnLongString},
		"non-ascii":           {bloodmasters.WarnNonASCII},
		"unknown-enums":       {bloodmasters.WarnUnknownGameType, bloodmasters.WarnUnknownTeam},
		"extra-bytes":         {codecs.WarnTrailing},
		"trailing":            {codecs.WarnTrailing},
		"multi-message":       nil,
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := (&bloodmasters.Codec{}).Decode([][]byte{packet(t, name)}, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Warnings) != len(want) || (len(want) > 0 && !reflect.DeepEqual(m.Warnings, want)) {
				t.Errorf("warnings = %q, want %q", m.Warnings, want)
			}
		})
	}

	cut := packet(t, "multi-message")
	m, err := (&bloodmasters.Codec{}).Decode([][]byte{cut[:len(cut)-1]}, codecs.DecodeOptions{})
	if err != nil || !reflect.DeepEqual(m.Warnings, []string{codecs.WarnTruncated}) {
		t.Errorf("message cut after the reply: %q, %v", m.Warnings, err)
	}

	req := request(1)
	m, err = (&bloodmasters.Codec{}).Decode([][]byte{packet(t, "empty")}, codecs.DecodeOptions{Query: req})
	if err != nil || !reflect.DeepEqual(m.Warnings, []string{bloodmasters.WarnTokenMismatch}) {
		t.Errorf("token mismatch: %q, %v", m.Warnings, err)
	}
}

// TestInfo checks the neutral view: stripped names, team null for no team,
// the build as version, num_players counting every client.
func TestInfo(t *testing.T) {
	m, err := (&bloodmasters.Codec{}).Decode([][]byte{packet(t, "tdm-teams")}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Info
	if in.Name != "Red vs Blue" || in.Map != "dm_bloodbath" || in.GameType != "TDM" || !in.Password ||
		in.NumPlayers != 4 || in.MaxPlayers != 16 || in.MaxClients != 20 || in.Version != "Win32NT Dedicated version 1.5.0.0" {
		t.Errorf("info = %+v", in)
	}
	want := []codecs.Player{
		{Name: "Alice", Ping: 33, Team: 1, HasTeam: true},
		{Name: "Bob", Ping: -1, Team: 2, HasTeam: true},
		{Name: "Carol", Ping: 210, Team: 1, HasTeam: true},
		{Name: "Watcher", Ping: 15, Spectator: true},
	}
	if !reflect.DeepEqual(in.Players, want) {
		t.Errorf("players = %+v", in.Players)
	}
	for _, r := range [][2]string{{"website", "http://example.org/bm"}, {"players", "3"}, {"protocol", "29"},
		{"score_limit", "-1"}, {"time_limit", "20"}, {"join_smallest_team", "false"}} {
		if v, ok := in.Rule(r[0]); !ok || v != r[1] {
			t.Errorf("rule %s = %q, want %q", r[0], v, r[1])
		}
	}
	if !bytes.Contains(m.AppendJSON(nil), []byte(`"team":null,"spectator":true`)) {
		t.Errorf("JSON lacks a null team: %s", m.AppendJSON(nil))
	}
}

func TestQuery(t *testing.T) {
	reply := func(token uint32) []byte {
		r, err := bloodmasters.DecodeResponse(packet(t, "dm-3-clients"), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Token = token
		b, err := bloodmasters.AppendResponse(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	q, err := (&bloodmasters.Codec{}).NewQuery(map[string]string{"token": "0x01020304"})
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Start(); len(s) != 1 || !bytes.Equal(s[0], codectest.Unhex(t, "0700 0d 01020304")) {
		t.Fatalf("Start = %x", s)
	}
	if _, err := q.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrIncomplete) {
		t.Errorf("Result before a reply: %v", err)
	}
	feeds := []struct {
		name string
		b    []byte
		done bool
	}{
		{"not ours", codectest.Unhex(t, "fefd00434f5259"), false},
		{"a request", codectest.Unhex(t, "0700 0d 01020304"), false},
		// A relay's cache shares replies, so one may echo another token.
		{"the reply", reply(0x01020304 + 1), true},
		{"a second reply", reply(0x01020304), true},
	}
	for _, f := range feeds {
		send, done, err := q.Feed(f.b)
		if len(send) != 0 || done != f.done || (err == nil) != (f.name == "the reply") {
			t.Errorf("Feed(%s) = %d, %v, %v", f.name, len(send), done, err)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{Spans: true})
	if err != nil || m.Info.Name != "Bloodmasters DM Server" || len(m.Warnings) != 0 || len(m.Spans) == 0 {
		t.Fatalf("Result = %+v, %v", m, err)
	}

	// A reply cut before its token cannot be matched, but it is the only
	// answer a truncating server gives: keep it so Result says what is cut.
	q, _ = (&bloodmasters.Codec{}).NewQuery(nil)
	if _, done, err := q.Feed(reply(0)[:5]); !done || err != nil {
		t.Fatalf("cut reply: %v %v", done, err)
	}
	if _, err := q.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrShort) {
		t.Errorf("Result of a cut reply: %v", err)
	}

	for _, opts := range []map[string]string{{"token": "-1"}, {"token": "4294967296"}, {"token": "x"}, {"flags": "1"}} {
		if _, err := (&bloodmasters.Codec{}).NewQuery(opts); !errors.Is(err, codecs.ErrBadValue) {
			t.Errorf("NewQuery(%v) = %v", opts, err)
		}
	}
	if q, err := (&bloodmasters.Codec{}).NewQuery(map[string]string{"token": " 4294967295 "}); err != nil || !bytes.Equal(q.Start()[0], codectest.Unhex(t, "0700 0d ffffffff")) {
		t.Errorf("decimal token: %v", err)
	}
}

// TestEmptyValues: a string the server sends empty is "" in the neutral
// view; a field it does not send (the build description before protocol
// 28) is missing from it.
func TestEmptyValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp bloodmasters.Response
		want string
	}{
		{"empty strings", bloodmasters.Response{Protocol: 29, HasBuild: true, NumClients: 1, Clients: []bloodmasters.Client{{}}},
			`{"name":"","map":"","game_type":"DM","version":"","password":false,"num_players":1,"max_players":0,"max_clients":0,` +
				`"players":[{"name":"","score":0,"ping":0,"team":null,"spectator":false,"bot":false}],` +
				`"rules":[["website",""],["players","0"],["protocol","29"],["score_limit","0"],["time_limit","0"],["join_smallest_team","false"]]}`},
		{"no build description", bloodmasters.Response{Protocol: 27},
			`{"name":"","map":"","game_type":"DM","password":false,"num_players":0,"max_players":0,"max_clients":0,"players":[],` +
				`"rules":[["website",""],["players","0"],["protocol","27"],["score_limit","0"],["time_limit","0"],["join_smallest_team","false"]]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bloodmasters.AppendResponse(nil, tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			m, err := (&bloodmasters.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(codecs.AppendJSON(nil, m.Object()[2].Value)); got != tc.want {
				t.Errorf("info\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
