package gamespy3_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy3"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(gamespy3.Protocol)
	if err != nil || c.Name() != "gamespy3" || c.Title() != "GameSpy v3/v4" || c.DefaultPort() != 25565 {
		t.Fatalf("Lookup = %v, %v", c, err)
	}
}

func hexes(t *testing.T, s string) []byte { return codectest.Unhex(t, s) }

func TestCheckQuery(t *testing.T) {
	c := &gamespy3.Codec{}
	for _, tc := range []struct {
		name, hex string
		want      error // nil: accepted
	}{
		{"challenge request", "fefd09 01020304", nil},
		{"v3 stat", "fefd00 01020304 ffffff01", nil},
		{"v4 stat", "fefd00 01020304 a1245c7d ffffff01", nil},
		{"minecraft stat", "fefd00 01020304 00912 95b 00000000", nil},
		{"minecraft without challenge", "fefd00 01020304 00000000", codecs.ErrBadValue},
		{"minecraft basic stat", "fefd00 01020304 0091295b", codecs.ErrBadValue},
		{"challenge request padded", "fefd09 01020304 00000000", nil},
		{"challenge request with payload", "fefd09 01020304 ffffff01", codecs.ErrBadValue},
		{"challenge request with short padding", "fefd09 01020304 0000", codecs.ErrTrailing},
		{"challenge request with long padding", "fefd09 01020304 0000000000", codecs.ErrTrailing},
		{"bad magic", "fefe00 01020304 ffffff01", codecs.ErrBadMagic},
		{"other type", "fefd01 01020304 ffffff01", codecs.ErrNotQuery},
		{"short payload", "fefd00 01020304 ffff", codecs.ErrShort},
		{"cut challenge", "fefd00 01020304 0091 ffffff01", codecs.ErrShort},
		{"too long", "fefd00 01020304 0091295b ffffff01 00", codecs.ErrTooLong},
		{"gamespy2 query", "fefd00 01020304 ffffff", codecs.ErrShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckQuery(hexes(t, tc.hex))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			codectest.WantError(t, err, tc.want, "", -1)
		})
	}
}

func TestQueryKey(t *testing.T) {
	c := &gamespy3.Codec{}
	key := func(s string) []byte { return c.QueryKey(hexes(t, s)) }
	same := [][2]string{
		{"fefd09 01020304", "fefd09 0a0b0c0d 00000000"},
		{"fefd00 01020304 a1245c7d ffffff01", "fefd00 00000001 0000002a ffffff01"},
		{"fefd00 01020304 ffffff01", "fefd00 00000009 ffffff01"},
		{"fefd00 01020304 0000002a 00000000", "fefd00 00000009 12345678 00000000"},
	}
	for _, p := range same {
		if a, b := key(p[0]), key(p[1]); a == nil || !bytes.Equal(a, b) {
			t.Errorf("keys of %s and %s: %x, %x", p[0], p[1], a, b)
		}
	}
	var keys [][]byte
	for _, p := range same {
		keys = append(keys, key(p[0]))
	}
	for i := range keys {
		for j := range i {
			if bytes.Equal(keys[i], keys[j]) {
				t.Errorf("different questions share key %x", keys[i])
			}
		}
	}
	if k := key("fefd00 01020304 ffff"); k != nil {
		t.Errorf("key of a bad query = %x", k)
	}
}

func TestDetect(t *testing.T) {
	c := &gamespy3.Codec{}
	for _, tc := range []struct {
		name, hex string
		kind      codecs.Kind
		conf      codecs.Confidence
	}{
		{"challenge request", "fefd09 01020304", codecs.KindQuery, codecs.Certain},
		{"bad stat query", "fefd00 01020304 ff", codecs.KindQuery, codecs.Likely},
		{"challenge reply", "09 01020304 3100", codecs.KindChallenge, codecs.Likely},
		{"split packet", "00 01020304 73706c69746e756d00 80 00 00", codecs.KindResponse, codecs.Certain},
		{"whole packet", "00 01020304 6b00 7600 00", codecs.KindResponse, codecs.Weak},
		{"other", "07 01020304 00", "", codecs.NotMine},
		{"gamespy1", "5c737461747573", "", codecs.NotMine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, conf := c.Detect(hexes(t, tc.hex))
			if k != tc.kind || conf != tc.conf {
				t.Errorf("Detect = %q %d, want %q %d", k, conf, tc.kind, tc.conf)
			}
		})
	}
}

