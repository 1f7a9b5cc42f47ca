package quake2_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/quake2"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex; each file's
// first line says what it exercises: the queries of qstat and GameDig, the
// status replies of Quake II, QuakeWorld and HexenWorld, master lists) and
// a few hostile shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})
	f.Add([]byte("\xff\xff\xff\xffprint\n\\"))                    // a key with nothing after it
	f.Add([]byte("\xff\xff\xff\xffprint\n\n-\n"))                 // a sign without digits
	f.Add([]byte("\xff\xff\xff\xffn\\a\\b\n1 2 3 4 \"x\" \"y\"")) // cut before the colours
	f.Add(codectest.Unhex(f, "ffffffff 64 0a c0 00 02"))          // an entry cut short
}

var dialects = [...]quake2.Dialect{quake2.Quake2, quake2.QuakeWorld, quake2.Hexen2}

// FuzzDecodeResponse: never panics; a reply that decodes re-encodes, and
// decoding that again gives the same Response (Decode → Append → Decode),
// in every dialect.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range dialects {
			r, err := quake2.DecodeResponse(b, d, nil)
			if err != nil {
				var e *codecs.Error
				if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) || e.Protocol != d.Protocol() {
					t.Fatalf("err = %v", err)
				}
				continue
			}
			enc, err := quake2.AppendResponse(nil, r)
			if err != nil {
				t.Fatalf("AppendResponse of a decoded reply: %v", err)
			}
			r2, err := quake2.DecodeResponse(enc, d, nil)
			if err != nil {
				t.Fatalf("re-decode: %v\n%q", err, enc)
			}
			if !reflect.DeepEqual(r, r2) {
				t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
			}
			if enc2, _ := quake2.AppendResponse(nil, r2); !bytes.Equal(enc, enc2) {
				t.Fatalf("encoding is not stable")
			}
		}
	})
}

// FuzzDecodeRequest: a query that decodes is written back byte for byte,
// and what CheckQuery accepts always decodes.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range dialects {
			q, err := quake2.DecodeRequest(b, d)
			checkErr := (&quake2.Codec{Dialect: d}).CheckQuery(b)
			if err != nil {
				if checkErr == nil {
					t.Fatalf("CheckQuery accepts what DecodeRequest refuses: %v", err)
				}
				continue
			}
			if checkErr != nil && len(b) <= quake2.MaxQueryLen {
				t.Fatalf("CheckQuery refuses a query that decodes: %v", checkErr)
			}
			enc, err := quake2.AppendRequest(nil, q)
			if err != nil {
				t.Fatalf("AppendRequest of a decoded query: %v", err)
			}
			if !bytes.Equal(enc, b) {
				t.Fatalf("round trip differs:\n %q\n %q", b, enc)
			}
		}
	})
}

// FuzzDecode: the codecs' Decode never panics, returns a message with any
// error, and a message that decodes is covered by its spans.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range dialects {
			m, err := (&quake2.Codec{Dialect: d}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
			if m == nil {
				t.Fatal("nil message")
			}
			if err == nil {
				codectest.SpansCover(t, m)
			}
		}
	})
}
