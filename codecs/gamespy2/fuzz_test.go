package gamespy2

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// seeds returns every datagram of testdata/*.hex whose kind matches: the
// vectors' replies (full, gamedig, empty), index mode, one-byte counts, the
// 1400-byte cut, Latin-1 text and a reply cut inside a string.
func seeds(f *testing.F, queries bool) {
	files, _ := filepath.Glob("testdata/*.hex")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			d, err := hex.DecodeString(line)
			if err != nil {
				f.Fatalf("%s: %v", name, err)
			}
			if isQuery(d) == queries {
				f.Add(d)
			}
		}
	}
}

// FuzzDecodeResponse: never panics, errors are *codecs.Error inside the
// input, spans do not change the result, and a complete reply survives
// Decode → AppendResponse → Decode.
func FuzzDecodeResponse(f *testing.F) {
	seeds(f, false)
	f.Fuzz(func(t *testing.T, b []byte) {
		var full Request
		if len(b) >= headerLen {
			full = FullRequest([4]byte(b[1:headerLen]))
		}
		for _, req := range []*Request{nil, &full} {
			r, err := DecodeResponse(b, req)
			var spans []codecs.Span
			r2, err2 := decodeResponse(b, req, &spans, 0)
			if (err == nil) != (err2 == nil) {
				t.Fatalf("spans change the error: %v / %v", err, err2)
			}
			if err != nil {
				if e := codectest.WantError(t, err, nil, "", -1); e.Offset > len(b) {
					t.Fatalf("error offset %d beyond %d bytes", e.Offset, len(b))
				}
				continue
			}
			equal(t, "with spans", r, r2)
			for _, s := range spans {
				if s.Start < 0 || s.End > len(b) || s.Start > s.End {
					t.Fatalf("span %+v outside %d bytes", s, len(b))
				}
			}
			if r.Truncated || r.Trailing > 0 || len(b) > MaxReply {
				continue // AppendResponse would cut a longer reply, as the SDK does
			}
			q := SectionRequest(r.ID, r.Sections)
			out, err := AppendResponse(nil, r, q)
			if err != nil {
				t.Fatalf("AppendResponse: %v", err)
			}
			if !bytes.Equal(out, b) {
				t.Fatalf("re-encoded\n%x\nfrom\n%x", out, b)
			}
			back, err := DecodeResponse(out, &q)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "round trip", normal(r), normal(back))
		}
	})
}

// FuzzDecodeRequest: never panics, errors are *codecs.Error inside the
// input, and a request that decodes encodes to the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	seeds(f, true)
	f.Add([]byte{0xfe, 0xfd, 0x00, 1, 2, 3, 4, 2, 1, 5, 0, 1, 28, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := DecodeRequest(b)
		if err != nil {
			if e := codectest.WantError(t, err, nil, "", -1); e.Offset > len(b) {
				t.Fatalf("error offset %d beyond %d bytes", e.Offset, len(b))
			}
			return
		}
		out, err := AppendRequest(nil, q)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("AppendRequest = %x, %v; want %x", out, err, b)
		}
	})
}
