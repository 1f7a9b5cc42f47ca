package gamespy1_test

import (
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// masterGoldens are testdata/master/*.hex: a master's messages, the
// greeting first, then the list (cut by MasterMessageLen); a name with
// "cmp" is a \list\cmp\ conversation, one starting "bad-" must fail.
func masterGoldens(t testing.TB) []golden { return codectest.ReadMessages(t, "testdata/master/*.hex") }

// playMaster runs a master conversation over the golden's messages.
func playMaster(t testing.TB, g golden) codecs.Query {
	t.Helper()
	opts := map[string]string{"master": "true"}
	if strings.Contains(g.Name, "cmp") {
		opts["list"] = "cmp"
	}
	q, err := (&gamespy1.Codec{}).NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range g.Datagrams {
		q.Feed(m)
	}
	return q
}

// TestMasterGolden: each conversation's Result with spans, dumped, and
// its JSON, against testdata/master/*.golden (-update rewrites them).
func TestMasterGolden(t *testing.T) {
	for _, g := range masterGoldens(t) {
		t.Run(g.Name, func(t *testing.T) {
			q := playMaster(t, g)
			m, err := q.Result(codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.Source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := q.Result(codecs.DecodeOptions{})
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
			codectest.Golden(t, filepath.Join("testdata", "master", g.Name+".golden"), out)
			if strings.HasPrefix(g.Name, "bad-") != (err != nil) {
				t.Errorf("error %v", err)
			}
			for _, s := range plain.Servers {
				if _, err := netip.ParseAddrPort(s); err != nil {
					t.Errorf("listed %q: %v", s, err)
				}
			}
		})
	}
}

// TestMasterTruncated reads every prefix of every golden greeting and
// list: nothing panics, an error is a *codecs.Error at or before the cut,
// and a list cut anywhere yields only addresses that were whole.
func TestMasterTruncated(t *testing.T) {
	for _, g := range masterGoldens(t) {
		t.Run(g.Name, func(t *testing.T) {
			compact := strings.Contains(g.Name, "cmp")
			codectest.Prefixes(t, g.Datagrams[0], func(p []byte) error {
				_, err := gamespy1.ReadChallenge(p, nil)
				return err
			}, nil)
			full, _ := gamespy1.ReadMasterList(g.Datagrams[1], compact, 0, nil)
			codectest.Prefixes(t, g.Datagrams[1], func(p []byte) error {
				addrs, err := gamespy1.ReadMasterList(p, compact, 0, nil)
				if len(p) < len(g.Datagrams[1]) && err == nil {
					t.Errorf("prefix %d of %d reads without error", len(p), len(g.Datagrams[1]))
				}
				for i, a := range addrs {
					if i >= len(full) || (a != full[i] && !strings.HasPrefix(full[i], a)) {
						t.Errorf("prefix %d: %q is not listed whole", len(p), a)
					}
				}
				return err
			}, nil)
		})
	}
}

// TestMasterErrorsTyped: the readers' errors are *codecs.Error.
func TestMasterErrorsTyped(t *testing.T) {
	_, err := gamespy1.ReadMasterList([]byte(`\ip\x\final\`), false, 0, nil)
	if _, ok := errors.AsType[*codecs.Error](err); !ok {
		t.Errorf("%T %v", err, err)
	}
}
