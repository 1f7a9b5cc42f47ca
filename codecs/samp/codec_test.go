package samp_test

import (
	"bytes"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/samp"
)

func TestRegistered(t *testing.T) {
	for _, want := range []*samp.Codec{{}, {VCMP: true}} {
		c, err := codecs.Lookup(want.Name())
		if err != nil || c.DefaultPort() != want.DefaultPort() {
			t.Fatalf("Lookup(%q) = %v, %v", want.Name(), c, err)
		}
	}
}

// server answers queries the way the package's encoder writes replies:
// the fake server of the conversation tests.
type server struct {
	info    samp.ServerInfo
	rules   []samp.Rule
	players []samp.Player
	cs      samp.Charset
	asked   []samp.Opcode
}

func (s *server) answer(t *testing.T, q []byte) []byte {
	t.Helper()
	req, err := samp.DecodeRequest(q)
	if err != nil {
		t.Fatalf("the conversation sent %x: %v", q, err)
	}
	s.asked = append(s.asked, req.Opcode)
	r := samp.Response{Header: samp.ReplyHeader(req.Header), Charset: s.cs, Info: s.info, Rules: s.rules, Players: s.players}
	b, err := samp.AppendResponse(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// converse runs q against s until done, and returns the result.
func converse(t *testing.T, q codecs.Query, s *server) *codecs.Message {
	t.Helper()
	send := q.Start()
	for round := 0; len(send) > 0; round++ {
		if round > 3 {
			t.Fatal("the conversation does not end")
		}
		var next [][]byte
		for _, d := range send {
			more, done, err := q.Feed(s.answer(t, d))
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, more...)
			if done && len(more) > 0 {
				t.Fatal("done, with more to send")
			}
		}
		send = next
	}
	m, err := q.Result(codecs.DecodeOptions{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings %v", m.Warnings)
	}
	return m
}

var (
	sampRules = []samp.Rule{{"lagcomp", "On"}, {"mapname", "San Andreas"}, {"version", "0.3.7-R2"}, {"weburl", "www.sa-mp.com"}}
	ompRules  = []samp.Rule{{"allowed_clients", "0.3.7, 0.3.DL"}, {"mapname", "Los Santos"}, {"version", "omp 1.4.0.2779"}}
	players   = []samp.Player{{ID: 0, Name: "Carl_Johnson", Score: 12, Ping: 40}, {ID: 3, Name: "Jos\u00e9", Score: -5, Ping: 80}}
)

// TestConversation: what each kind of server is asked, and how its third
// string and player list come out.
func TestConversation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		vcmp      bool
		opts      map[string]string
		s         server
		asked     string
		mapName   string
		third     string // the fields' name for the third string
		players   int    // -1: no list
		version   string
		detailed  bool
		charsetOK string // a player name that must come out right
	}{
		{name: "sa-mp", s: server{info: samp.ServerInfo{Players: 2, MaxPlayers: 50, Hostname: "H", Gamemode: "G", Language: "San Andreas"}, rules: sampRules, players: players},
			asked: "ird", mapName: "San Andreas", third: "map", players: 2, version: "0.3.7-R2", detailed: true},
		{name: "open.mp", s: server{info: samp.ServerInfo{Players: 2, MaxPlayers: 50, Hostname: "H", Gamemode: "G", Language: "English"}, rules: ompRules, players: players},
			asked: "irc", mapName: "Los Santos", third: "language", players: 2, version: "omp 1.4.0.2779"},
		{name: "vc:mp", vcmp: true, s: server{info: samp.ServerInfo{Version: "04rel006", Players: 2, MaxPlayers: 50, Hostname: "H", Gamemode: "G", Language: "Vice City"}, players: players},
			asked: "ic", mapName: "Vice City", third: "map", players: 2, version: "04rel006"},
		{name: "empty", s: server{info: samp.ServerInfo{Players: 0, MaxPlayers: 50, Hostname: "H", Gamemode: "G", Language: "x"}, rules: sampRules},
			asked: "ir", mapName: "San Andreas", third: "map", players: -1, version: "0.3.7-R2"},
		{name: "crowded", s: server{info: samp.ServerInfo{Players: 100, MaxPlayers: 500, Hostname: "H", Gamemode: "G", Language: "x"}, rules: sampRules},
			asked: "ir", mapName: "San Andreas", third: "map", players: -1, version: "0.3.7-R2"},
		{name: "row", opts: map[string]string{"players": "none"}, s: server{info: samp.ServerInfo{Players: 2, MaxPlayers: 50, Hostname: "H", Gamemode: "G", Language: "English"}, rules: ompRules},
			asked: "ir", mapName: "Los Santos", third: "language", players: -1, version: "omp 1.4.0.2779"},
		{name: "no rules", opts: map[string]string{"rules": "false", "players": "clients"}, s: server{info: samp.ServerInfo{Players: 2, MaxPlayers: 50, Hostname: "H", Gamemode: "G", Language: "Grove"}, players: players},
			asked: "ic", mapName: "Grove", third: "map", players: 2},
		{name: "cp1251", opts: map[string]string{"charset": "windows-1251", "rules": "false", "players": "detailed"},
			s:     server{cs: samp.Windows1251, info: samp.ServerInfo{Players: 1, MaxPlayers: 50, Hostname: "Русский сервер", Gamemode: "G", Language: "Русский"}, players: []samp.Player{{Name: "Иван", Score: 1}}},
			asked: "id", mapName: "Русский", third: "map", players: 1, detailed: true, charsetOK: "Иван"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &samp.Codec{VCMP: tc.vcmp}
			q, err := c.NewQuery(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range q.Start() {
				if err := c.CheckQuery(d); err != nil {
					t.Fatalf("CheckQuery(own query %x): %v", d, err)
				}
			}
			s := tc.s
			m := converse(t, q, &s)
			if got := string(opcodes(s.asked)); got != tc.asked {
				t.Errorf("asked %q, want %q", got, tc.asked)
			}
			in := m.Info
			if in.Map != tc.mapName || in.Version != tc.version || in.Name != s.info.Hostname || in.NumPlayers != int(s.info.Players) {
				t.Errorf("info %+v", in)
			}
			f, _ := m.Fields.Get("info")
			if _, ok := f.(codecs.Object).Get(tc.third); !ok {
				t.Errorf("the third string is not %q: %v", tc.third, f)
			}
			if tc.players < 0 {
				if in.Has&codecs.HasPlayers != 0 {
					t.Errorf("players %v, want no list", in.Players)
				}
				return
			}
			if len(in.Players) != tc.players {
				t.Fatalf("players %+v", in.Players)
			}
			p := in.Players[0]
			if want := s.players[0]; p.Name != want.Name || p.Score != int(want.Score) || tc.detailed != (p.Ping == int(want.Ping)) {
				t.Errorf("player %+v, sent %+v (detailed %v)", p, want, tc.detailed)
			}
			if tc.charsetOK != "" && (p.Name != tc.charsetOK || in.Name != "Русский сервер") {
				t.Errorf("decoded %q %q", in.Name, p.Name)
			}
		})
	}
}

