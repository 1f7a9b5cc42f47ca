package quake3_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/quake3"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex; each file's
// first line says what it exercises: the queries of qstat, ioquake3 and
// DarkPlaces, the status replies of ioquake3, Xonotic, Warsow and Call of
// Duty 4, master lists whose entries look like markers) and a few hostile
// shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})
	f.Add([]byte("\xff\xff\xff\xffstatusResponse\n\\"))             // a key with nothing after it
	f.Add([]byte("\xff\xff\xff\xffstatusResponse\n\n-\n"))          // a sign without digits
	f.Add([]byte("\xff\xff\xff\xffgetserversExtResponse/\x00\x01")) // an IPv6 entry cut short
	f.Add(codectest.Unhex(f, "ffffffff 67657473657276657273526573706f6e7365 5c454f54"))
}

// FuzzDecodeResponse: never panics; a reply that decodes re-encodes, and
// decoding that again gives the same Response (Decode → Append → Decode).
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := quake3.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		enc, err := quake3.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded reply: %v", err)
		}
		r2, err := quake3.DecodeResponse(enc, nil)
		if err != nil {
			t.Fatalf("re-decode: %v\n%q", err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
		}
		if enc2, _ := quake3.AppendResponse(nil, r2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzDecodeRequest: a query that decodes is written back byte for byte,
// and what CheckQuery accepts always decodes.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := quake3.DecodeRequest(b)
		checkErr := (&quake3.Codec{}).CheckQuery(b)
		if err != nil {
			if checkErr == nil {
				t.Fatalf("CheckQuery accepts what DecodeRequest refuses: %v", err)
			}
			return
		}
		if checkErr != nil && len(b) <= quake3.MaxQueryLen {
			t.Fatalf("CheckQuery refuses a query that decodes: %v", checkErr)
		}
		enc, err := quake3.AppendRequest(nil, q)
		if err != nil {
			t.Fatalf("AppendRequest of a decoded query: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("round trip differs:\n %q\n %q", b, enc)
		}
	})
}

// FuzzDecode: the codec's Decode never panics, returns a message with any
// error, and a message that decodes is covered by its spans.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := (&quake3.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
		if m == nil {
			t.Fatal("nil message")
		}
		if err == nil {
			codectest.SpansCover(t, m)
		}
	})
}
