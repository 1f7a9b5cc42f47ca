package unreal2_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/unreal2"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex; each
// file's first line says what it exercises: the three queries, a UT2004
// conversation with colour codes, UCS-2 and team rows, a UT2003 info, a
// Killing Floor capture, cut and bad datagrams) and a few hostile shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		for _, d := range g.Datagrams {
			f.Add(d)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x80, 0, 0, 0, 1, 0xff, 0x01})                      // a UCS-2 key of 127 units, cut
	f.Add([]byte{0x80, 0, 0, 0, 1, 0x85, 0x1b, 0, 1, 0, 2, 0, 3, 0}) // a colour code in UCS-2, unterminated
	f.Add([]byte{0x80, 0, 0, 0, 2, 1, 0, 0, 0, 0x82, 0x00, 0xd8, 0x00, 0xdc})
}

// FuzzDecodeResponse: never panics; a datagram that decodes re-encodes,
// decoding that again gives the same Response (Decode → Append → Decode),
// and the encoding is stable.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := unreal2.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		enc, err := unreal2.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded datagram: %v", err)
		}
		r2, err := unreal2.DecodeResponse(enc, nil)
		if err != nil {
			t.Fatalf("re-decode: %v\n%x", err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
		}
		if enc2, _ := unreal2.AppendResponse(nil, r2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzDecodeRequest: a query that decodes is written back byte for byte,
// and CheckQuery agrees with DecodeRequest.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := unreal2.DecodeRequest(b)
		checkErr := (&unreal2.Codec{}).CheckQuery(b)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("DecodeRequest %v, CheckQuery %v", err, checkErr)
		}
		if err != nil {
			return
		}
		enc, err := unreal2.AppendRequest(nil, q)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("round trip: %x, %v; want %x", enc, err, b)
		}
	})
}

// FuzzDecode: the codec's Decode never panics, returns a message with any
// error, and a reply that decodes is covered by its spans; the datagram
// twice and split in two decode too.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &unreal2.Codec{}
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
