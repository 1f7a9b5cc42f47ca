package gamespy1_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex; each file's
// first line says what it exercises: the queries of qstat, GameDig and
// gswatcher, the status replies of UT99 436 and 451, Battlefield 1942 and
// Medal of Honor, cut and bad datagrams) and a few hostile shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		for _, d := range g.Datagrams {
			f.Add(d)
		}
	}
	f.Add([]byte{})
	f.Add([]byte(`\`))                        // a lone backslash
	f.Add([]byte(`\\\\`))                     // empty keys
	f.Add([]byte(`\final\\final\`))           // two finals
	f.Add([]byte(`\queryid\.\final\`))        // a queryid without digits
	f.Add([]byte(`\player_99999999999\x\`))   // a huge player index
	f.Add([]byte(`\status\xserverquery\\x\`)) // a word that is not one
}

// FuzzDecodeResponse: never panics; a datagram that decodes re-encodes,
// decoding that again gives the same Response (Decode → Append → Decode),
// and the encoding is stable.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := gamespy1.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		enc, err := gamespy1.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded datagram: %v", err)
		}
		r2, err := gamespy1.DecodeResponse(enc, nil)
		if err != nil {
			t.Fatalf("re-decode: %v\n%q", err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
		}
		if enc2, _ := gamespy1.AppendResponse(nil, r2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzDecodeRequest: a query that decodes is written back byte for byte,
// CheckQuery agrees with DecodeRequest, and QueryKey is set exactly for
// queries.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &gamespy1.Codec{}
		q, err := gamespy1.DecodeRequest(b)
		checkErr := c.CheckQuery(b)
		if err != nil {
			if checkErr == nil {
				t.Fatalf("CheckQuery accepts what DecodeRequest refuses: %v", err)
			}
			if c.QueryKey(b) != nil {
				t.Fatal("a key for what is not a query")
			}
			return
		}
		if checkErr != nil && len(b) <= gamespy1.MaxQueryLen {
			t.Fatalf("CheckQuery refuses a query that decodes: %v", checkErr)
		}
		enc, err := gamespy1.AppendRequest(nil, q)
		if err != nil {
			t.Fatalf("AppendRequest of a decoded query: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("round trip differs:\n %q\n %q", b, enc)
		}
		if len(c.QueryKey(b)) == 0 {
			t.Fatal("no key for a query")
		}
	})
}

// FuzzDecode: the codec's Decode never panics, returns a message with any
// error, and a reply that decodes is covered by its spans; the datagram
// twice and split in two decode too.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &gamespy1.Codec{}
		m, err := c.Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
		if m == nil {
			t.Fatal("nil message")
		}
		if err == nil {
			codectest.SpansCover(t, m)
		}
		h := len(b) / 2
		for _, ds := range [][][]byte{{b, b}, {b[h:], b[:h]}} {
			if m, _ := c.Decode(ds, codecs.DecodeOptions{Spans: true}); m == nil {
				t.Fatal("nil message")
			}
		}
	})
}
