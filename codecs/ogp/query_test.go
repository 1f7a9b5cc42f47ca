package ogp_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/ogp"
)

func TestRegistered(t *testing.T) {
	c := &ogp.Codec{}
	if c.Name() != "ogp" || c.Title() != "Open Game Protocol" || c.DefaultPort() != 0 {
		t.Errorf("%s %q %d", c.Name(), c.Title(), c.DefaultPort())
	}
	names := map[string]bool{}
	for _, o := range c.Options() {
		names[o.Name] = true
		if o.Help == "" || o.Kind == "" {
			t.Errorf("option %s lacks help or kind", o.Name)
		}
	}
	for _, n := range []string{"version", "challenge", "request_id", "max_bytes", "teams", "players", "rules", "addons", "limits", "colors", "utf8", "info"} {
		if !names[n] {
			t.Errorf("no option %s", n)
		}
	}
}

func TestDetect(t *testing.T) {
	c := &ogp.Codec{}
	tests := []struct {
		name string
		hex  string
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"challenge request", "ffffffff4f475000030100", codecs.KindQuery, codecs.Certain},
		{"challenge answer", "ffffffff4f47500007ff03efbe371303", codecs.KindChallenge, codecs.Certain},
		{"banned", "ffffffff4f47500003ff0100", codecs.KindDenied, codecs.Certain},
		{"v0.04 query", "ffffffff4f47500000028781830303848204", codecs.KindQuery, codecs.Certain},
		{"v0.04 challenge", "ffffffff4f4750000544332211 01", codecs.KindChallenge, codecs.Certain},
		{"v0.04 banned", "ffffffff4f4750000100", codecs.KindDenied, codecs.Certain},
		{"magic, bad header", "ffffffff4f475000ff", codecs.KindResponse, codecs.Likely},
		{"raw huffman form of zandronum", "ff 5a 00 00 00 00 00 00 00 00 00", "", codecs.NotMine},
		{"almost the magic", "ffffffff4f475001030100", "", codecs.NotMine},
		{"empty", "", "", codecs.NotMine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, conf := c.Detect(codectest.Unhex(t, tc.hex))
			if k != tc.kind || conf != tc.conf {
				t.Errorf("Detect = %q %d, want %q %d", k, conf, tc.kind, tc.conf)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	c := &ogp.Codec{}
	v004, _ := ogp.AppendRequest(nil, ogp.NewRequest(ogp.V004))
	ping, _ := ogp.AppendRequest(nil, ogp.Request{Header: ogp.Header{Type: ogp.TypePing}})
	rcon, _ := ogp.AppendRequest(nil, ogp.Request{Header: ogp.Header{Type: ogp.TypeRcon}, Raw: []byte("pw")})
	q := datagram(t, "v1_query")
	longest := ogp.NewRequest(ogp.V1)
	longest.HasChallenge, longest.HasRequestID, longest.Split = true, true, true
	longest.Challenge, longest.RequestID, longest.MaxBytesPerPacket = 0xffffffff, 0xffffffff, 1500
	max, _ := ogp.AppendRequest(nil, longest)
	if len(max) != ogp.MaxQueryLen {
		t.Fatalf("the longest query is %d bytes, MaxQueryLen %d", len(max), ogp.MaxQueryLen)
	}
	// q ends in the add-on fields' VarBitArray (0f); a client never sends
	// a continuation byte followed by nothing but zeros.
	last := len(q) - 1
	padded := append(append(append([]byte(nil), q[:last]...), q[last]|0x80), 0)
	huge := append(append(append([]byte(nil), q[:last]...), q[last]|0x80), bytes.Repeat([]byte{0x80}, 8<<10)...)
	huge = append(huge, 0)
	pingBody := append(append([]byte(nil), ping...), 1, 2, 3)
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"challenge request", datagram(t, "v1_challenge_request"), nil},
		{"1.0x query", q, nil},
		{"v0.04 query", v004, nil},
		{"ping", ping, nil},
		{"answer", datagram(t, "v1_challenge_answer"), codecs.ErrNotQuery},
		{"rcon", rcon, codecs.ErrBadValue},
		{"cut query", q[:len(q)-1], codecs.ErrShort},
		{"trailing", append(append([]byte(nil), q...), 0), codecs.ErrTrailing},
		{"not ogp", []byte("\xff\xff\xff\xffgetstatus"), codecs.ErrBadMagic},
		{"longest", max, nil},
		{"one byte more", append(max, 0), codecs.ErrTooLong},
		{"padded bit array", padded, codecs.ErrBadValue},
		{"8 KiB of continuation bytes", huge, codecs.ErrTooLong},
		{"ping with a body", pingBody, codecs.ErrTrailing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckQuery(tc.b)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("CheckQuery = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestNewQueryOptions(t *testing.T) {
	c := &ogp.Codec{}
	bad := []map[string]string{
		{"colour": "true"},
		{"version": "2"},
		{"max_bytes": "100"},
		{"max_bytes": "2000"},
		{"teams": "maybe"},
		{"utf8": "x"},
		{"challenge": "-1"},
		{"request_id": "0x1ffffffff"},
	}
	for _, opts := range bad {
		if _, err := c.NewQuery(opts); !errors.Is(err, codecs.ErrBadValue) {
			t.Errorf("NewQuery(%v) = %v, want ErrBadValue", opts, err)
		}
	}
	qy, err := c.NewQuery(map[string]string{"version": "0.04", "teams": "false", "players": "false", "addons": "false",
		"max_bytes": "600", "request_id": "7"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := ogp.DecodeRequest(qy.Start()[0])
	if err != nil {
		t.Fatal(err)
	}
	if q.Version != ogp.V004 || q.Requests.Has(ogp.Req004Teams) || q.Requests.Has(ogp.Req004Players) ||
		!q.Requests.Has(ogp.Req004Rules|ogp.Req004HostName) || !q.Split || q.MaxBytesPerPacket != 600 ||
		q.RequestID != 7 || !q.HasChallenge || q.Challenge != 0xffffffff {
		t.Errorf("v0.04 query = %+v", q)
	}
}

// feed drives qy with the given server datagrams and returns what it sent.
func feed(t *testing.T, qy codecs.Query, in ...[]byte) (sent [][]byte, done bool) {
	t.Helper()
	for _, b := range in {
		out, d, err := qy.Feed(b)
		if err != nil {
			t.Fatalf("Feed(%x): %v", b, err)
		}
		sent = append(sent, out...)
		done = d
	}
	return sent, done
}

// The vector exchange: challenge request, challenge answer, the real
// query with the number echoed byte for byte, the answer.
func TestQueryVectorExchange(t *testing.T) {
	qy, err := (&ogp.Codec{}).NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := qy.Start(); len(got) != 1 || !bytes.Equal(got[0], datagram(t, "v1_challenge_request")) {
		t.Fatalf("Start = %x", got)
	}
	if _, err := qy.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrIncomplete) {
		t.Errorf("Result before anything = %v", err)
	}
	sent, done := feed(t, qy, datagram(t, "v1_challenge_answer"))
	if m, err := qy.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrIncomplete) || m.Kind != codecs.KindChallenge {
		t.Errorf("Result after the challenge = %v, %v", m.Kind, err)
	}
	if done || len(sent) != 1 || !bytes.Equal(sent[0], datagram(t, "v1_query")) {
		t.Fatalf("after the challenge: done %v, sent %x", done, sent)
	}
	if sent, done = feed(t, qy, datagram(t, "v1_answer")); !done || len(sent) != 0 {
		t.Fatalf("after the answer: done %v, sent %x", done, sent)
	}
	m, err := qy.Result(codecs.DecodeOptions{})
	if err != nil || m.Kind != codecs.KindResponse || m.Info.Name != "My OGP Server" {
		t.Fatalf("Result = %+v, %v", m, err)
	}
	if _, _, err := qy.Feed(datagram(t, "v1_answer")); err == nil {
		t.Errorf("Feed after done: no error")
	}
}

func TestQuerySplitResponse(t *testing.T) {
	p := readPacket(t, filepath.Join("testdata", "v1_split_answer.hex"))
	qy, _ := (&ogp.Codec{}).NewQuery(map[string]string{"challenge": "16909060", "request_id": "77", "max_bytes": "500"})
	var done bool
	for i, d := range p.datagrams {
		var err error
		_, done, err = qy.Feed(d)
		if err != nil || done != (i == len(p.datagrams)-1) {
			t.Fatalf("part %d: done %v, %v", i, done, err)
		}
		if i == 1 { // a duplicate changes nothing
			if _, done, err = qy.Feed(d); err != nil || done {
				t.Fatalf("duplicate: done %v, %v", done, err)
			}
		}
	}
	m, err := qy.Result(codecs.DecodeOptions{Spans: true})
	if err != nil || m.Info.Name != "Zoë's ☃ server" || len(m.Layers) != len(p.datagrams)+1 {
		t.Fatalf("Result: %v, %d layers", err, len(m.Layers))
	}
}

func TestQueryIgnores(t *testing.T) {
	qy, _ := (&ogp.Codec{}).NewQuery(map[string]string{"request_id": "5"})
	for name, b := range map[string][]byte{
		"garbage": []byte("hello"),
		"a query": datagram(t, "v1_query"),
	} {
		if sent, done, err := qy.Feed(b); err == nil || done || len(sent) != 0 {
			t.Errorf("%s: sent %x, done %v, err %v", name, sent, done, err)
		}
	}
	// Another request id is accepted: a relay's cache shares answers.
	banned, _ := ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Type: ogp.TypeError, HasRequestID: true, RequestID: 6}, ErrorID: ogp.ErrorBanned})
	if _, done := feed(t, qy, banned); !done {
		t.Fatal("banned answer does not end the conversation")
	}
	if m, err := qy.Result(codecs.DecodeOptions{}); err != nil || m.Kind != codecs.KindDenied || m.Denied != codecs.DeniedBanned {
		t.Errorf("Result = %+v, %v", m, err)
	}
}

