package doom3_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/doom3"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// golden is one testdata/*.hex packet: the datagram and the comment on its
// first line, which says where it came from.
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

// broken are the golden packets that do not decode, and the field at fault.
var broken = map[string]string{
	"endless":   "players[3].name",
	"bad-end":   "players[5].id",
	"truncated": "vars[4].value",
}

// TestGolden decodes every testdata/*.hex packet with spans and compares the
// annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). Every byte of a reply that decodes is in exactly one
// field span.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			m, err := (&doom3.Codec{}).Decode([][]byte{g.b}, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := (&doom3.Codec{}).Decode([][]byte{g.b}, codecs.DecodeOptions{})
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
			if field, bad := broken[g.name]; bad {
				codectest.WantError(t, err, nil, field, -1)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			codectest.SpansTile(t, m, 0)
		})
	}
}

// TestTruncated decodes every proper prefix of every golden reply: each
// must fail with a *codecs.Error at or before its end, never panic, and
// keep a partial message.
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		if _, bad := broken[g.name]; bad || g.name == "request" {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			codectest.Prefixes(t, g.b, func(p []byte) error {
				m, err := (&doom3.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				trailing := len(g.b) - len(p)
				if g.name == "doom3-empty-trailing" && trailing <= 2 {
					return err // the reply is whole; only its trailing bytes are cut
				}
				if err == nil {
					t.Errorf("prefix %d: Decode succeeds", len(p))
				}
				return err
			}, nil)
		})
	}
	req := packet(t, "request")
	for i := range len(req) - 8 - 1 { // shorter than "getInfo" and four bytes
		if _, err := doom3.DecodeRequest(req[:i]); err == nil {
			t.Errorf("request prefix %d decodes", i)
		}
	}
}
