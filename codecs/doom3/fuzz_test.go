package doom3_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/doom3"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// addSeeds seeds f with every golden packet (testdata/*.hex; each file's
// first line says what it exercises: each game's layout, ETQW's TV tail,
// trailing bytes, the demo's hostile replies, GameDig's query) and a few
// hostile shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})                                                                            // nothing
	f.Add(codectest.Unhex(f, "ffff 696e666f526573706f6e736500 00000000 29000100 0000 20"))     // no os mask
	f.Add(codectest.Unhex(f, "ffff 696e666f526573706f6e736500 00000000 29000100 0000 21"))     // a player id past the last
	f.Add(codectest.Unhex(f, "ffff 696e666f526573706f6e736500 00000000 00000000 14000a00 01")) // ETQW's version, a size cut short
}

// FuzzDecodeResponse: never panics; a reply that decodes re-encodes to
// the same bytes in its game's layout, and decodes again to the same
// Response (Decode → Append → Decode).
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := doom3.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		enc, err := doom3.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded reply: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("re-encoded differently:\n%x\n%x", b, enc)
		}
		r2, err := doom3.DecodeGame(enc, r.Game)
		if err != nil {
			t.Fatalf("re-decode: %v\n%x", err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
		}
	})
}

// FuzzDecodeRequest: a request that decodes re-encodes to its bytes, and
// CheckQuery agrees with DecodeRequest on what is short enough.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := doom3.DecodeRequest(b)
		if err != nil {
			if (&doom3.Codec{}).CheckQuery(b) == nil {
				t.Fatal("CheckQuery accepts what DecodeRequest refuses")
			}
			return
		}
		enc, err := doom3.AppendRequest(nil, q)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("request %x re-encodes as %x, %v", b, enc, err)
		}
	})
}

// FuzzCodec drives the registered codec the way the CLI and the browser
// do: Detect, Decode with spans, JSON and the dump. Spans stay inside the
// datagram; a Certain detection decodes.
func FuzzCodec(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, conf := (&doom3.Codec{}).Detect(b)
		m, err := (&doom3.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
		if m == nil {
			t.Fatal("nil message")
		}
		if conf == codecs.Certain && (err != nil || m.Kind != kind) {
			t.Fatalf("Detect says %s (certain) but Decode = %s, %v", kind, m.Kind, err)
		}
		for _, s := range m.Spans {
			if s.Layer != 0 || s.Start < 0 || s.End < s.Start || s.End > len(b) {
				t.Fatalf("span out of bounds: %+v (%d bytes)", s, len(b))
			}
		}
		if err != nil {
			codecs.AppendJSON(nil, codecs.ErrorObject(err, m))
		} else {
			m.AppendJSON(nil)
		}
		codecs.AppendDump(nil, m)
	})
}
