package samp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/samp"
)

type golden struct {
	name, source string
	b            []byte
}

func goldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden packets: %v", err)
	}
	gs := make([]golden, 0, len(paths))
	for _, p := range paths {
		b, source := codectest.ReadHex(t, p)
		gs = append(gs, golden{name: strings.TrimSuffix(filepath.Base(p), ".hex"), source: source, b: b})
	}
	return gs
}

// codecOf is the codec a datagram's magic belongs to.
func codecOf(b []byte) *samp.Codec {
	if len(b) >= 4 && (string(b[:4]) == samp.MagicVCMP || string(b[:4]) == samp.MagicVCMPReply) {
		return &samp.Codec{VCMP: true}
	}
	return &samp.Codec{}
}

// TestGolden decodes every testdata/*.hex datagram with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of a datagram that decodes tile it.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			c := codecOf(g.b)
			m, err := c.Decode([][]byte{g.b}, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := c.Decode([][]byte{g.b}, codecs.DecodeOptions{})
			if (err == nil) != (err2 == nil) {
				t.Fatalf("spans change the outcome: %v / %v", err, err2)
			}
			out = append(out, "json: "...)
			if err != nil {
				out = codecs.AppendJSON(out, codecs.ErrorObject(err, plain))
			} else {
				out = plain.AppendJSON(out)
			}
			out = append(out, '\n')
			codectest.Golden(t, filepath.Join("testdata", g.name+".golden"), out)
			if strings.HasPrefix(g.name, "bad-") {
				if err == nil {
					t.Errorf("%s decodes without error", g.name)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			codectest.SpansTile(t, m, 0)
		})
	}
}

// TestTruncated decodes every prefix of every golden datagram: none
// panics, and each error is a *codecs.Error at or before the cut. Every
// field is fixed or counted, so no cut reply decodes, except where the
// cut falls exactly after a list's last entry the count allowed
// (trailing.hex) or leaves the 11-byte header of a query.
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			codectest.Prefixes(t, g.b, func(p []byte) error {
				m, err := codecOf(p).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				if err == nil && len(p) != samp.HeaderLen && !strings.HasPrefix(g.name, "trailing") {
					t.Errorf("prefix %d decodes", len(p))
				}
				return err
			}, nil)
		})
	}
}