// A server that answers every query with a new challenge cannot keep the
// conversation going forever.
func TestQueryChallengeLoop(t *testing.T) {
	qy, _ := (&ogp.Codec{}).NewQuery(nil)
	ch := datagram(t, "v1_challenge_answer")
	n := 0
	for ; n < 10; n++ {
		_, done, err := qy.Feed(ch)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	if n != 3 {
		t.Errorf("answered %d challenges, want 3", n)
	}
	if m, err := qy.Result(codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrIncomplete) || m.Kind != codecs.KindChallenge {
		t.Errorf("Result = %v, %v", m.Kind, err)
	}
}

func TestQueryV004(t *testing.T) {
	qy, _ := (&ogp.Codec{}).NewQuery(map[string]string{"version": "0.04"})
	first, err := ogp.DecodeRequest(qy.Start()[0])
	if err != nil || first.Version != ogp.V004 || first.Challenge != 0xffffffff {
		t.Fatalf("first = %+v, %v", first, err)
	}
	sent, _ := feed(t, qy, datagram(t, "v004_challenge"))
	q, err := ogp.DecodeRequest(sent[0])
	if err != nil || q.Challenge != 0x11223344 {
		t.Fatalf("second = %+v, %v", q, err)
	}
	p := readPacket(t, filepath.Join("testdata", "v004_split_answer.hex"))
	if _, done := feed(t, qy, p.datagrams...); !done {
		t.Fatal("not done")
	}
	if m, err := qy.Result(codecs.DecodeOptions{}); err != nil || m.Info.Name != "Café de_dust" {
		t.Errorf("Result: %v", err)
	}
}

// TestQueryV004AmbiguousChallenge: a v0.04 challenge answer whose number
// starts with a 00 byte also reads as a well-formed 1.0x query, and
// detection takes it for one; the conversation asked in v0.04 reads it in
// v0.04 and echoes the number (the demo's OGP 0.04 server went unanswered
// for the epochs whose number looked so).
func TestQueryV004AmbiguousChallenge(t *testing.T) {
	for _, number := range []uint32{0xca18f000, 0x0100_0000, 0x11223300} {
		h := ogp.Header{Version: ogp.V004, Type: ogp.TypePing, HasChallenge: true, Challenge: number}
		b, err := ogp.AppendResponse(nil, ogp.Response{Header: h})
		if err != nil {
			t.Fatal(err)
		}
		qy, _ := (&ogp.Codec{}).NewQuery(map[string]string{"version": "0.04"})
		sent, done, err := qy.Feed(b)
		if err != nil || done || len(sent) != 1 {
			t.Fatalf("%08x: Feed(% x) = %d datagrams, %v, %v", number, b, len(sent), done, err)
		}
		if err := (&ogp.Codec{}).CheckQuery(sent[0]); err != nil {
			t.Errorf("%08x: the relay refuses the follow-up: %v", number, err)
		}
		if key := (&ogp.Codec{}).QueryKey(sent[0]); !bytes.Equal(key, sent[0]) {
			t.Errorf("%08x: QueryKey = % x, want the query itself", number, key)
		}
		q, err := ogp.DecodeRequestAs(sent[0], ogp.V004)
		if err != nil || q.Version != ogp.V004 || q.Challenge != number {
			t.Errorf("%08x: the follow-up %+v, %v", number, q, err)
		}
		if m, err := qy.Result(codecs.DecodeOptions{}); m.Kind != codecs.KindChallenge || !errors.Is(err, codecs.ErrIncomplete) {
			t.Errorf("%08x: Result = %s, %v", number, m.Kind, err)
		}
	}
}

// TestEmptyValues: a string the server sends empty is "" in the neutral
// view; a field it leaves out is missing from it.
func TestEmptyValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(a *ogp.Response)
		want string // info without players, teams and rules
	}{
		{"host name and map sent empty", func(a *ogp.Response) {
			a.Server.HostName, a.Server.HostNameColors, a.Server.Map.Name = []byte{}, nil, []byte{}
		}, `{"name":"","map":"","game_type":"Freeroam","version":"2.1"}`},
		{"game type sent empty, game mode not", func(a *ogp.Response) {
			a.Server.GameType = []byte{}
			a.Server.Fields &^= ogp.InfoGameMode
		}, `{"name":"Zoë's ☃ server","map":"Island","game_type":"","version":"2.1"}`},
		{"game type empty, game mode sent", func(a *ogp.Response) { a.Server.GameType = []byte{} },
			`{"name":"Zoë's ☃ server","map":"Island","game_type":"RP","version":"2.1"}`},
		{"both empty", func(a *ogp.Response) { a.Server.GameType, a.Server.GameMode = []byte{}, []byte{} },
			`{"name":"Zoë's ☃ server","map":"Island","game_type":"","version":"2.1"}`},
		{"mod version sent empty", func(a *ogp.Response) { a.Server.ModVersion = []byte{} },
			`{"name":"Zoë's ☃ server","map":"Island","game_type":"Freeroam","version":""}`},
		{"neither sent", func(a *ogp.Response) {
			a.Server.Fields &^= ogp.InfoGameType | ogp.InfoGameMode | ogp.InfoHostName | ogp.InfoMap
		},
			`{"version":"2.1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := full()
			a.Requests &^= ogp.ReqTeams | ogp.ReqPlayers | ogp.ReqRules
			a.Server.Fields &^= ogp.InfoServerFlags | ogp.InfoPlayerCount | ogp.InfoSlotMax
			tc.edit(&a)
			b, err := ogp.AppendResponse(nil, a)
			if err != nil {
				t.Fatal(err)
			}
			m, err := (&ogp.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(codecs.AppendJSON(nil, m.Object()[2].Value)); got != tc.want {
				t.Errorf("info\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
