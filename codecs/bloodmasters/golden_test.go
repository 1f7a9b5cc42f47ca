package bloodmasters_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
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

// request is the query datagram carrying token.
func request(token uint32) []byte {
	b, _ := bloodmasters.AppendRequest(nil, bloodmasters.Request{Token: token})
	return b
}

// packet is the datagram of testdata/name.hex.
func packet(t testing.TB, name string) []byte {
	t.Helper()
	b, _ := codectest.ReadHex(t, "testdata/"+name+".hex")
	return b
}

// TestGolden decodes every testdata/*.hex packet with spans and compares the
// annotated dump and the JSON with testdata/*.golden (go test -update
// rewrites them). Every byte is in exactly one field span.
func TestGolden(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			m, err := (&bloodmasters.Codec{}).Decode([][]byte{g.b}, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := (&bloodmasters.Codec{}).Decode([][]byte{g.b}, codecs.DecodeOptions{})
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

// replyEnd is where the ServerInfo message of b ends, or -1.
func replyEnd(b []byte) int {
	var p bloodmasters.Parser
	p.Start(b)
	for {
		m, err := p.Next()
		if err != nil {
			return -1
		}
		if m.Command.Base() == bloodmasters.CmdServerInfo {
			return m.Offset + m.Len()
		}
	}
}

// TestTruncated decodes every prefix of every golden packet: each must fail
// with a *codecs.Error at or before its end (and with a partial message),
// unless it already holds the whole ServerInfo message.
func TestTruncated(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			end := replyEnd(g.b)
			codectest.Prefixes(t, g.b, func(p []byte) error {
				m, err := (&bloodmasters.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				if m == nil {
					t.Fatalf("prefix %d: nil message", len(p))
				}
				_, rerr := bloodmasters.DecodeResponse(p, nil)
				switch {
				case end >= 0 && len(p) >= end:
					if err != nil {
						t.Errorf("prefix %d holds the whole reply (ends at %d) but fails: %v", len(p), end, err)
					}
				case err == nil:
					t.Errorf("prefix %d: Decode succeeds", len(p))
				case rerr == nil:
					t.Errorf("prefix %d: DecodeResponse succeeds", len(p))
				}
				return err
			}, nil)
		})
	}
}