// converse feeds the replies to a conversation and returns what it sent
// after Start, whether it finished, and its result.
func converse(t *testing.T, opts map[string]string, replies [][]byte) (start, sent [][]byte, done bool, m *codecs.Message, err error) {
	t.Helper()
	q, err := (&gamespy3.Codec{}).NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	start = q.Start()
	for _, r := range replies {
		more, d, ferr := q.Feed(r)
		if ferr != nil {
			t.Fatalf("Feed(%x): %v", r, ferr)
		}
		sent = append(sent, more...)
		done = d
	}
	m, err = q.Result(codecs.DecodeOptions{})
	return
}

func TestConversation(t *testing.T) {
	split := conversation(t, "ut3-split")
	bf2 := conversation(t, "bf2-zero")
	mc := conversation(t, "minecraft")
	v3 := conversation(t, "v3-nosplit")
	for _, tc := range []struct {
		name       string
		opts       map[string]string
		replies    [][]byte
		start      string
		sent       []string
		done       bool
		players    int
		incomplete bool
	}{
		{"v4 split out of order, a duplicate", nil, [][]byte{split[1], split[3], split[4], split[3], split[5]},
			"fefd09 01020304", []string{"fefd00 01020304 a1245c7d ffffff01"}, true, 5, false},
		{"challenge 0", map[string]string{"challenge": "true"}, [][]byte{bf2[1], bf2[3]},
			"fefd09 01020304", []string{"fefd00 01020304 ffffff01"}, true, 2, false},
		{"minecraft", map[string]string{"minecraft": "true"}, [][]byte{mc[1], mc[3]},
			"fefd09 01020304", []string{"fefd00 01020304 0091295b 00000000"}, true, 2, false},
		{"v3 without challenge", map[string]string{"challenge": "false"}, [][]byte{v3[1]},
			"fefd00 01020304 ffffff01", nil, true, 1, false},
		{"a packet missing", nil, [][]byte{split[1], split[3], split[4]},
			"fefd09 01020304", []string{"fefd00 01020304 a1245c7d ffffff01"}, false, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, sent, done, m, err := converse(t, tc.opts, tc.replies)
			if !bytes.Equal(start[0], hexes(t, tc.start)) || len(start) != 1 {
				t.Errorf("Start = %x, want %s", start, tc.start)
			}
			var want [][]byte
			for _, s := range tc.sent {
				want = append(want, hexes(t, s))
			}
			if !slices.EqualFunc(sent, want, bytes.Equal) {
				t.Errorf("sent %x, want %x", sent, want)
			}
			if done != tc.done {
				t.Errorf("done = %v", done)
			}
			if tc.incomplete {
				codectest.WantError(t, err, codecs.ErrIncomplete, "packets", -1)
			} else if err != nil {
				t.Fatal(err)
			}
			if m.Info == nil || len(m.Info.Players) != tc.players {
				t.Fatalf("info %+v", m.Info)
			}
		})
	}
}

