package gamespy3_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy3"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex; each
// file's first line says what it exercises: the queries of GameSpy v3, v4
// and Minecraft, challenge replies, split packets out of order with a
// field continued, Battlefield 2's empty field name before the teams,
// stray UT3 tokens, a cut packet) and a few hostile shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		for _, d := range g.dgs {
			f.Add(d)
		}
	}
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x00\x01splitnum\x00\x7f\x00"))              // packet number 127
	f.Add([]byte("\x00\x00\x00\x00\x01splitnum\x00\x81\x00\x01x\x00\xff")) // a field at offset 255, cut
	f.Add([]byte("\x00\x00\x00\x00\x01k\x00p1\x00p2\x00\x00\x00"))         // strays, then an empty value
	f.Add([]byte("\x09\x00\x00\x00\x014294967295\x00"))                    // the largest challenge
}

// FuzzDecodeResponse: never panics, errors are *codecs.Error inside the
// input, spans do not change the result, and a packet that is not cut
// short survives Decode → AppendResponse → Decode.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := gamespy3.DecodeResponse(b, nil)
		if err != nil {
			if e := codectest.WantError(t, err, nil, "", -1); e.Offset > len(b) {
				t.Fatalf("error offset %d beyond %d bytes", e.Offset, len(b))
			}
			return
		}
		if r.Truncated {
			return
		}
		enc, err := gamespy3.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded packet: %v", err)
		}
		r2, err := gamespy3.DecodeResponse(enc, nil)
		if err != nil {
			t.Fatalf("re-decode: %v\n%x", err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
		}
		if enc2, _ := gamespy3.AppendResponse(nil, r2); !bytes.Equal(enc, enc2) {
			t.Fatal("encoding is not stable")
		}
	})
}

// FuzzDecodeRequest: a query that decodes is written back byte for byte,
// and CheckQuery accepts exactly what decodes.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := gamespy3.DecodeRequest(b)
		checkErr := (&gamespy3.Codec{}).CheckQuery(b)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("DecodeRequest %v, CheckQuery %v", err, checkErr)
		}
		if err != nil {
			if e := codectest.WantError(t, err, nil, "", -1); e.Offset > len(b) {
				t.Fatalf("error offset %d beyond %d bytes", e.Offset, len(b))
			}
			return
		}
		enc, err := gamespy3.AppendRequest(nil, q)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("AppendRequest = %x, %v; want %x", enc, err, b)
		}
	})
}

// FuzzDecode: the codec's Decode of one datagram, or of the input cut in
// three, never panics, returns a message with any error, and a message
// that decodes is covered by its spans.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		n := len(b) / 3
		for _, dgs := range [][][]byte{{b}, {b[:n], b[n : 2*n], b[2*n:]}} {
			m, err := (&gamespy3.Codec{}).Decode(dgs, codecs.DecodeOptions{Spans: true})
			if m == nil {
				t.Fatal("nil message")
			}
			if err == nil {
				codectest.SpansCover(t, m)
			}
		}
	})
}
