package gamespy2

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// goldenCase is a conversation: queries and replies in wire order, each
// reply read with the query before it (if any).
type goldenCase struct {
	name, source string
	datagrams    func(t testing.TB) [][]byte
}

func fromVector(name string) func(t testing.TB) [][]byte {
	return func(t testing.TB) [][]byte {
		t.Helper()
		b, err := os.ReadFile("testdata/vectors.json")
		if err != nil {
			t.Fatal(err)
		}
		var vs []vector
		if err := json.Unmarshal(b, &vs); err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if strings.HasPrefix(v.Name, name) {
				var out [][]byte
				for _, x := range v.exchanges() {
					out = append(out, codectest.Unhex(t, x.RequestHex), codectest.Unhex(t, x.ResponseHex))
				}
				return out
			}
		}
		t.Fatalf("no vector %q", name)
		return nil
	}
}

// built is a reply made by AppendResponse, optionally cut to n bytes and
// optionally without its query.
func built(resp Response, req Request, cut int, withQuery bool) func(t testing.TB) [][]byte {
	return func(t testing.TB) [][]byte {
		t.Helper()
		q, err := AppendRequest(nil, req)
		if err != nil {
			t.Fatal(err)
		}
		r, err := AppendResponse(nil, resp, req)
		if err != nil {
			t.Fatal(err)
		}
		if cut > 0 {
			r = r[:cut]
		}
		if !withQuery {
			return [][]byte{r}
		}
		return [][]byte{q, r}
	}
}

func oneByte(r Response) Response {
	r.OneByteCounts = true
	return r
}

var goldenCases = []goldenCase{
	{"full", "vector: bf1942-like full server, combined query FF FF FF (QR2 SDK layout)", fromVector("bf1942-like")},
	{"gamedig", "vector: seed example, three single-section queries as GameDig sends them", fromVector("seed example")},
	{"empty", "vector: empty server, zero players and zero teams", fromVector("empty server")},
	{"index", "AppendResponse: index-mode request (values only, names from qr2regkeys numbers)",
		built(sample(), Request{ID: id1020, Server: KeyList(KeyHostname, KeyMapname, KeyNumplayers, KeyPassword),
			Players: KeyList(KeyPlayer, KeyScore, KeyPing), Teams: KeyList(KeyTeamT)}, 0, true)},
	{"onebyte", "AppendResponse: a server that sends one-byte player and team counts (non-SDK)",
		built(oneByte(sample()), FullRequest(id1020), 0, true)},
	{"cut1400", "AppendResponse: 64 players overflow the SDK's 1400-byte reply buffer",
		built(bigServer(), FullRequest(id1020), 0, true)},
	{"inferred", "AppendResponse: Latin-1 text, decoded without its query (sections inferred)",
		built(sample(), FullRequest(id1020), 0, false)},
	{"cutstring", "AppendResponse cut inside a player's name (a datagram cut short on its way)",
		built(sample(), FullRequest(id1020), 160, true)},
}

func goldenMessage(t testing.TB, dgs [][]byte) *codecs.Message {
	t.Helper()
	m, err := (&Codec{}).Decode(dgs, codecs.DecodeOptions{Spans: true})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return m
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			dgs := tc.datagrams(t)
			var in []byte
			in = append(in, "# "+tc.source+"\n"...)
			for _, d := range dgs {
				in = codecs.AppendHex(in, d)
				in = append(in, '\n')
			}
			m := goldenMessage(t, dgs)
			out := append([]byte("# "+tc.source+"\n"), codecs.AppendDump(nil, m)...)
			m.Layers, m.Spans = nil, nil
			out = m.AppendJSON(out)
			out = append(out, '\n')
			codectest.Golden(t, filepath.Join("testdata", tc.name+".hex"), in)
			codectest.Golden(t, filepath.Join("testdata", tc.name+".golden"), out)
			codectest.SpansCover(t, goldenMessage(t, dgs))
		})
	}
}

// pairs returns each reply of a case with the query before it.
func pairs(dgs [][]byte) (replies [][]byte, reqs []*Request) {
	var last *Request
	for _, d := range dgs {
		if isQuery(d) {
			q, _ := DecodeRequest(d)
			last = &q
			continue
		}
		replies = append(replies, d)
		reqs = append(reqs, last)
	}
	return replies, reqs
}

// TestTruncated: every prefix of every golden reply either decodes,
// flagged truncated, or fails with a *codecs.Error at or before its end;
// never panics. Without the query a prefix may also read as a complete
// reply of fewer sections, so there only errors are checked. Every prefix
// of a query fails.
func TestTruncated(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			dgs := tc.datagrams(t)
			replies, reqs := pairs(dgs)
			for k, b := range replies {
				for _, req := range []*Request{reqs[k], nil} {
					codectest.Prefixes(t, b, func(p []byte) error {
						r, err := DecodeResponse(p, req)
						if err == nil && req != nil && !r.Truncated {
							t.Errorf("reply %d prefix %d of %d decodes without truncated", k, len(p), len(b))
						}
						return err
					}, nil)
				}
			}
			for _, d := range dgs {
				if isQuery(d) {
					codectest.Prefixes(t, d, func(p []byte) error {
						_, err := DecodeRequest(p)
						if err == nil {
							t.Errorf("query prefix %d decodes", len(p))
						}
						return err
					}, nil)
				}
			}
		})
	}
}
