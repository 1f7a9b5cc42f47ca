package unreal2_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/unreal2"
)

// golden is one testdata/*.hex file: the datagrams of one message in the
// order they arrived, and the comment on its first line, which says where
// they came from.
type golden struct {
	name, source string
	datagrams    [][]byte
}

// datagramMark separates the datagrams of a file that holds several.
const datagramMark = "# datagram"

func goldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden packets: %v", err)
	}
	gs := make([]golden, 0, len(paths))
	for _, p := range paths {
		gs = append(gs, readGolden(t, p))
	}
	return gs
}

func readGolden(t testing.TB, path string) golden {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := golden{name: strings.TrimSuffix(filepath.Base(path), ".hex")}
	first, rest, _ := strings.Cut(string(raw), "\n")
	g.source = strings.TrimSpace(strings.TrimPrefix(first, "#"))
	for _, chunk := range strings.Split(rest, datagramMark+"\n") {
		if b := codectest.Unhex(t, chunk); len(b) > 0 {
			g.datagrams = append(g.datagrams, b)
		}
	}
	return g
}

// datagrams returns the datagrams of testdata/name.hex.
func datagrams(t testing.TB, name string) [][]byte {
	t.Helper()
	return readGolden(t, "testdata/"+name+".hex").datagrams
}

// TestGolden decodes every testdata/*.hex message with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of every datagram that decodes tile it.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			c := &unreal2.Codec{}
			m, err := c.Decode(g.datagrams, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := c.Decode(g.datagrams, codecs.DecodeOptions{})
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
			for i := range m.Layers {
				codectest.SpansTile(t, m, i)
			}
		})
	}
}

// TestTruncated decodes every prefix of every golden datagram, alone and
// in place of itself among the others of its message: none panics, and
// each error is a *codecs.Error at or before the cut.
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			for k, d := range g.datagrams {
				codectest.Prefixes(t, d, func(p []byte) error {
					m, err := (&unreal2.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
					if m == nil {
						t.Fatalf("prefix %d: nil message", len(p))
					}
					if len(p) < 2 && err == nil {
						t.Errorf("prefix %d decodes", len(p))
					}
					if err == nil && m.Kind == codecs.KindResponse {
						codectest.SpansCover(t, m)
					}
					set := append([][]byte(nil), g.datagrams...)
					set[k] = p
					if m, _ := (&unreal2.Codec{}).Decode(set, codecs.DecodeOptions{Spans: true}); m == nil {
						t.Fatalf("prefix %d among the others: nil message", len(p))
					}
					return err
				}, nil)
			}
		})
	}
}
