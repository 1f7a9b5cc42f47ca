package gamespy1_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// golden is one testdata/*.hex message (codectest.Message).
type golden = codectest.Message

func goldens(t testing.TB) []golden { return codectest.ReadMessages(t, "testdata/*.hex") }

func readGolden(t testing.TB, path string) golden { return codectest.ReadMessage(t, path) }

// datagrams returns the datagrams of testdata/name.hex.
func datagrams(t testing.TB, name string) [][]byte {
	t.Helper()
	return readGolden(t, "testdata/"+name+".hex").Datagrams
}

// TestGolden decodes every testdata/*.hex message with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of every datagram that decodes tile it.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.Name, func(t *testing.T) {
			c := &gamespy1.Codec{}
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
				if err == nil {
					t.Errorf("%s decodes without error", g.Name)
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
		t.Run(g.Name, func(t *testing.T) {
			for k, d := range g.Datagrams {
				codectest.Prefixes(t, d, func(p []byte) error {
					m, err := (&gamespy1.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
					if m == nil {
						t.Fatalf("prefix %d: nil message", len(p))
					}
					if len(p) < 2 && err == nil {
						t.Errorf("prefix %d decodes", len(p))
					}
					if err == nil && m.Kind == codecs.KindResponse {
						codectest.SpansCover(t, m)
					}
					set := append([][]byte(nil), g.Datagrams...)
					set[k] = p
					if m, _ := (&gamespy1.Codec{}).Decode(set, codecs.DecodeOptions{Spans: true}); m == nil {
						t.Fatalf("prefix %d among the others: nil message", len(p))
					}
					return err
				}, nil)
			}
		})
	}
}
