package samp_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/samp"
)

// addSeeds seeds f with every golden datagram (testdata/*.hex: GameDig's
// queries, the info, rules and player replies of SA-MP, open.mp and VC:MP,
// Windows-1252 text, lying lengths and counts, RCON) and a few shapes.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})
	f.Add([]byte("SAMP\x00\x00\x00\x00\x00\x00r\xff\xff"))            // a rules count of 65535 and nothing after it
	f.Add([]byte("MP04\x00\x00\x00\x00\x00\x00i04rel006"))            // VC:MP's version cut short
	f.Add([]byte("SAMP\x00\x00\x00\x00\x00\x00d\x01\x00\x05\xffabc")) // a name longer than the rest
}

// FuzzDecodeResponse: never panics; a reply that decodes re-encodes, and
// decoding that again gives the same Response (Decode → Append → Decode),
// in every charset.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, cs := range []samp.Charset{samp.Windows1252, samp.Windows1251} {
			r, err := samp.DecodeResponseCharset(b, nil, cs)
			if err != nil {
				var e *codecs.Error
				if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			enc, err := samp.AppendResponse(nil, r)
			if err != nil {
				t.Fatalf("AppendResponse of a decoded reply: %v", err)
			}
			r2, err := samp.DecodeResponseCharset(enc, nil, cs)
			if err != nil {
				t.Fatalf("re-decode: %v\n%x", err, enc)
			}
			if !reflect.DeepEqual(r, r2) {
				t.Fatalf("round trip differs (%v):\n %+v\n %+v", cs, r, r2)
			}
		}
	})
}

// FuzzDecodeRequest: a query that decodes is written back byte for byte,
// and CheckQuery of the codec of its magic accepts exactly what decodes.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := samp.DecodeRequest(b)
		checkErr := codecOf(b).CheckQuery(b)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("DecodeRequest %v, CheckQuery %v", err, checkErr)
		}
		if err != nil {
			return
		}
		if len(b) != samp.HeaderLen && len(b) != samp.PingLen {
			t.Fatalf("a %d-byte query passes", len(b))
		}
		enc, err := samp.AppendRequest(nil, q)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("round trip differs (%v):\n %x\n %x", err, b, enc)
		}
	})
}

// FuzzDecode: both codecs' Decode never panics, returns a message with
// any error, and a message that decodes is covered by its spans.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []*samp.Codec{{}, {VCMP: true}} {
			m, err := c.Decode([][]byte{b, b}, codecs.DecodeOptions{Spans: true})
			if m == nil {
				t.Fatal("nil message")
			}
			if err == nil {
				codectest.SpansCover(t, m)
			}
		}
	})
}
