package mumble_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/mumble"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex: GameDig's
// ping, answers well-formed, cut, with stray bytes and a bad version) and a
// few shapes of the right sizes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})
	f.Add(make([]byte, mumble.RequestLen))  // an all-zero ping
	f.Add(make([]byte, mumble.ResponseLen)) // an all-zero answer: version 0.0.0
}

// FuzzDecodeResponse: never panics; an answer that decodes re-encodes to
// its first 24 bytes and decodes to the same Response.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := mumble.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		enc := mumble.AppendResponse(nil, r)
		if !bytes.Equal(enc, b[:mumble.ResponseLen]) {
			t.Fatalf("round trip differs:\n %x\n %x", b, enc)
		}
		if r2, err := mumble.DecodeResponse(enc, nil); err != nil || r2 != r {
			t.Fatalf("re-decode: %+v, %v; want %+v", r2, err, r)
		}
	})
}

// FuzzDecodeRequest: a ping that decodes is written back byte for byte,
// and CheckQuery accepts exactly what decodes.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := mumble.DecodeRequest(b)
		checkErr := (&mumble.Codec{}).CheckQuery(b)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("DecodeRequest %v, CheckQuery %v", err, checkErr)
		}
		if err != nil {
			return
		}
		if enc, _ := mumble.AppendRequest(nil, q); !bytes.Equal(enc, b) {
			t.Fatalf("round trip differs:\n %x\n %x", b, enc)
		}
	})
}

// FuzzDecode: the codec's Decode never panics, returns a message with any
// error, and a message that decodes is covered by its spans.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := (&mumble.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
		if m == nil {
			t.Fatal("nil message")
		}
		if err == nil {
			codectest.SpansCover(t, m)
		}
	})
}
