package ase_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ase"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex; each file's
// first line says what it exercises: MTA's and Far Cry's shapes, every
// flag combination, unknown flag bits, numbers that are not, the hostile
// lengths and a missing end of the rules) and a few more hostile ones.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})                                                // nothing
	f.Add([]byte("EYE1"))                                          // the magic alone
	f.Add(codectest.Unhex(f, "45594531 ff"))                       // a length of 255 with nothing after it
	f.Add(codectest.Unhex(f, "45594531 010101010101010101 01 ff")) // empty strings, then a player with every bit set and no fields
}

// FuzzDecodeResponse: never panics; an error is a *codecs.Error inside
// the datagram; a reply that decodes encodes back to the same bytes
// (Decode → Append is the identity: the strings are kept as sent), and
// decoding that gives the same Response.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ase.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			if len(r.Players) > len(b) || len(r.Rules) > len(b)/2 {
				t.Fatalf("%d players and %d rules from %d bytes", len(r.Players), len(r.Rules), len(b))
			}
			return
		}
		enc, err := ase.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded reply: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("re-encoded\n %x\nfrom\n %x", enc, b)
		}
		r2, err := ase.DecodeResponse(enc, nil)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs (%v):\n %+v\n %+v", err, r, r2)
		}
	})
}

// FuzzDecodeRequest: the one query decodes, nothing else, and CheckQuery
// agrees.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ase.DecodeRequest(b)
		if (err == nil) != (string(b) == "s") {
			t.Fatalf("DecodeRequest(%q) = %v", b, err)
		}
		if (err == nil) != ((&ase.Codec{}).CheckQuery(b) == nil) {
			t.Fatalf("CheckQuery and DecodeRequest disagree on %q", b)
		}
	})
}

// FuzzCodec drives the registered codec the way the CLI and the browser
// do: Detect, Decode with spans, JSON and the dump. Spans stay inside the
// datagram; a Certain detection decodes.
func FuzzCodec(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, conf := (&ase.Codec{}).Detect(b)
		m, err := (&ase.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
		if m == nil {
			t.Fatal("nil message")
		}
		if conf == codecs.Certain && (err != nil || m.Kind != kind) {
			t.Fatalf("Detect says %s (certain) but Decode = %s, %v", kind, m.Kind, err)
		}
		if kind == codecs.KindResponse && (conf == codecs.Certain) != (err == nil) {
			t.Fatalf("Detect says %d, Decode %v", conf, err)
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
			codectest.SpansTile(t, m, 0)
		}
		codecs.AppendDump(nil, m)
		codecs.AppendSummaryJSON(nil, m, err)
	})
}
