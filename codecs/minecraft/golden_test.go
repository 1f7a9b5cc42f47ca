package minecraft_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/minecraft"
)

// golden is one testdata/*.hex message (codectest.Message).
type golden = codectest.Message

func goldens(t testing.TB) []golden { return codectest.ReadMessages(t, "testdata/*.hex") }

func readGolden(t testing.TB, path string) golden { return codectest.ReadMessage(t, path) }

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
		t.Run(g.Name, func(t *testing.T) {
			c := codecOf(g.Name)
			m, err := c.Decode(g.Datagrams, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.Source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := c.Decode(g.Datagrams, codecs.DecodeOptions{})
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
			codectest.Golden(t, filepath.Join("testdata", g.Name+".golden"), out)
			if strings.HasPrefix(g.Name, "bad-") {
				if err == nil && len(plain.Warnings) == 0 {
					t.Errorf("%s decodes without an error or a warning", g.Name)
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
		t.Run(g.Name, func(t *testing.T) {
			whole := []byte{}
			for _, d := range g.Datagrams {
				whole = append(whole, d...)
			}
			c := codecOf(g.Name)
			codectest.Prefixes(t, whole, func(p []byte) error {
				m, err := c.Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				if err == nil && !strings.HasPrefix(g.Name, "query-legacy") {
					t.Errorf("prefix %d of %d decodes", len(p), len(whole))
				}
				return err
			}, nil)
		})
	}
}