func TestConversationFailures(t *testing.T) {
	c := &gamespy3.Codec{}
	if _, err := c.NewQuery(map[string]string{"minecraft": "true", "challenge": "false"}); err == nil {
		t.Error("Minecraft without the challenge is accepted")
	}
	if _, err := c.NewQuery(map[string]string{"session": "1"}); err == nil {
		t.Error("an unknown option is accepted")
	}
	q, _ := c.NewQuery(nil)
	_, err := q.Result(codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrIncomplete, "reply", 0)
	if _, done, err := q.Feed([]byte{0x07, 1, 2, 3, 4, 0}); done || err == nil {
		t.Errorf("Feed(unknown type) = %v, %v", done, err)
	}
	if _, _, err := q.Feed(hexes(t, "09 01020304 3432 00")); err != nil {
		t.Fatal(err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrIncomplete, "reply", 0)
	if m.Kind != codecs.KindChallenge {
		t.Errorf("kind %q after the challenge alone", m.Kind)
	}
	for range 3 {
		q.Feed(hexes(t, "09 01020304 3432 00"))
	}
	if _, _, err := q.Feed(hexes(t, "09 01020304 3432 00")); err == nil {
		t.Error("a fifth challenge reply is answered")
	}
	v3, _ := c.NewQuery(map[string]string{"challenge": "false"})
	if _, _, err := v3.Feed(hexes(t, "09 01020304 3432 00")); err == nil {
		t.Error("a challenge reply is answered when none was asked for")
	}
}

func TestReassemble(t *testing.T) {
	pkt := func(n int, last bool, session uint32, fields ...gamespy3.Field) gamespy3.Response {
		return gamespy3.Response{Type: gamespy3.TypeStat, Session: session, Split: true, Number: n, Last: last,
			HasRules: n == 0, Sections: []gamespy3.Section{{Marker: gamespy3.SectionPlayers, Fields: fields}}}
	}
	names := func(off int, v ...string) gamespy3.Field {
		return gamespy3.Field{Name: "player_", Offset: off, Values: v}
	}
	for _, tc := range []struct {
		name    string
		packets []gamespy3.Response
		err     error
		warn    string
		rows    int
	}{
		{"overlap", []gamespy3.Response{pkt(0, false, 1, names(0, "a", "b")), pkt(1, true, 1, names(1, "x", "c"))}, nil, gamespy3.WarnOverlap, 3},
		{"duplicate", []gamespy3.Response{pkt(0, true, 1, names(0, "a")), pkt(0, true, 1, names(0, "b"))}, nil, gamespy3.WarnDuplicatePacket, 1},
		{"two sessions", []gamespy3.Response{pkt(0, false, 1), pkt(1, true, 2)}, codecs.ErrBadValue, "", 0},
		{"after the last", []gamespy3.Response{pkt(0, true, 1), pkt(1, false, 1)}, codecs.ErrBadValue, "", 0},
		{"two lasts", []gamespy3.Response{pkt(0, true, 1), pkt(1, true, 1)}, codecs.ErrBadValue, "", 0},
		{"no last", []gamespy3.Response{pkt(0, false, 1)}, codecs.ErrIncomplete, "", 0},
		{"none", nil, codecs.ErrIncomplete, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp, warns, err := gamespy3.Reassemble(tc.packets)
			if tc.err != nil {
				codectest.WantError(t, err, tc.err, "", -1)
				return
			}
			if err != nil || !slices.Contains(warns, tc.warn) || len(rp.Players.Rows) != tc.rows {
				t.Fatalf("%+v %v %v", rp, warns, err)
			}
			if rp.Players.Rows[0][0] != "a" {
				t.Errorf("first value not kept: %v", rp.Players.Rows)
			}
		})
	}
}

func TestAppendResponseRefuses(t *testing.T) {
	base := gamespy3.Response{Type: gamespy3.TypeStat, Split: true, Last: true}
	for _, tc := range []struct {
		name  string
		edit  func(r *gamespy3.Response)
		field string
	}{
		{"empty key", func(r *gamespy3.Response) { r.Rules = []gamespy3.Rule{{Key: ""}} }, "rules[0].key"},
		{"stray-like value", func(r *gamespy3.Response) { r.Rules = []gamespy3.Rule{{Key: "k", Value: "p12"}} }, "rules[0].value"},
		{"not a stray", func(r *gamespy3.Response) { r.Rules = []gamespy3.Rule{{Key: "k", Stray: []string{"x"}}} }, "rules[0].stray[0]"},
		{"NUL in a value", func(r *gamespy3.Response) { r.Rules = []gamespy3.Rule{{Key: "k", Value: "a\x00b"}} }, "rules[0].value"},
		{"marker-like name", func(r *gamespy3.Response) {
			r.Sections = []gamespy3.Section{{Fields: []gamespy3.Field{{Name: "\x01x"}}}}
		}, "sections[0].fields[0].name"},
		{"empty value", func(r *gamespy3.Response) {
			r.Sections = []gamespy3.Section{{Marker: 1, Fields: []gamespy3.Field{{Name: "player_", Values: []string{"a", ""}}}}}
		}, "sections[0].fields[0].values[1]"},
		{"offset", func(r *gamespy3.Response) {
			r.Sections = []gamespy3.Section{{Marker: 1, Fields: []gamespy3.Field{{Name: "player_", Offset: 256}}}}
		}, "sections[0].fields[0].offset"},
		{"rules after packet 0", func(r *gamespy3.Response) { r.Number, r.Rules = 1, []gamespy3.Rule{{Key: "k"}} }, "rules"},
		{"packet number", func(r *gamespy3.Response) { r.Number = 16 }, "packet"},
		{"unsplit not last", func(r *gamespy3.Response) { r.Split, r.Last = false, false }, "packet"},
		{"bad challenge", func(r *gamespy3.Response) { r.Type, r.Challenge = gamespy3.TypeChallenge, "x" }, "challenge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.edit(&r)
			_, err := gamespy3.AppendResponse(nil, r)
			e := codectest.WantError(t, err, codecs.ErrBadValue, tc.field, -1)
			if !errors.Is(e, codecs.ErrBadValue) {
				t.Error(e)
			}
		})
	}
}

