package gamespy2

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup("gamespy2")
	if err != nil {
		t.Fatal(err)
	}
	if c.Title() != "GameSpy v2" || c.DefaultPort() != 0 || len(c.Options()) != 2 {
		t.Errorf("codec %q %d %v", c.Title(), c.DefaultPort(), c.Options())
	}
}

func TestDetect(t *testing.T) {
	full, _ := AppendResponse(nil, sample(), FullRequest(id1020))
	players, _ := AppendResponse(nil, sample(), Request{ID: id1020, Players: AllKeys})
	tests := []struct {
		name string
		b    []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"query", codectest.Unhex(t, "fefd0010203040ffffff"), codecs.KindQuery, codecs.Certain},
		{"index query", codectest.Unhex(t, "fefd0010203040020105000000"[:26]), codecs.KindQuery, codecs.Certain},
		{"broken query", codectest.Unhex(t, "fefd0010203040ff"), codecs.KindQuery, codecs.Likely},
		{"gs3 challenge", codectest.Unhex(t, "fefd0910203040"), "", codecs.NotMine},
		{"full reply", full, codecs.KindResponse, codecs.Likely},
		{"players reply", players, codecs.KindResponse, codecs.Likely},
		{"cut reply", full[:100], codecs.KindResponse, codecs.Weak},
		{"header only", full[:5], codecs.KindResponse, codecs.Weak},
		{"short", full[:4], "", codecs.NotMine},
		{"other packet type", codectest.Unhex(t, "0510203040"), "", codecs.NotMine},
		{"binary noise", codectest.Unhex(t, "0010203040ff01020304fe00"), "", codecs.NotMine},
		{"empty", nil, "", codecs.NotMine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, c := (&Codec{}).Detect(tc.b)
			if k != tc.kind || c != tc.conf {
				t.Errorf("Detect = %q %d, want %q %d", k, c, tc.kind, tc.conf)
			}
		})
	}
}

func TestDecodeQueryMessage(t *testing.T) {
	m, err := (&Codec{}).Decode([][]byte{codectest.Unhex(t, "fefd0010203040 02 0105 ff 00")}, codecs.DecodeOptions{})
	if err != nil || m.Kind != codecs.KindQuery || m.Info != nil {
		t.Fatalf("%+v %v", m, err)
	}
	got := string(codecs.AppendJSON(nil, m.Fields))
	want := `{"magic":"fefd","packet_type":0,"id":"10203040","server":{"count":2,"keys":[1,5],"names":["hostname","mapname"]},"players":{"count":255},"teams":{"count":0}}`
	if got != want {
		t.Errorf("fields\n got %s\nwant %s", got, want)
	}
	_, err = (&Codec{}).Decode([][]byte{codectest.Unhex(t, "fefd0010203040ffffff"), codectest.Unhex(t, "fefd0010203040ffffff")}, codecs.DecodeOptions{})
	if e := codectest.WantError(t, err, nil, "", -1); e.Layer != "wire 2" {
		t.Errorf("two queries: %v", err)
	}
}

func TestDecodeOptionsQuery(t *testing.T) {
	req := Request{ID: id1020, Server: KeyList(KeyHostname)}
	q, _ := AppendRequest(nil, req)
	r, _ := AppendResponse(nil, sample(), req)
	m, err := (&Codec{}).Decode([][]byte{r}, codecs.DecodeOptions{Query: q})
	if err != nil || m.Info.Name != "Café Conquest" {
		t.Fatalf("%+v %v", m.Info, err)
	}
	_, err = (&Codec{}).Decode([][]byte{r}, codecs.DecodeOptions{Query: q[:5]})
	if e := codectest.WantError(t, err, nil, "", -1); e.Layer != "query" {
		t.Errorf("bad query: %v", err)
	}
}

func TestDecodeErrorKeepsPartial(t *testing.T) {
	server, _ := AppendResponse(nil, sample(), Request{ID: id1020, Server: AllKeys})
	m, err := (&Codec{}).Decode([][]byte{server, {0x05, 1, 2, 3, 4}}, codecs.DecodeOptions{})
	e := codectest.WantError(t, err, nil, "", -1)
	if e.Layer != "wire 2" || e.Field != "packet_type" || m == nil || m.Info == nil || m.Info.Name != "Café Conquest" {
		t.Errorf("err %v, partial %+v", err, m)
	}
}

func TestDuplicateSection(t *testing.T) {
	server, _ := AppendResponse(nil, sample(), Request{ID: id1020, Server: AllKeys})
	m, err := (&Codec{}).Decode([][]byte{server, server}, codecs.DecodeOptions{})
	if err != nil || !contains(m.Warnings, "duplicate section") {
		t.Errorf("%v %v", m.Warnings, err)
	}
}

// serve answers each query the way a QR2 server holding resp would.
func serve(t *testing.T, resp Response, out [][]byte) [][]byte {
	t.Helper()
	var replies [][]byte
	for _, q := range out {
		req, err := DecodeRequest(q)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := AppendResponse(nil, resp, req)
		replies = append(replies, r)
	}
	return replies
}

