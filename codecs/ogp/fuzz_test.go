package ogp_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

// seed adds every datagram of testdata/*.hex (each file's first line says
// what it is: the spec vectors of both versions and the encoder-built
// packets covering every field), and each split answer reassembled.
func seed(f *testing.F) {
	for _, p := range readPackets(f) {
		for _, d := range p.datagrams {
			f.Add(d)
		}
		if len(p.datagrams) > 1 {
			if joined, err := ogp.Reassemble(nil, p.datagrams); err == nil {
				f.Add(joined)
			}
		}
	}
	f.Add([]byte{})                                                      // nothing
	f.Add([]byte("\xff\xff\xff\xffOGP\x00"))                             // the magic alone
	f.Add([]byte("\xff\xff\xff\xffOGP\x00\x03\x01\x01\x00\x00\x02\xff")) // a team count cut short
}

// checkErr checks a decoding error is a *codecs.Error inside the input.
func checkErr(t *testing.T, err error, n int) {
	t.Helper()
	var e *codecs.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *codecs.Error", err, err)
	}
	if e.Offset < 0 || e.Offset > n || e.Protocol != "ogp" {
		t.Fatalf("error %v: offset outside the %d bytes", err, n)
	}
}

// FuzzDecodeResponse: no panic; errors are located; what decodes encodes
// and decodes again to the same answer (Decode → Append → Decode).
func FuzzDecodeResponse(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ogp.DecodeResponse(b, nil)
		if err != nil {
			checkErr(t, err, len(b))
			if !errors.Is(err, codecs.ErrTrailing) {
				return
			}
		}
		out, err := ogp.AppendResponse(nil, a)
		if err != nil {
			t.Fatalf("decoded answer does not encode: %v\n%+v", err, a)
		}
		if fieldless(a) {
			// Such a list may hold as many entries as bytes follow it;
			// encoding shorter (no trailing bytes, shortest integers)
			// can leave fewer.
			return
		}
		a2, err := ogp.DecodeResponse(out, nil)
		if a2.Version != a.Version {
			// The two forms overlap: the shorter re-encoding (no trailing
			// bytes, shortest integers) may read better in the other.
			return
		}
		if err != nil {
			t.Fatalf("re-encoded answer %x does not decode: %v", out, err)
		}
		if !reflect.DeepEqual(normalize(a), normalize(a2)) {
			t.Fatalf("round trip changed the answer:\n%+v\n%+v", a, a2)
		}
	})
}

// FuzzDecodeRequest: the same for queries.
func FuzzDecodeRequest(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ogp.DecodeRequest(b)
		if err != nil {
			checkErr(t, err, len(b))
			if !errors.Is(err, codecs.ErrTrailing) {
				return
			}
		}
		out, err := ogp.AppendRequest(nil, q)
		if err != nil {
			t.Fatalf("decoded request does not encode: %v\n%+v", err, q)
		}
		q2, err := ogp.DecodeRequest(out)
		if q2.Version != q.Version {
			return // the forms overlap, as in FuzzDecodeResponse
		}
		if err != nil {
			t.Fatalf("re-encoded request %x does not decode: %v", out, err)
		}
		if !reflect.DeepEqual(normalize(q), normalize(q2)) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", q, q2)
		}
	})
}

// FuzzCodec cuts the input into up to three datagrams and runs everything
// the registry offers on them: no panic, located errors, spans inside
// their layers, JSON that builds.
func FuzzCodec(f *testing.F) {
	for _, p := range readPackets(f) {
		if len(p.datagrams) >= 2 {
			f.Add(append(append([]byte(nil), p.datagrams[0]...), p.datagrams[1]...), uint16(len(p.datagrams[0])), uint16(0))
		}
		f.Add(p.datagrams[0], uint16(0), uint16(0))
	}
	c, err := codecs.Lookup("ogp")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, cut1, cut2 uint16) {
		dgs := [][]byte{b}
		if c1 := int(cut1); c1 > 0 && c1 < len(b) {
			dgs = [][]byte{b[:c1], b[c1:]}
			if c2 := int(cut2); c2 > c1 && c2 < len(b) {
				dgs = [][]byte{b[:c1], b[c1:c2], b[c2:]}
			}
		}
		c.Detect(b)
		c.CheckQuery(b)
		for _, spans := range []bool{false, true} {
			m, err := c.Decode(dgs, codecs.DecodeOptions{Spans: spans})
			if m == nil {
				t.Fatal("nil message")
			}
			if err != nil {
				var e *codecs.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v (%T) is not a *codecs.Error", err, err)
				}
				codecs.AppendJSON(nil, codecs.ErrorObject(err, m))
			} else {
				m.AppendJSON(nil)
			}
			for _, s := range m.Spans {
				if s.Layer < 0 || s.Layer >= len(m.Layers) || s.Start < 0 || s.Start > s.End || s.End > len(m.Layers[s.Layer].Bytes) {
					t.Fatalf("span %+v outside its layer", s)
				}
			}
		}
		qy, _ := c.NewQuery(nil)
		qy.Start()
		for _, d := range dgs {
			qy.Feed(d)
		}
		qy.Result(codecs.DecodeOptions{})
	})
}

// fieldless reports whether a has a list of entries that carry no field.
func fieldless(a ogp.Response) bool {
	teams := ogp.TeamName | ogp.TeamScore | ogp.TeamAveragePing | ogp.TeamAverageLoss | ogp.TeamPlayerCount
	players := ogp.PlayerFlags | ogp.PlayerSlot | ogp.PlayerName | ogp.PlayerTeam | ogp.PlayerClass | ogp.PlayerRace |
		ogp.PlayerScore | ogp.PlayerFrags | ogp.PlayerKills | ogp.PlayerDeath | ogp.PlayerSuicides | ogp.PlayerTeamKills |
		ogp.PlayerID | ogp.PlayerGlobalID | ogp.PlayerPing | ogp.PlayerLoss | ogp.PlayerModel | ogp.PlayerTime
	if a.Version == ogp.V1 {
		teams |= ogp.TeamColor
		players |= ogp.PlayerAddress
	}
	addOns := ogp.AddOnFlags | ogp.AddOnShortName | ogp.AddOnLongName | ogp.AddOnVersion
	return len(a.Teams) > 0 && a.TeamFields&teams == 0 || len(a.Players) > 0 && a.PlayerFields&players == 0 ||
		len(a.AddOns) > 0 && a.AddOnFields&addOns == 0
}
