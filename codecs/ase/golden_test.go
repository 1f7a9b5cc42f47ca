package ase_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ase"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// golden is one testdata/*.hex datagram and the comment on its first line,
// which says where it came from.
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

// packet is the datagram of testdata/name.hex.
func packet(t testing.TB, name string) []byte {
	t.Helper()
	b, _ := codectest.ReadHex(t, "testdata/"+name+".hex")
	return b
}

// TestGolden decodes every testdata/*.hex datagram with spans and compares
// the annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). A datagram that decodes is tiled by its spans.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			m, err := (&ase.Codec{}).Decode([][]byte{g.b}, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := (&ase.Codec{}).Decode([][]byte{g.b}, codecs.DecodeOptions{})
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
			if err == nil {
				codectest.SpansTile(t, m, 0)
			}
		})
	}
}

// ends are the prefix lengths of b that are whole replies: the end of the
// rules' end marker and of each player entry (the list runs to the
// datagram's end, so a reply cut between two players is a shorter reply).
func ends(b []byte) []int {
	m, err := (&ase.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
	var out []int
	for _, s := range m.Spans {
		if s.Field == "rules_end" || s.Kind == "group" {
			out = append(out, s.End)
		}
	}
	if err != nil && len(out) > 0 && strings.HasPrefix(m.Spans[len(m.Spans)-1].Field, "players[") {
		out = out[:len(out)-1] // the player that fails
	}
	return out
}

// TestTruncated decodes every prefix of every golden datagram: each fails
// with a *codecs.Error at or before its end, with a partial message,
// unless it ends where a whole reply may (after the rules or a player).
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			whole := ends(g.b)
			codectest.Prefixes(t, g.b, func(p []byte) error {
				m, err := (&ase.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				if g.name == "query" {
					return err
				}
				_, rerr := ase.DecodeResponse(p, nil)
				if (err == nil) != (rerr == nil) {
					t.Errorf("prefix %d: Decode %v, DecodeResponse %v", len(p), err, rerr)
				}
				if ok := slices.Contains(whole, len(p)); ok != (err == nil) {
					t.Errorf("prefix %d: a whole reply %v, error %v", len(p), ok, err)
				}
				return err
			}, nil)
		})
	}
}
