package gamespy1_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(gamespy1.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "gamespy1" || c.Title() != "GameSpy v1" || c.DefaultPort() != 7778 {
		t.Errorf("codec = %q %q %d", c.Name(), c.Title(), c.DefaultPort())
	}
	var names []string
	for _, o := range c.Options() {
		names = append(names, o.Name+":"+o.Kind)
	}
	if want := []string{"query:choice", "xserverquery:bool", "echo:uint", "master:bool", "gamename:text", "list:choice", "key:text"}; !slices.Equal(names, want) {
		t.Errorf("Options = %v, want %v", names, want)
	}
}

func TestDetect(t *testing.T) {
	ut := datagrams(t, "ut99-status")
	for _, tc := range []struct {
		name string
		b    string
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"status", `\status\`, codecs.KindQuery, codecs.Certain},
		{"gamedig", `\status\xserverquery`, codecs.KindQuery, codecs.Certain},
		{"words", `\basic\\info\`, codecs.KindQuery, codecs.Certain},
		{"final datagram", string(ut[0]), codecs.KindResponse, codecs.Likely},
		{"echo reply", `\echo\1234\final\\queryid\7.1`, codecs.KindResponse, codecs.Likely},
		{"pairs without queryid", `\hostname\x\mapname\y`, codecs.KindResponse, codecs.Weak},
		{"unknown word", `\level_property\x\`, codecs.KindResponse, codecs.Weak},
		{"cut key", `\hostname\x\map`, "", codecs.NotMine},
		{"empty key", `\\x`, "", codecs.NotMine},
		{"lone backslash", `\`, "", codecs.NotMine},
		{"empty", "", "", codecs.NotMine},
		{"quake3", "\xff\xff\xff\xffgetstatus", "", codecs.NotMine},
		{"gamespy2", "\xfe\xfd\x00\x00\x00\x00\x01\xff\xff\xff", "", codecs.NotMine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, conf := (&gamespy1.Codec{}).Detect([]byte(tc.b))
			if kind != tc.kind || conf != tc.conf {
				t.Errorf("Detect(%q) = %q %d, want %q %d", tc.b, kind, conf, tc.kind, tc.conf)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	for _, tc := range []struct {
		q        string
		sentinel error
		field    string
		offset   int
	}{
		{`\status\`, nil, "", 0},
		{`\status\xserverquery`, nil, "", 0},
		{`\status\xserverquery\`, nil, "", 0},
		{`\basic\\info\\rules\\players\`, nil, "", 0},
		{`\info\\echo\1234\`, nil, "", 0},
		{`\echo\abc`, nil, "", 0},
		{`\secure\IQxZdK\`, nil, "", 0},
		{``, codecs.ErrShort, "words", 0},
		{`status`, codecs.ErrBadValue, "words[0].name", 0},
		{`\status`, codecs.ErrShort, "words[0].name", 0},
		{`\rcon\x\`, codecs.ErrUnknownCode, "words[0].name", 0},
		{`\level_property\Title\`, codecs.ErrUnknownCode, "words[0].name", 0},
		{`\status\\status\`, codecs.ErrBadValue, "words[1].name", 8},
		{`\status\nonsense\`, codecs.ErrBadValue, "words[0].value", 8},
		{`\echo\`, codecs.ErrShort, "words[0].value", 6},
		{`\echo\\`, codecs.ErrShort, "words[0].value", 6},
		{`\echo\a b\`, codecs.ErrBadValue, "words[0].value", 6},
		{`\echo\abc\status\`, codecs.ErrBadValue, "words[1].name", 10},
		{`\status\xserverquery\info\`, codecs.ErrBadValue, "words[1].name", 21},
		{`\echo\` + strings.Repeat("x", 65) + `\`, codecs.ErrBadValue, "words[0].value", 6},
		{strings.Repeat(`\status\`, 20), codecs.ErrTooLong, "datagram", 128},
		{`\status\\info\\basic\\rules\\players\\echo\1\\secure\abc\\status\`, codecs.ErrBadValue, "words[7].name", 57},
	} {
		t.Run(tc.q, func(t *testing.T) {
			err := (&gamespy1.Codec{}).CheckQuery([]byte(tc.q))
			if tc.sentinel == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			codectest.WantError(t, err, tc.sentinel, tc.field, tc.offset)
		})
	}
	if err := (&gamespy1.Codec{}).CheckQuery([]byte(`\status\\info\\basic\\rules\\players\\echo\1\\secure\abc\\x\`)); !errors.Is(err, codecs.ErrTooLong) && !errors.Is(err, codecs.ErrUnknownCode) {
		t.Errorf("a ninth word: %v", err)
	}
}

// TestRequestRoundTrip: what DecodeRequest reads, AppendRequest writes
// back byte for byte.
func TestRequestRoundTrip(t *testing.T) {
	for _, q := range []string{`\status\`, `\status\xserverquery`, `\status\xserverquery\`, `\basic\\info\\players\`, `\info\\echo\1234\`, `\echo\abc`, `\secure\IQxZdK\`} {
		r, err := gamespy1.DecodeRequest([]byte(q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		b, err := gamespy1.AppendRequest(nil, r)
		if err != nil || string(b) != q {
			t.Errorf("%s: wrote %q, %v", q, b, err)
		}
	}
	for _, q := range []gamespy1.Request{
		{},
		{Words: []gamespy1.Word{{Name: "status"}}, Open: true},
		{Words: []gamespy1.Word{{Name: "rcon"}}},
		{Words: []gamespy1.Word{{Name: "echo"}}},
	} {
		if b, err := gamespy1.AppendRequest([]byte("x"), q); err == nil || string(b) != "x" {
			t.Errorf("AppendRequest(%+v) = %q, %v; want an error and dst unchanged", q, b, err)
		}
	}
}

func TestAppendResponseErrors(t *testing.T) {
	for _, r := range []gamespy1.Response{
		{},
		{Vars: []gamespy1.Var{{Key: "", Value: "x"}}},
		{Vars: []gamespy1.Var{{Key: "queryid", Value: "1.1"}}},
		{Vars: []gamespy1.Var{{Key: "final", Value: ""}}},
		{Vars: []gamespy1.Var{{Key: "a\\b", Value: "x"}}},
		{Vars: []gamespy1.Var{{Key: "a", Value: "x\\y"}}},
		{Vars: []gamespy1.Var{{Key: "a", Value: "x"}}, QueryID: "1.x"},
	} {
		if _, err := gamespy1.AppendResponse(nil, r); !errors.Is(err, codecs.ErrBadValue) && !errors.Is(err, codecs.ErrShort) {
			t.Errorf("AppendResponse(%+v) = %v", r, err)
		}
	}
}

// TestDecodeResponse: the queryid and final pairs, wherever they are,
// come out of Vars; the layouts of the dialects round-trip.
func TestDecodeResponse(t *testing.T) {
	for _, tc := range []struct {
		b    string
		want gamespy1.Response
	}{
		{`\a\1\final\\queryid\3.2`, gamespy1.Response{Vars: []gamespy1.Var{{Key: "a", Value: "1"}}, QueryID: "3.2", Final: true, FinalFirst: true}},
		{`\a\1\queryid\3.2\final\`, gamespy1.Response{Vars: []gamespy1.Var{{Key: "a", Value: "1"}}, QueryID: "3.2", Final: true}},
		{`\a\\b\2\queryid\3`, gamespy1.Response{Vars: []gamespy1.Var{{Key: "a", Value: ""}, {Key: "b", Value: "2"}}, QueryID: "3"}},
		{`\final\\queryid\1.1\`, gamespy1.Response{QueryID: "1.1", Final: true, FinalFirst: true, Trailer: true}},
		{`\a\` + "\xe9t\xe9", gamespy1.Response{Vars: []gamespy1.Var{{Key: "a", Value: "été"}}}},
	} {
		r, err := gamespy1.DecodeResponse([]byte(tc.b), nil)
		if err != nil || !reflect.DeepEqual(r, tc.want) {
			t.Errorf("DecodeResponse(%q) = %+v, %v; want %+v", tc.b, r, err, tc.want)
			continue
		}
		if b, err := gamespy1.AppendResponse(nil, r); err != nil || string(b) != tc.b {
			t.Errorf("AppendResponse = %q, %v; want %q", b, err, tc.b)
		}
	}
	for _, tc := range []struct {
		b      string
		field  string
		offset int
	}{
		{``, "vars", 0},
		{`x`, "vars", 0},
		{`\a\1\queryid\1.1\queryid\1.2`, "queryid.value", 24},
		{`\a\1\final\\final\`, "final.value", 17},
		{`\final\x`, "final.value", 6},
		{`\queryid\1.2.3`, "queryid.value", 8},
		{`\queryid\1234567890.1`, "queryid.value", 8},
		{`\a\1\\`, "vars[1].key", 4},
		{`\a`, "vars[0].key", 0},
	} {
		_, err := gamespy1.DecodeResponse([]byte(tc.b), nil)
		codectest.WantError(t, err, nil, tc.field, tc.offset)
	}
	if p, _ := gamespy1.DecodeResponse([]byte(`\a\1\b\2\c`), nil); len(p.Vars) != 2 {
		t.Errorf("partial = %+v; want the two pairs before the cut", p)
	}
}

// TestReassembly: the datagrams of a reply in every order give the same
// message; duplicates and another query's datagrams are dropped with a
// warning; what is missing is said.
func TestReassembly(t *testing.T) {
	ut := datagrams(t, "ut99-status")
	want, err := (&gamespy1.Codec{}).Decode(ut, codecs.DecodeOptions{})
	if err != nil || len(want.Warnings) != 0 || len(want.Info.Players) != 2 {
		t.Fatalf("ut99: %+v, %v", want, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		ds := slices.Clone(ut)
		rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
		got, err := (&gamespy1.Codec{}).Decode(ds, codecs.DecodeOptions{})
		if err != nil || !reflect.DeepEqual(got.Info, want.Info) || !reflect.DeepEqual(got.Fields, want.Fields) || len(got.Warnings) != 0 {
			t.Fatalf("order changes the message: %v %v", got.Warnings, err)
		}
	}
	for _, tc := range []struct {
		name string
		ds   [][]byte
		warn []string
	}{
		{"duplicate", append(slices.Clone(ut), ut[2]), []string{gamespy1.WarnDuplicate}},
		{"other query", append(slices.Clone(ut), []byte(`\hostname\other\queryid\13.6`)), []string{gamespy1.WarnOtherQuery}},
		{"missing middle", [][]byte{ut[0], ut[1], ut[2], ut[4]}, []string{gamespy1.WarnMissing}},
		{"no final", ut[1:], []string{gamespy1.WarnNoFinal}},
		{"unnumbered among numbered", append(slices.Clone(ut), []byte(`\hostname\cut`)), []string{codecs.WarnTruncated}},
		{"final alone without number", [][]byte{[]byte(`\hostname\x\final\`)}, nil},
		{"packet zero (UT's empty players reply)", [][]byte{[]byte(`\final\\queryid\5.0`)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&gamespy1.Codec{}).Decode(tc.ds, codecs.DecodeOptions{})
			if err != nil || !slices.Equal(m.Warnings, tc.warn) {
				t.Errorf("warnings %q, %v; want %q", m.Warnings, err, tc.warn)
			}
		})
	}
	many := make([][]byte, gamespy1.MaxDatagrams+1)
	for i := range many {
		many[i] = []byte(`\a\b`)
	}
	_, err = (&gamespy1.Codec{}).Decode(many, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrTooLong, "datagrams", 0)
	big := [][]byte{bytes.Repeat([]byte(`\a\b`), gamespy1.MaxReplyBytes/4+1)}
	_, err = (&gamespy1.Codec{}).Decode(big, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrTooLong, "datagrams", 0)
	_, err = (&gamespy1.Codec{}).Decode([][]byte{[]byte(`\a\b\queryid\1.17`)}, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrTooLong, "queryid.value", 0)
	_, err = (&gamespy1.Codec{}).Decode(nil, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrIncomplete, "datagrams", 0)
	m, err := (&gamespy1.Codec{}).Decode([][]byte{[]byte(`\status\`), []byte(`\status\`)}, codecs.DecodeOptions{})
	if m.Kind != codecs.KindQuery || !errors.Is(err, codecs.ErrBadValue) {
		t.Errorf("two queries: %v, %v", m.Kind, err)
	}
}

// TestPlayerIndex: a player's N orders the players and never sizes
// anything; an N above MaxPlayerIndex is a rule.
func TestPlayerIndex(t *testing.T) {
	m, err := (&gamespy1.Codec{}).Decode([][]byte{[]byte(`\player_1023\last\player_5\first\frags_5\3\player_999999\huge\teamname_7\t7\teamname_8\t8\final\`)}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Info
	if len(in.Players) != 2 || in.Players[0].Name != "first" || in.Players[0].Score != 3 || in.Players[1].Name != "last" {
		t.Errorf("players %+v", in.Players)
	}
	if v, ok := in.Rule("player_999999"); !ok || v != "huge" {
		t.Errorf("player_999999 is not a rule: %v", in.Rules)
	}
	if len(in.Teams) != 8 || in.Teams[7].Name != "t7" {
		t.Errorf("teams %+v", in.Teams)
	}
	if _, ok := in.Rule("teamname_8"); !ok {
		t.Errorf("teamname_8 is not a rule: %v", in.Rules)
	}
}

// TestInfo: the neutral view of each dialect.
func TestInfo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		num     int
		players []codecs.Player
		warn    []string
	}{
		{"ut99-status", 2, []codecs.Player{{Name: "Gumby", Score: 12, Ping: 48}, {Name: "Lurker", Score: 3, Ping: 120}}, nil},
		{"ut451-status", 2, []codecs.Player{{Name: "Rocket", Score: 7, Ping: 64, HasTeam: true}, {Name: "Skaarj", Score: 9, Team: 1, HasTeam: true, Bot: true}}, nil},
		{"bf1942-status", 4, []codecs.Player{{Name: "Sgt.Rock", Score: 25, Ping: 38, Team: 1, HasTeam: true}, {Name: "Pvt.Ryan", Score: 3, Ping: 112, Team: 2, HasTeam: true}, {Name: "Lt.Dan", Score: 14, Ping: 70, Team: 2, HasTeam: true}}, []string{gamespy1.WarnPlayerCount}},
		{"mohaa-status", 2, []codecs.Player{{Name: "Kowalski", Score: 8, Ping: 55}, {Name: "Baker", Score: -1, Ping: 80}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&gamespy1.Codec{}).Decode(datagrams(t, tc.name), codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Info.NumPlayers != tc.num || !reflect.DeepEqual(m.Info.Players, tc.players) || !slices.Equal(m.Warnings, tc.warn) {
				t.Errorf("num %d players %+v warnings %q", m.Info.NumPlayers, m.Info.Players, m.Warnings)
			}
		})
	}
	m, _ := (&gamespy1.Codec{}).Decode(datagrams(t, "ut451-status"), codecs.DecodeOptions{})
	if in := m.Info; in.Map != "CTF-Coret" || in.Password || in.Has&codecs.HasPassword == 0 || in.MaxPlayers != 12 {
		t.Errorf("ut451 info %+v", in)
	}
	m, _ = (&gamespy1.Codec{}).Decode([][]byte{[]byte(`\maptitle\Coret\password\1\final\`)}, codecs.DecodeOptions{})
	if in := m.Info; in.Map != "Coret" || !in.Password || in.Has&codecs.HasPlayers != 0 {
		t.Errorf("maptitle info %+v", in)
	}
}

// TestQuery: the conversation, fed a reply out of order with a duplicate
// and a stranger, is done exactly when the last missing datagram comes.
func TestQuery(t *testing.T) {
	c := &gamespy1.Codec{}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{nil, `\status\`},
		{map[string]string{"xserverquery": "true"}, `\status\xserverquery`},
		{map[string]string{"query": "all"}, `\basic\\info\\rules\\players\`},
		{map[string]string{"query": "info", "echo": "0600"}, `\info\\echo\600\`},
		{map[string]string{"xserverquery": "1", "echo": "7"}, `\status\xserverquery\\echo\7\`},
	} {
		q, err := c.NewQuery(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(q.Start()[0]); got != tc.want {
			t.Errorf("NewQuery(%v) sends %q, want %q", tc.opts, got, tc.want)
		}
		if err := c.CheckQuery(q.Start()[0]); err != nil {
			t.Errorf("%q: %v", tc.want, err)
		}
	}
	for _, opts := range []map[string]string{{"query": "rcon"}, {"echo": "-1"}, {"echo": "x"}, {"xserverquery": "maybe"}, {"id": "1"}} {
		_, err := c.NewQuery(opts)
		if e, ok := errors.AsType[*codecs.Error](err); !ok || !strings.HasPrefix(e.Field, "options.") || !errors.Is(err, codecs.ErrBadValue) {
			t.Errorf("NewQuery(%v) = %v", opts, err)
		}
	}

	ut := datagrams(t, "ut99-status")
	q, _ := c.NewQuery(nil)
	if _, err := q.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrIncomplete) {
		t.Errorf("Result before a reply: %v", err)
	}
	if _, done, err := q.Feed([]byte{1}); done || err == nil {
		t.Errorf("Feed(garbage) = %v, %v", done, err)
	}
	steps := []struct {
		b    []byte
		done bool
		err  bool
	}{
		{ut[0], false, false}, // the final one, 12.5
		{ut[1], false, false},
		{ut[1], false, false}, // a duplicate
		{[]byte(`\a\b\queryid\13.1`), false, true},
		{ut[2], false, false},
		{ut[3], false, false},
		{ut[4], true, false},
	}
	for i, s := range steps {
		_, done, err := q.Feed(s.b)
		if done != s.done || (err != nil) != s.err {
			t.Fatalf("step %d: done %v, %v", i, done, err)
		}
	}
	if _, done, err := q.Feed(ut[0]); !done || err == nil {
		t.Errorf("Feed after done = %v, %v", done, err)
	}
	// Result, from the datagrams as Feed read them (or read again for the
	// spans), is Decode of the datagrams kept, as they came: the duplicate
	// and the other query's datagram left out.
	kept := [][]byte{ut[0], ut[1], ut[2], ut[3], ut[4]}
	for _, opt := range []codecs.DecodeOptions{{}, {NoFields: true}, {Spans: true}, {NoFields: true, Spans: true}} {
		for range 2 { // and again: Result leaves what it read as it was
			m, err := q.Result(opt)
			want, wantErr := c.Decode(kept, opt)
			if err != nil || wantErr != nil || !reflect.DeepEqual(m, want) {
				t.Errorf("Result(%+v) = %+v, %v; want %+v", opt, m, err, want)
			}
		}
	}

	q, _ = c.NewQuery(nil)
	for _, b := range [][]byte{[]byte(`\hostname\x\final\`)} {
		if _, done, err := q.Feed(b); !done || err != nil {
			t.Errorf("an unnumbered final datagram does not complete the reply: %v %v", done, err)
		}
	}
	q, _ = c.NewQuery(map[string]string{"query": "players"})
	if _, done, err := q.Feed([]byte(`\final\\queryid\5.0`)); !done || err != nil {
		t.Errorf("a final datagram numbered 0 does not complete the reply: %v %v", done, err)
	}
	q, _ = c.NewQuery(nil)
	if _, done, err := q.Feed([]byte(`\a\b\queryid\1.99`)); !done || !errors.Is(err, codecs.ErrTooLong) {
		t.Errorf("packet 99: %v %v", done, err)
	}
}

func TestQueryKey(t *testing.T) {
	c := &gamespy1.Codec{}
	key := func(s string) string { return string(c.QueryKey([]byte(s))) }
	if key(`\info\\echo\1\`) != key(`\info\\echo\999\`) {
		t.Error("echo texts give different keys")
	}
	if key(`\status\xserverquery`) != key(`\status\xserverquery\`) {
		t.Error("an open value gives another key")
	}
	if key(`\status\`) == key(`\info\`) || key(`\secure\abc\`) == key(`\secure\abd\`) {
		t.Error("different questions share a key")
	}
	if c.QueryKey([]byte("not a query")) != nil {
		t.Error("a key for what is not a query")
	}
	a, _ := c.NewQuery(map[string]string{"echo": "1"})
	b, _ := c.NewQuery(map[string]string{"echo": "77777"})
	if bytes.Equal(a.Start()[0], b.Start()[0]) || !bytes.Equal(codecsKey(c, a.Start()[0]), codecsKey(c, b.Start()[0])) {
		t.Error("queries differing in their echo do not share a key")
	}
}

func codecsKey(c *gamespy1.Codec, b []byte) []byte { return c.QueryKey(b) }

// TestEmptyValues: an empty value is "" in the neutral view; a key the
// server does not send is missing from it.
func TestEmptyValues(t *testing.T) {
	m, err := (&gamespy1.Codec{}).Decode([][]byte{[]byte(`\hostname\\mapname\\numplayers\1\player_0\\final\`)}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(codecs.AppendJSON(nil, m.Object()[2].Value))
	want := `{"name":"","map":"","num_players":1,"players":[{"name":"","score":0,"ping":0,"team":null,"spectator":false,"bot":false}],"rules":[["hostname",""],["mapname",""],["numplayers","1"]]}`
	if got != want {
		t.Errorf("info\n got %s\nwant %s", got, want)
	}
}

// TestDecodeAllocs: a decode without spans allocates about one object per
// pair, not per byte.
func TestDecodeAllocs(t *testing.T) {
	ut := datagrams(t, "ut99-status")
	n := testing.AllocsPerRun(20, func() { _, _ = (&gamespy1.Codec{}).Decode(ut, codecs.DecodeOptions{NoFields: true}) })
	if n > 80 {
		t.Errorf("%v allocations for %d datagrams", n, len(ut))
	}
}

// TestBadDatagramKeepsOthers: a datagram whose queryid is broken neither
// sets the reply's number nor hides the good datagrams; its error comes
// back with the message they make.
func TestBadDatagramKeepsOthers(t *testing.T) {
	ds := [][]byte{[]byte(`\hostname\x\queryid\abc.1`), []byte(`\mapname\m\queryid\4.1`), []byte(`\numplayers\0\queryid\4.2\final\`)}
	m, err := (&gamespy1.Codec{}).Decode(ds, codecs.DecodeOptions{})
	e := codectest.WantError(t, err, codecs.ErrBadValue, "queryid.value", 19)
	if e.Layer != "datagram 1" || m.Info.Map != "m" || m.Info.Name != "x" || slices.Contains(m.Warnings, gamespy1.WarnOtherQuery) {
		t.Errorf("message %+v, warnings %q, layer %q", m.Info, m.Warnings, e.Layer)
	}
}
