package quake2_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/quake2"
)

// golden is one testdata/*.hex datagram, the comment on its first line
// (where it came from) and its dialect, named by the file's prefix: q2-,
// qw- or hw- (after bad- for the ones that must not decode).
type golden struct {
	name, source string
	d            quake2.Dialect
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
		name := strings.TrimSuffix(filepath.Base(p), ".hex")
		var d quake2.Dialect
		switch strings.TrimPrefix(name, "bad-")[:3] {
		case "q2-":
			d = quake2.Quake2
		case "qw-":
			d = quake2.QuakeWorld
		case "hw-":
			d = quake2.Hexen2
		default:
			t.Fatalf("%s: name it q2-, qw- or hw-", p)
		}
		gs = append(gs, golden{name: name, source: source, d: d, b: b})
	}
	return gs
}

// TestGolden decodes every testdata/*.hex datagram with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of a datagram that decodes tile it.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			c := &quake2.Codec{Dialect: g.d}
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
// panics, and each error is a *codecs.Error at or before the cut. A cut
// query or master list may still decode (shorter); a status reply cut
// before its serverinfo's newline may not.
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			codectest.Prefixes(t, g.b, func(p []byte) error {
				m, err := (&quake2.Codec{Dialect: g.d}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				if len(p) < 2 && err == nil {
					t.Errorf("prefix %d decodes", len(p))
				}
				return err
			}, nil)
		})
	}
}