func opcodes(ops []samp.Opcode) []byte {
	b := make([]byte, len(ops))
	for i, o := range ops {
		b[i] = byte(o)
	}
	return b
}

// TestFeedRefuses: a reply to a question not asked, or asked and
// answered, or with the other family's magic, is ignored with an error.
func TestFeedRefuses(t *testing.T) {
	q, _ := (&samp.Codec{}).NewQuery(map[string]string{"ip": "10.1.2.3", "port": "7777"})
	start := q.Start()
	if len(start) != 1 || !bytes.Equal(start[0][4:10], []byte{10, 1, 2, 3, 0x61, 0x1e}) {
		t.Fatalf("start %x", start)
	}
	s := &server{info: samp.ServerInfo{Players: 1, Hostname: "H"}, rules: sampRules, players: players[:1]}
	for _, b := range [][]byte{
		s.answer(t, []byte("SAMP\x00\x00\x00\x00\x00\x00c")), // not asked
		[]byte("MP04\x00\x00\x00\x00\x00\x00i"),              // VC:MP's
	} {
		if _, done, err := q.Feed(b); done || err == nil {
			t.Errorf("Feed(%x) = %v, %v", b, done, err)
		}
	}
	info := s.answer(t, start[0])
	next, done, err := q.Feed(info)
	if done || err != nil || len(next) != 1 || next[0][10] != 'r' {
		t.Fatalf("Feed(info) = %x, %v, %v; want the rules asked next", next, done, err)
	}
	if _, _, err := q.Feed(info); err == nil {
		t.Error("a second info reply is taken")
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.Name != "H" || len(m.Warnings) != 1 || m.Warnings[0] != samp.WarnUnanswered {
		t.Errorf("before the rules: %v, %+v", err, m)
	}
	// A malformed reply ends the conversation; Result names the field.
	bad := s.answer(t, next[0])
	bad = bad[:len(bad)-1]
	if _, done, err := q.Feed(bad); !done || err == nil {
		t.Errorf("Feed(cut rules) = %v, %v", done, err)
	}
	_, err = q.Result(codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrShort, "", -1)
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opts  map[string]string
		field string
	}{
		{map[string]string{"ip": "1.2.3"}, "options.ip"},
		{map[string]string{"ip": "1.2.3.256"}, "options.ip"},
		{map[string]string{"ip": "::1"}, "options.ip"},
		{map[string]string{"port": "65536"}, "options.port"},
		{map[string]string{"charset": "koi8-r"}, "options.charset"},
		{map[string]string{"players": "all"}, "options.players"},
		{map[string]string{"rules": "maybe"}, "options.rules"},
	} {
		_, err := (&samp.Codec{}).NewQuery(tc.opts)
		codectest.WantError(t, err, codecs.ErrBadValue, tc.field, -1)
	}
	_, err := (&samp.Codec{VCMP: true}).NewQuery(map[string]string{"rules": "true"})
	codectest.WantError(t, err, codecs.ErrBadValue, "options.rules", -1)
}

