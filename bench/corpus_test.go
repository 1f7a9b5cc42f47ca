package bench

import (
	"testing"

	"github.com/querylens/querylens/codecs"
)

// TestCorpus checks that every packet the benchmarks decode is a complete,
// well-formed reply, so that a benchmark never times an error path.
func TestCorpus(t *testing.T) {
	ps, err := Corpus("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Protocol] = true
		c, err := codecs.Lookup(p.Protocol)
		if err != nil {
			t.Fatal(err)
		}
		for _, spans := range []bool{false, true} {
			m, err := c.Decode(p.Datagrams, codecs.DecodeOptions{Query: p.Query, Spans: spans})
			if err != nil {
				t.Errorf("%s/%s spans=%v: %v", p.Protocol, p.Name, spans, err)
				continue
			}
			if len(m.Warnings) != 0 {
				t.Errorf("%s/%s: warnings %v", p.Protocol, p.Name, m.Warnings)
			}
			if spans && len(m.Spans) == 0 {
				t.Errorf("%s/%s: no spans", p.Protocol, p.Name)
			}
		}
	}
	for _, c := range codecs.Protocols() {
		if !seen[c.Name()] {
			t.Errorf("no packet of %s in the corpus", c.Name())
		}
	}
}
