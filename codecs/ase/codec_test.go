package ase_test

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ase"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(ase.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "ase" || c.Title() != "All-Seeing Eye" || c.DefaultPort() != 22126 || len(c.Options()) != 0 {
		t.Errorf("codec = %q %q %d %v", c.Name(), c.Title(), c.DefaultPort(), c.Options())
	}
	d := codecs.DescriptionOf(c)
	if d.Join != "" || !d.AllPlayers || d.Ports[0] != 22126 || d.Ports[1] != 49124 {
		t.Errorf("description = %+v", d)
	}
}

func TestDetect(t *testing.T) {
	mta := packet(t, "mta")
	for _, tc := range []struct {
		name string
		b    []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"query", []byte("s"), codecs.KindQuery, codecs.Likely},
		{"reply", mta, codecs.KindResponse, codecs.Certain},
		{"cut reply", mta[:40], codecs.KindResponse, codecs.Likely},
		{"zero length", packet(t, "bad-zero-length"), codecs.KindResponse, codecs.Likely},
		{"EYE2", packet(t, "bad-magic"), "", codecs.NotMine},
		{"two bytes", []byte("ss"), "", codecs.NotMine},
		{"empty", nil, "", codecs.NotMine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, conf := (&ase.Codec{}).Detect(tc.b)
			if kind != tc.kind || conf != tc.conf {
				t.Errorf("Detect = %q %d, want %q %d", kind, conf, tc.kind, tc.conf)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	if err := (&ase.Codec{}).CheckQuery([]byte("s")); err != nil {
		t.Errorf("CheckQuery(s) = %v", err)
	}
	for _, tc := range []struct {
		b        string
		sentinel error
	}{{"", codecs.ErrShort}, {"ss", codecs.ErrTooLong}, {"b", codecs.ErrNotQuery}, {"EYE1", codecs.ErrTooLong}} {
		if err := (&ase.Codec{}).CheckQuery([]byte(tc.b)); !errors.Is(err, tc.sentinel) {
			t.Errorf("CheckQuery(%q) = %v, want %v", tc.b, err, tc.sentinel)
		}
	}
	if _, err := ase.DecodeRequest([]byte("sx")); !errors.Is(err, codecs.ErrTrailing) {
		t.Errorf("DecodeRequest(sx) = %v", err)
	}
	if b, _ := ase.AppendRequest(nil, ase.Request{}); string(b) != "s" {
		t.Errorf("AppendRequest = %q", b)
	}
}

// TestDecodeResponseErrors: each hostile length names its field and the
// offset of its length byte, and keeps what came before.
func TestDecodeResponseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		sentinel    error
		offset      int
	}{
		{"bad-zero-length", "map", codecs.ErrBadValue, 22},
		{"bad-long-length", "players[0].name", codecs.ErrShort, 34},
		{"no-rules-end", "rules_end", codecs.ErrShort, 36},
		{"bad-magic", "magic", codecs.ErrBadMagic, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ase.DecodeResponse(packet(t, tc.name), nil)
			codectest.WantError(t, err, tc.sentinel, tc.field, tc.offset)
			if tc.name == "no-rules-end" && (len(r.Rules) != 1 || r.MaxPlayers != "8") {
				t.Errorf("partial reply %+v", r)
			}
		})
	}
}

