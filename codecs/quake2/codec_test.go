package quake2_test

import (
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/quake2"
)

// TestRegistered: importing the package registers the three dialects,
// each under its own name and with its own description.
func TestRegistered(t *testing.T) {
	for _, d := range dialects {
		c, err := codecs.Lookup(d.Protocol())
		if err != nil {
			t.Fatal(err)
		}
		if c.(*quake2.Codec).Dialect != d {
			t.Errorf("%s is registered as dialect %d", d.Protocol(), c.(*quake2.Codec).Dialect)
		}
		desc := codecs.DescriptionOf(c)
		if !desc.AllPlayers || (desc.Master != nil) == (d == quake2.Hexen2) {
			t.Errorf("%s: description %+v", d.Protocol(), desc)
		}
	}
	if d, _ := codecs.LookupDescription(quake2.ProtocolQuakeWorld); d.Join != "qw://{addr}" || d.Master.Default == "" {
		t.Errorf("QuakeWorld's description: %+v", d)
	}
}

// TestDetect: every golden datagram is detected as its own dialect's,
// with the kind its decode gives, and the registry picks a codec of this
// package for it (the status query, which Quake II and QuakeWorld share,
// goes to Quake II).
func TestDetect(t *testing.T) {
	for _, g := range goldens(t) {
		if strings.HasPrefix(g.name, "bad-") {
			continue
		}
		c := &quake2.Codec{Dialect: g.d}
		kind, conf := c.Detect(g.b)
		m, _ := c.Decode([][]byte{g.b}, codecs.DecodeOptions{})
		if conf == codecs.NotMine || kind != m.Kind {
			t.Errorf("%s: Detect = %q %d, decoded as %q", g.name, kind, conf, m.Kind)
		}
		got, _, err := codecs.Detect(g.b)
		if err != nil || !strings.HasPrefix(got.Name(), "quake") && got.Name() != quake2.ProtocolHexen2 {
			t.Errorf("%s: the registry detects %v, %v", g.name, got, err)
		}
	}
	if k, conf := (&quake2.Codec{Dialect: quake2.Quake2}).Detect([]byte("\xff\xff\xff\xffn\\a\\b\n")); conf != codecs.NotMine {
		t.Errorf("Quake II claims a QuakeWorld reply: %q %d", k, conf)
	}
}

// TestReadable: the high bit is dropped, the glyphs below 0x20 read as
// their look-alikes.
func TestReadable(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                          "plain",
		"\u00d3\u00e8\u00e1\u00e6\u00f4": "Shaft",
		"\x10bot\x11":                    "[bot]",
		"\u0090\u0093\u0092\u0091":       "[10]",
		"\x1d\x1e\x1e\x1f":               "<-->",
		"  a\nb\u007f ":                  "a b_",
		"\u0100x":                        "?x",
	} {
		if got := quake2.Readable(in); got != want {
			t.Errorf("Readable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQuery runs each dialect's conversation against an encoded reply.
func TestQuery(t *testing.T) {
	for _, tc := range []struct {
		d      quake2.Dialect
		opts   map[string]string
		query  string
		golden string
	}{
		{quake2.Quake2, nil, "\xff\xff\xff\xffstatus\n", "q2-print"},
		{quake2.QuakeWorld, nil, "\xff\xff\xff\xffstatus\n", "qw-n"},
		{quake2.Hexen2, nil, "\xff\xff\xff\xff\xffstatus\n", "hw-n"},
		{quake2.QuakeWorld, map[string]string{"master": "true"}, "c\n", "qw-master-list"},
		{quake2.Quake2, map[string]string{"master": "true"}, "query\n\x00", "q2-master-list"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c := &quake2.Codec{Dialect: tc.d}
			q, err := c.NewQuery(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if s := q.Start(); len(s) != 1 || string(s[0]) != tc.query {
				t.Fatalf("Start = %q, want %q", s, tc.query)
			}
			if err := c.CheckQuery([]byte(tc.query)); err != nil {
				t.Errorf("CheckQuery of our own query: %v", err)
			}
			other := "hw-n"
			if tc.d == quake2.Hexen2 {
				other = "qw-n"
			}
			if _, done, err := q.Feed(packet(t, other)); done || err == nil {
				t.Errorf("Feed(another dialect's reply) = %v, %v", done, err)
			}
			if _, done, err := q.Feed(packet(t, tc.golden)); !done || err != nil {
				t.Fatalf("Feed = %v, %v", done, err)
			}
			m, err := q.Result(codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.opts != nil {
				if m.Kind != codecs.KindMasterList || len(m.Servers) == 0 {
					t.Errorf("list %+v", m)
				}
			} else if m.Info == nil || m.Info.Name == "" || len(m.Info.Players) < 2 {
				t.Errorf("info %+v", m.Info)
			}
		})
	}
	if _, err := (&quake2.Codec{Dialect: quake2.Hexen2}).NewQuery(map[string]string{"master": "true"}); err == nil {
		t.Error("HexenWorld takes a master option")
	}
}

// TestErrors: what a broken reply reports, field and offset.
func TestErrors(t *testing.T) {
	_, err := quake2.DecodeResponse(packet(t, "bad-q2-noline"), quake2.Quake2, nil)
	codectest.WantError(t, err, codecs.ErrShort, "players[0].name", 41)
	_, err = quake2.DecodeResponse([]byte("\xff\xff\xff\xffprint\n\\a\\b\nx"), quake2.Quake2, nil)
	codectest.WantError(t, err, codecs.ErrBadValue, "players[0].score", 15)
	_, err = quake2.DecodeResponse([]byte("\xff\xff\xff\xffn\\a\\b\n\x00x"), quake2.QuakeWorld, nil)
	codectest.WantError(t, err, codecs.ErrTrailing, "trailing", 11)
	_, err = quake2.DecodeResponse(packet(t, "qw-n"), quake2.Quake2, nil)
	codectest.WantError(t, err, codecs.ErrUnknownCode, "header", 4)
	req := quake2.Request{Dialect: quake2.QuakeWorld, Command: quake2.CmdQWList}
	_, err = quake2.DecodeResponse(packet(t, "qw-n"), quake2.QuakeWorld, &req)
	codectest.WantError(t, err, codecs.ErrUnknownCode, "header", 4)
	_, err = quake2.DecodeRequest([]byte("\xff\xff\xff\xffstatus  "), quake2.Quake2)
	codectest.WantError(t, err, codecs.ErrBadValue, "flags", 10)
}

// packet is the datagram of testdata/name.hex.
func packet(t testing.TB, name string) []byte {
	t.Helper()
	b, _ := codectest.ReadHex(t, "testdata/"+name+".hex")
	return b
}
