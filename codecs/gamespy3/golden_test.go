package gamespy3_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy3"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// golden is one testdata/*.hex conversation (one datagram a line, in
// wire order) and the comment on its first line, which says where it
// came from.
type golden struct {
	name, source string
	dgs          [][]byte
}

func goldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden packets: %v", err)
	}
	gs := make([]golden, 0, len(paths))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(raw), "\n")
		gs = append(gs, golden{
			name:   strings.TrimSuffix(filepath.Base(p), ".hex"),
			source: strings.TrimSpace(strings.TrimPrefix(first, "#")),
			dgs:    codectest.ReadHexLines(t, p),
		})
	}
	return gs
}

// conversation returns the datagrams of testdata/name.hex.
func conversation(t testing.TB, name string) [][]byte {
	t.Helper()
	return codectest.ReadHexLines(t, "testdata/"+name+".hex")
}

// TestGolden decodes every conversation with spans and compares the
// annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). The spans of each datagram of a conversation that
// decodes tile it; a "bad-" conversation must fail.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			c := &gamespy3.Codec{}
			m, err := c.Decode(g.dgs, codecs.DecodeOptions{Spans: true})
			plain, err2 := c.Decode(g.dgs, codecs.DecodeOptions{})
			if (err == nil) != (err2 == nil) {
				t.Fatalf("spans change the outcome: %v / %v", err, err2)
			}
			out := []byte("# " + g.source + "\n")
			out = codecs.AppendDump(out, m)
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

// TestTruncated decodes every prefix of every golden datagram: none
// panics, each error is a *codecs.Error at or before the cut, every
// prefix of a query fails, and a stat packet cut after its header
// decodes only flagged truncated (or, cut between two strings, as a
// shorter packet).
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			for _, d := range g.dgs {
				query := len(d) > 1 && d[0] == gamespy3.Magic0 && d[1] == gamespy3.Magic1
				codectest.Prefixes(t, d, func(p []byte) error {
					if query {
						q, err := gamespy3.DecodeRequest(p)
						// A padded challenge request cut after its
						// session id is the bare one.
						if err == nil && (q.Type != gamespy3.TypeChallenge || len(p) != 7) {
							t.Errorf("query prefix %d decodes", len(p))
						}
						return err
					}
					r, err := gamespy3.DecodeResponse(p, nil)
					if len(p) < 6 && err == nil && !r.Truncated {
						t.Errorf("reply prefix %d decodes", len(p))
					}
					m, err2 := (&gamespy3.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
					if m == nil {
						t.Fatalf("prefix %d: nil message", len(p))
					}
					if err2 == nil {
						codectest.SpansCover(t, m)
					}
					return err
				}, nil)
			}
		})
	}
}