// TestAbsentNotZero: a field whose flag bit is off is absent from the
// fields object (no key), while one sent empty is there as ""; the
// neutral view shows no team for both, and 0 for a missing score.
func TestAbsentNotZero(t *testing.T) {
	m, err := (&ase.Codec{}).Decode([][]byte{packet(t, "flags")}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := m.Fields.Get("players")
	p1 := ps.([]codecs.Object)[1] // flags 0x01: the name only
	if _, ok := p1.Get("score"); ok {
		t.Errorf("player 1 has a score: %v", p1)
	}
	if v, ok := p1.Get("name"); !ok || v != "p01" {
		t.Errorf("player 1 name = %v %v", v, ok)
	}
	mta, _ := (&ase.Codec{}).Decode([][]byte{packet(t, "mta")}, codecs.DecodeOptions{})
	ps, _ = mta.Fields.Get("players")
	if v, ok := ps.([]codecs.Object)[0].Get("team"); !ok || v != "" {
		t.Errorf("MTA's empty team = %v %v; want present and empty", v, ok)
	}
	if p := mta.Info.Players[0]; p.HasTeam || p.Score != 12 || p.Ping != 48 {
		t.Errorf("neutral player %+v", p)
	}
	fc, _ := (&ase.Codec{}).Decode([][]byte{packet(t, "farcry")}, codecs.DecodeOptions{})
	if in := fc.Info; len(in.Teams) != 2 || in.Teams[1].Name != "blue" || in.Players[1].Team != 1 || !in.Players[1].HasTeam ||
		in.Name != "Café Jungle" || in.Players[0].Name != "Jérôme" || !in.Password {
		t.Errorf("Far Cry's neutral view %+v", in)
	}
}

func TestAppendResponseErrors(t *testing.T) {
	long := string(make([]byte, 255))
	for _, tc := range []struct {
		name  string
		r     ase.Response
		field string
	}{
		{"long name", ase.Response{Name: long}, "hostname"},
		{"empty key", ase.Response{Rules: []ase.Rule{{Key: "", Value: "x"}}}, "rules[0].key"},
		{"text with its bit off", ase.Response{Players: []ase.Player{{Flags: ase.FlagName, Score: "3"}}}, "players[0].score"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ase.AppendResponse(nil, tc.r)
			codectest.WantError(t, err, nil, tc.field, -1)
		})
	}
	if b, err := ase.AppendResponse(nil, ase.Response{Name: long[:254]}); err != nil || b[6] != 255 {
		t.Errorf("254 bytes: %v", err)
	}
}

func TestQuery(t *testing.T) {
	if _, err := (&ase.Codec{}).NewQuery(map[string]string{"x": "1"}); err == nil {
		t.Error("NewQuery takes an unknown option")
	}
	q, err := (&ase.Codec{}).NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Start(); len(s) != 1 || string(s[0]) != "s" {
		t.Fatalf("Start = %q", s)
	}
	if _, done, err := q.Feed([]byte("EYE2...")); done || err == nil {
		t.Errorf("Feed(EYE2) = %v, %v", done, err)
	}
	if _, done, err := q.Feed(packet(t, "mta")); !done || err != nil {
		t.Fatalf("Feed(reply) = %v, %v", done, err)
	}
	if _, _, err := q.Feed(packet(t, "mta")); err == nil {
		t.Error("a second reply is taken")
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.Name != "querylens MTA:SA demo" || len(m.Info.Players) != 3 {
		t.Errorf("Result = %+v, %v", m, err)
	}
}

func TestFlagsString(t *testing.T) {
	for f, want := range map[ase.Flags]string{0: "", 0x3f: "name team skin score ping time", 0x19: "name score ping", 0xc1: "name 0xc0"} {
		if got := f.String(); got != want {
			t.Errorf("Flags(%#x) = %q, want %q", uint8(f), got, want)
		}
	}
}

func TestEmptyValues(t *testing.T) {
	m, err := (&ase.Codec{}).Decode([][]byte{[]byte("EYE1\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01")}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(codecs.AppendJSON(nil, m.Object()[2].Value))
	want := `{"name":"","map":"","game_type":"","version":"","password":false,"players":[],"rules":[["gamename",""],["hostport",""]]}`
	if got != want {
		t.Errorf("info\n got %s\nwant %s", got, want)
	}
}

// TestDetectAllocs: Detect does not allocate (it walks the reply without
// decoding it).
func TestDetectAllocs(t *testing.T) {
	b := packet(t, "flags")
	if n := testing.AllocsPerRun(20, func() { (&ase.Codec{}).Detect(b) }); n != 0 {
		t.Errorf("Detect: %v allocations", n)
	}
}

// TestDecodeAllocs: a decode without spans or fields allocates about one
// object per string, not per byte.
func TestDecodeAllocs(t *testing.T) {
	b := packet(t, "flags")
	n := testing.AllocsPerRun(20, func() { _, _ = (&ase.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{NoFields: true}) })
	if n > 60 {
		t.Errorf("%v allocations for %d bytes", n, len(b))
	}
}
