package bloodmasters_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// addSeeds seeds f with every golden packet (testdata/*.hex; each file's
// first line says what it exercises: the published vectors, protocols 26 to
// 30, long and colour-coded strings, several messages in one datagram, a
// reliable reply, trailing and cut bytes) and a few hostile lengths.
func addSeeds(f *testing.F) {
	for _, g := range goldens(f) {
		f.Add(g.b)
	}
	f.Add([]byte{})                                                                          // nothing
	f.Add(codectest.Unhex(f, "0000 0d"))                                                     // length 0
	f.Add(codectest.Unhex(f, "ffff 0d 00000000 ffffffff0f"))                                 // title length past int32
	f.Add(codectest.Unhex(f, "1600 0d 00000000 00 00 00 10 0a 00 00 ff 00 1d 0000 0000 00")) // 255 clients promised, none sent
}

// FuzzDecodeResponse: never panics; a reply that decodes re-encodes, and
// decoding that again gives the same Response (Decode → Append → Decode).
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := bloodmasters.DecodeResponse(b, nil)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("err = %v", err)
			}
			if cap(r.Clients) > len(b)/5 {
				t.Fatalf("reserved %d client records for %d bytes", cap(r.Clients), len(b))
			}
			return
		}
		enc, err := bloodmasters.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("AppendResponse of a decoded reply: %v", err)
		}
		r2, err := bloodmasters.DecodeResponse(enc, nil)
		if err != nil {
			t.Fatalf("re-decode: %v\n%x", err, enc)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs:\n %+v\n %+v", r, r2)
		}
		if enc2, _ := bloodmasters.AppendResponse(nil, r2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzDecodeRequest: a request that decodes is exactly AppendRequest of its token.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := bloodmasters.DecodeRequest(b)
		if err != nil {
			if (&bloodmasters.Codec{}).CheckQuery(b) == nil {
				t.Fatal("CheckQuery accepts what DecodeRequest refuses")
			}
			return
		}
		if !bytes.Equal(request(req.Token), b) {
			t.Fatalf("request %x does not re-encode", b)
		}
	})
}

// FuzzCodec drives the registered codec the way the CLI and the browser do:
// Detect, Decode with spans, JSON and the dump. Spans stay inside the
// datagram; a Certain detection decodes.
func FuzzCodec(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, conf := (&bloodmasters.Codec{}).Detect(b)
		m, err := (&bloodmasters.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
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

// FuzzParser: the messages a datagram splits into rebuild it byte for byte
// up to the first bad frame.
func FuzzParser(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var p bloodmasters.Parser
		p.Start(b)
		var out []byte
		for {
			m, err := p.Next()
			if err == bloodmasters.ErrDone {
				break
			}
			if err != nil {
				var e *codecs.Error
				if !errors.As(err, &e) || e.Offset < len(out) || e.Offset > len(b) {
					t.Fatalf("err = %v after %d good bytes", err, len(out))
				}
				break
			}
			if m.Offset != len(out) {
				t.Fatalf("message at %d, want %d", m.Offset, len(out))
			}
			if out, err = bloodmasters.AppendMessage(out, m); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out, b[:len(out)]) {
			t.Fatalf("rebuilt %x from %x", out, b)
		}
	})
}
