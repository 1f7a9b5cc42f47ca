package minecraft_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/minecraft"
)

// golden is one testdata/*.hex file: the messages of one reply (or the
// chunks of its stream) in order, and the comment on its first line,
// which says where they came from.
type golden struct {
	name, source string
	datagrams    [][]byte
}

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

// codecOf is the codec a golden file is for: bedrock-* are Bedrock's.
func codecOf(name string) codecs.Codec {
	if strings.HasPrefix(name, "bedrock") {
		return &minecraft.BedrockCodec{}
	}
	return &minecraft.Codec{}
}

// TestGolden decodes every testdata/*.hex message with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of the wire layer tile it.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			c := codecOf(g.name)
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
				if err == nil && len(plain.Warnings) == 0 {
					t.Errorf("%s decodes without an error or a warning", g.name)
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

// TestTruncated decodes every prefix of every golden message: none
// panics, and each error is a *codecs.Error at or before the cut.
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			whole := []byte{}
			for _, d := range g.datagrams {
				whole = append(whole, d...)
			}
			c := codecOf(g.name)
			codectest.Prefixes(t, whole, func(p []byte) error {
				m, err := c.Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				if err == nil && !strings.HasPrefix(g.name, "query-legacy") {
					t.Errorf("prefix %d of %d decodes", len(p), len(whole))
				}
				return err
			}, nil)
		})
	}
}
