package unreal2_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/unreal2"
)

// TestRegistered: the codec is in the registry under its name.
func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(unreal2.Protocol)
	if err != nil || c.Title() != "Unreal Engine 2" {
		t.Fatalf("Lookup = %v, %v", c, err)
	}
}

// TestConversation: the queries go rules, players, info; the conversation
// is complete when the info has come after a rules datagram and the
// players it counts, and not before.
func TestConversation(t *testing.T) {
	ds := datagrams(t, "ut2004") // rules, rules, players, players, info
	q, err := (&unreal2.Codec{}).NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	start := q.Start()
	if len(start) != 3 || start[0][4] != unreal2.TypeRules || start[1][4] != unreal2.TypePlayers || start[2][4] != unreal2.TypeInfo {
		t.Fatalf("Start = %x", start)
	}
	for i, d := range ds {
		_, done, err := q.Feed(d)
		if err != nil || done != (i == len(ds)-1) {
			t.Fatalf("datagram %d: done %v, %v", i, done, err)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Info
	if in.Name != "RedBlue CTF" || in.NumPlayers != 3 || len(in.Players) != 3 || len(in.Teams) != 2 || in.Version != "3369" || in.Password || in.Has&codecs.HasPassword == 0 {
		t.Errorf("info %+v", in)
	}
	if p := in.Players[1]; p.Name != "Łukasz ☃" || p.Score != -3 || p.Team != 1 || !p.HasTeam {
		t.Errorf("UCS-2 player %+v", p)
	}
	if p := in.Players[2]; !p.Bot {
		t.Errorf("a player with ping 0 is a bot: %+v", p)
	}

	// The info before the second players datagram (reordered): not done
	// until the players it counts have come.
	q, _ = (&unreal2.Codec{}).NewQuery(nil)
	for i, d := range [][]byte{ds[0], ds[2], ds[4], ds[3]} {
		if _, done, err := q.Feed(d); err != nil || done != (i == 3) {
			t.Fatalf("reordered %d: done %v, %v", i, done, err)
		}
	}

	// Without rules and players: the info alone completes it; a rules
	// datagram is not asked.
	q, _ = (&unreal2.Codec{}).NewQuery(map[string]string{"rules": "false", "players": "false"})
	if len(q.Start()) != 1 {
		t.Fatalf("Start = %x", q.Start())
	}
	if _, _, err := q.Feed(ds[0]); err == nil {
		t.Error("a rules datagram not asked is taken")
	}
	if _, done, err := q.Feed(ds[4]); !done || err != nil {
		t.Errorf("info: done %v, %v", done, err)
	}
}

// TestKillingFloor: the Killing Floor capture reads in its dialect when
// its rules come with it (GameDig's test), and by its shape alone it is
// not Killing Floor's.
func TestKillingFloor(t *testing.T) {
	m, err := (&unreal2.Codec{}).Decode(datagrams(t, "kf-cuzus"), codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := m.Fields.Get("info")
	if d, _ := info.(codecs.Object).Get("dialect"); d != "killingfloor" {
		t.Errorf("dialect %v", d)
	}
	if m.Info.Name != "WWW.CUZUS.ORG - BOSS RAGE - V1065" || m.Info.Version != "1065" {
		t.Errorf("info %+v", m.Info)
	}
	resp, err := unreal2.DecodeResponse(datagrams(t, "kf-cuzus-info")[0], nil)
	if err != nil || resp.Info.Dialect != unreal2.DialectUT2004 || len(resp.Info.Extra) == 0 {
		t.Errorf("alone: %v %+v", err, resp.Info)
	}
}

// TestDetect: queries are Certain, replies Likely, others not ours.
func TestDetect(t *testing.T) {
	c := &unreal2.Codec{}
	for _, tc := range []struct {
		name string
		b    []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"query", datagrams(t, "query-players")[0], codecs.KindQuery, codecs.Certain},
		{"info", datagrams(t, "ut2004")[4], codecs.KindResponse, codecs.Likely},
		{"empty players", datagrams(t, "players-empty")[0], codecs.KindResponse, codecs.Likely},
		{"bad length", datagrams(t, "bad-length")[0], "", codecs.NotMine},
		{"a2s", []byte("\xff\xff\xff\xffTSource Engine Query\x00"), "", codecs.NotMine},
	} {
		if k, conf := c.Detect(tc.b); k != tc.kind || conf != tc.conf {
			t.Errorf("%s: %q %d", tc.name, k, conf)
		}
	}
}

// TestBadLength: a string longer than the bytes that follow names its
// field and offset.
func TestBadLength(t *testing.T) {
	_, err := (&unreal2.Codec{}).Decode(datagrams(t, "bad-length"), codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrShort, "players[2].name", -1)
}

// TestStringRoundTrip: colour codes and UCS-2 come back where they were.
func TestStringRoundTrip(t *testing.T) {
	for _, s := range []unreal2.String{
		unreal2.Text("\x1b\xff\x01\x01Red\x1b\x01\x01\xffBlue"),
		{Value: "日本", UCS2: true},
		{Value: "😀 x", UCS2: true, Colours: []unreal2.Colour{{At: 4, R: 1, G: 2, B: 3}}},
		{Value: "no nul", NoNUL: true},
	} {
		b, err := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypeRules, Rules: []unreal2.Rule{{Key: s, Value: s}}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := unreal2.DecodeResponse(b, nil)
		if err != nil || len(r.Rules) != 1 || r.Rules[0].Key.Value != s.Value || len(r.Rules[0].Key.Colours) != len(s.Colours) {
			t.Errorf("%+v: %+v, %v", s, r.Rules, err)
		}
	}
	if _, err := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypeRules, Rules: []unreal2.Rule{{Key: unreal2.String{Value: "日本"}}}}); err == nil {
		t.Error("a Latin-1 string takes Japanese")
	}
}