func TestCheckQuery(t *testing.T) {
	h := func(magic, op string) []byte { return []byte(magic + "\x01\x02\x03\x04\x05\x06" + op) }
	for _, tc := range []struct {
		name string
		vcmp bool
		b    []byte
		ok   bool
	}{
		{"info", false, h("SAMP", "i"), true},
		{"rules", false, h("SAMP", "r"), true},
		{"clients", false, h("SAMP", "c"), true},
		{"detailed", false, h("SAMP", "d"), true},
		{"ping", false, append(h("SAMP", "p"), 1, 2, 3, 4), true},
		{"vcmp info", true, h("VCMP", "i"), true},
		{"vcmp magic to samp", false, h("VCMP", "i"), false},
		{"samp magic to vcmp", true, h("SAMP", "i"), false},
		{"reply magic", true, h("MP04", "i"), false},
		{"rcon", false, append(h("SAMP", "x"), 0, 0), false},
		{"ping short", false, append(h("SAMP", "p"), 1, 2, 3), false},
		{"info with a tail", false, append(h("SAMP", "i"), 0), false},
		{"header cut", false, h("SAMP", "")[:10], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := (&samp.Codec{VCMP: tc.vcmp}).CheckQuery(tc.b); (err == nil) != tc.ok {
				t.Errorf("CheckQuery(%x) = %v, want ok %v", tc.b, err, tc.ok)
			}
		})
	}
}

// TestQueryKey: queries that differ only in the header's address share a
// key.
func TestQueryKey(t *testing.T) {
	var keys [2][]byte
	for i, ip := range []string{"0.0.0.0", "203.0.113.9"} {
		q, _ := (&samp.Codec{}).NewQuery(map[string]string{"ip": ip, "port": "7777"})
		keys[i] = codecs.QueryKey(samp.Protocol, q.Start()[0])
	}
	if !bytes.Equal(keys[0], keys[1]) {
		t.Errorf("keys differ: %x %x", keys[0], keys[1])
	}
}

// TestCharsets: every byte of each code page decodes and encodes back to
// itself, and a few letters land where the code pages put them.
func TestCharsets(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, cs := range []samp.Charset{samp.Windows1252, samp.Windows1251} {
		if got := cs.Append(nil, cs.Decode(all)); !bytes.Equal(got, all) {
			t.Errorf("%v: round trip %x", cs, got)
		}
		if c2, ok := samp.ParseCharset(cs.String()); !ok || c2 != cs {
			t.Errorf("ParseCharset(%q) = %v, %v", cs.String(), c2, ok)
		}
	}
	for _, tc := range []struct {
		cs   samp.Charset
		in   string
		want string
	}{
		{samp.Windows1252, "\x80\x8a\x9f\xe9\xff", "€ŠŸéÿ"},
		{samp.Windows1251, "\xcf\xf0\xe8\xe2\xe5\xf2 \xa8\xb8\xb9", "Привет Ёё№"},
		{samp.UTF8, "h\xc3\xa9 \xff", "hé \ufffd"},
	} {
		if got := tc.cs.Decode([]byte(tc.in)); got != tc.want {
			t.Errorf("%v.Decode(%q) = %q, want %q", tc.cs, tc.in, got, tc.want)
		}
	}
	if got := samp.Windows1252.Append(nil, "Жé"); string(got) != "?\xe9" {
		t.Errorf("Append of a letter 1252 lacks = %q", got)
	}
}