// TestEmptyValues: server keys with empty values read as empty strings
// in the neutral view, and a player section with no names is an empty
// player list, not a missing one.
func TestEmptyValues(t *testing.T) {
	r := gamespy3.Response{Type: gamespy3.TypeStat, Session: 1, Split: true, Last: true, HasRules: true,
		Rules:    []gamespy3.Rule{{Key: "hostname"}, {Key: "map"}, {Key: "gametype"}, {Key: "version"}, {Key: "password"}},
		Sections: []gamespy3.Section{{Marker: gamespy3.SectionPlayers, Fields: []gamespy3.Field{{Name: "player_"}}}}}
	b, err := gamespy3.AppendResponse(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	m, err := (&gamespy3.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"","map":"","game_type":"","version":"","password":false,"num_players":0,"players":[],` +
		`"rules":[["hostname",""],["map",""],["gametype",""],["version",""],["password",""]]}`
	if got := string(codecs.AppendJSON(nil, m.Object()[2].Value)); got != want {
		t.Errorf("info\n got %s\nwant %s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	split := conversation(t, "ut3-split")
	many := make([][]byte, 2*gamespy3.MaxPackets+1)
	for i := range many {
		many[i] = split[4]
	}
	for _, tc := range []struct {
		name   string
		dgs    [][]byte
		err    error
		field  string
		layer  string
		hasMsg bool // the partial message has the first packet's info
	}{
		{"none", nil, codecs.ErrIncomplete, "datagrams", "", false},
		{"too many", many, codecs.ErrTooLong, "datagrams", "", false},
		{"two queries", [][]byte{split[0], split[2]}, codecs.ErrBadValue, "datagram", "wire 2", false},
		{"a bad packet after a good one", [][]byte{split[4], hexes(t, "00 00000001 73706c69746e756d00 90 00")}, codecs.ErrTooLong, "packet", "wire 2", true},
		{"an unknown type", [][]byte{hexes(t, "05 00000001 00")}, codecs.ErrUnknownCode, "type", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&gamespy3.Codec{}).Decode(tc.dgs, codecs.DecodeOptions{})
			e := codectest.WantError(t, err, tc.err, tc.field, -1)
			if e.Layer != tc.layer {
				t.Errorf("layer %q, want %q", e.Layer, tc.layer)
			}
			if m == nil || (m.Info != nil) != tc.hasMsg {
				t.Errorf("partial message %+v", m)
			}
		})
	}
}

// TestRequestRoundTrip: each query form decodes to its Request and is
// written back byte for byte; AppendRequest refuses what no client sends.
func TestRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
		want      gamespy3.Request
	}{
		{"challenge request", "fefd09 01020304", gamespy3.Request{Type: gamespy3.TypeChallenge, Session: 0x01020304}},
		{"challenge request padded (GameDig)", "fefd09 01020304 00000000",
			gamespy3.Request{Type: gamespy3.TypeChallenge, Session: 0x01020304, Padded: true}},
		{"v3 stat", "fefd00 01020304 ffffff01", gamespy3.Request{Type: gamespy3.TypeStat, Session: 0x01020304}},
		{"v4 stat", "fefd00 01020304 0091295b ffffff01",
			gamespy3.Request{Type: gamespy3.TypeStat, Session: 0x01020304, HasChallenge: true, Challenge: 9513307}},
		{"minecraft stat", "fefd00 01020304 0091295b 00000000",
			gamespy3.Request{Type: gamespy3.TypeStat, Session: 0x01020304, HasChallenge: true, Challenge: 9513307, Minecraft: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := hexes(t, tc.hex)
			q, err := gamespy3.DecodeRequest(b)
			if err != nil || q != tc.want {
				t.Fatalf("DecodeRequest = %+v, %v; want %+v", q, err, tc.want)
			}
			enc, err := gamespy3.AppendRequest(nil, q)
			if err != nil || !bytes.Equal(enc, b) {
				t.Fatalf("AppendRequest = %x, %v; want %x", enc, err, b)
			}
		})
	}
	_, err := gamespy3.AppendRequest(nil, gamespy3.Request{Type: gamespy3.TypeStat, Padded: true})
	codectest.WantError(t, err, codecs.ErrBadValue, "padding", 7)
}