func TestQuery(t *testing.T) {
	want := normal(sample())
	want.ID = id1020
	tests := []struct {
		name  string
		opts  map[string]string
		sent  []string
		order []int // the order replies arrive in
	}{
		{"combined", map[string]string{"id": "10203040"}, []string{"fefd0010203040ffffff"}, []int{0}},
		{"split", map[string]string{"style": "split", "id": "10203040"},
			[]string{"fefd0010203040ff0000", "fefd001020304000ff00", "fefd00102030400000ff"}, []int{0, 1, 2}},
		{"split out of order", map[string]string{"style": "split", "id": "10203040"},
			[]string{"fefd0010203040ff0000", "fefd001020304000ff00", "fefd00102030400000ff"}, []int{2, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := (&Codec{}).NewQuery(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			out := q.Start()
			if len(out) != len(tc.sent) {
				t.Fatalf("sent %d datagrams", len(out))
			}
			for i := range out {
				if !bytes.Equal(out[i], codectest.Unhex(t, tc.sent[i])) {
					t.Errorf("datagram %d = %x, want %s", i, out[i], tc.sent[i])
				}
			}
			replies := serve(t, sample(), out)
			if _, done, err := q.Feed(codectest.Unhex(t, "fefd00")); err == nil || done {
				t.Errorf("a datagram that is no reply: done %v err %v", done, err)
			}
			for n, i := range tc.order {
				more, done, err := q.Feed(replies[i])
				if err != nil || len(more) != 0 || done != (n == len(tc.order)-1) {
					t.Fatalf("Feed %d: more %d done %v err %v", i, len(more), done, err)
				}
			}
			m, err := q.Result(codecs.DecodeOptions{Spans: true})
			if err != nil || len(m.Warnings) != 0 || len(m.Layers) != len(out) {
				t.Fatalf("Result: %v %v", m.Warnings, err)
			}
			if m.Info.Name != "Café Conquest" || len(m.Info.Players) != 2 || len(m.Info.Teams) != 2 {
				t.Errorf("info %+v", m.Info)
			}
			if _, done, err := q.Feed(replies[0]); err == nil || !done {
				t.Errorf("a reply too many: done %v err %v", done, err)
			}
		})
	}
}

func TestQueryEarlyResult(t *testing.T) {
	q, _ := (&Codec{}).NewQuery(map[string]string{"style": "split"})
	if _, err := q.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrIncomplete) {
		t.Errorf("no reply: %v", err)
	}
	out := q.Start()
	replies := serve(t, sample(), out)
	q.Feed(replies[1])
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "warnings", []string{"no reply to the server query", "no reply to the teams query"}, m.Warnings)
	if len(m.Info.Players) != 2 || m.Info.Has&codecs.HasName != 0 {
		t.Errorf("info %+v", m.Info)
	}
}

func TestNewQueryOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"style": "both"}, {"id": "123"}, {"id": "zzzzzzzz"}, {"colour": "red"},
	} {
		if _, err := (&Codec{}).NewQuery(opts); err == nil {
			t.Errorf("%v accepted", opts)
		}
	}
}

func TestInfo(t *testing.T) {
	r := Response{Sections: 7,
		Rules: []Rule{{"hostname", "H"}, {"mapname", "M"}, {"gametype", "ctf"}, {"gamever", "1.2"},
			{"password", "True"}, {"maxplayers", " 16 "}},
		Players: Table{Count: 5, Fields: []string{"name_", "score_", "ping_", "team_", "AIBot_"},
			Rows: [][]string{{"bot", "x", "0", "", "1"}}},
		Teams: Table{Fields: []string{"score_t", "team_t"}, Rows: [][]string{{"9", "Red"}}},
	}
	in := r.Info()
	want := &codecs.Info{
		Has: codecs.HasName | codecs.HasMap | codecs.HasGameType | codecs.HasVersion | codecs.HasPassword |
			codecs.HasMaxPlayers | codecs.HasNumPlayers | codecs.HasPlayers | codecs.HasTeams | codecs.HasRules,
		Name: "H", Map: "M", GameType: "ctf", Version: "1.2", Password: true, MaxPlayers: 16, NumPlayers: 5,
		Players: []codecs.Player{{Name: "bot", Bot: true}},
		Teams:   []codecs.Team{{Name: "Red", Score: 9}},
		Rules:   [][2]string{{"hostname", "H"}, {"mapname", "M"}, {"gametype", "ctf"}, {"gamever", "1.2"}, {"password", "True"}, {"maxplayers", " 16 "}},
	}
	equal(t, "info", want, in)
}

// TestEmptyValues: a key the server sends with an empty value is "" in
// the neutral view (GameDig, qstat and opengsq agree); only a key it does
// not send is left out. Every style of query, and a reply read without
// its query.
func TestEmptyValues(t *testing.T) {
	empty := sample()
	empty.Rules = []Rule{{"hostname", ""}, {"gamever", ""}, {"mapname", ""}, {"gametype", ""}, {"password", ""}}
	empty.Players.Rows = [][]string{{"", "", "", ""}}
	empty.Teams.Rows = [][]string{{"", ""}}
	const want = `{"name":"","map":"","game_type":"","version":"","password":false,"num_players":1,` +
		`"players":[{"name":"","score":0,"ping":0,"team":null,"spectator":false,"bot":false}],"teams":[{"name":"","score":0}],` +
		`"rules":[["hostname",""],["gamever",""],["mapname",""],["gametype",""],["password",""]]}`
	for _, style := range []string{"combined", "split"} {
		for _, withQuery := range []bool{true, false} {
			t.Run(style+"/"+strconv.FormatBool(withQuery), func(t *testing.T) {
				q, err := (&Codec{}).NewQuery(map[string]string{"style": style})
				if err != nil {
					t.Fatal(err)
				}
				replies := serve(t, empty, q.Start())
				var m *codecs.Message
				if withQuery {
					for _, r := range replies {
						q.Feed(r)
					}
					m, err = q.Result(codecs.DecodeOptions{})
				} else {
					m, err = (&Codec{}).Decode(replies, codecs.DecodeOptions{})
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := string(codecs.AppendJSON(nil, m.Object()[2].Value)); got != want {
					t.Errorf("info\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}
