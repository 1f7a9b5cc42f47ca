package all_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// TestNoFieldsSameSummary: decoding with DecodeOptions.NoFields gives what
// the server list reads (kind, denied, info, servers, warnings, the error
// and AppendSummaryJSON's output) exactly as a full decode does, for every
// golden message of every protocol, and truncated ones.
func TestNoFieldsSameSummary(t *testing.T) {
	files, err := filepath.Glob("../*/testdata/*.hex")
	if err != nil || len(files) < 20 {
		t.Fatalf("golden messages: %d files, %v", len(files), err)
	}
	for _, path := range files {
		protocol := filepath.Base(filepath.Dir(filepath.Dir(path)))
		// Zandronum's files hold a datagram a line; the others' one
		// annotated datagram.
		var dgs [][]byte
		if protocol == "zandronum" {
			dgs = codectest.ReadHexLines(t, path)
		} else {
			b, _ := codectest.ReadHex(t, path)
			dgs = [][]byte{b}
		}
		c, err := codecs.Lookup(protocol)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(protocol+"/"+strings.TrimSuffix(filepath.Base(path), ".hex"), func(t *testing.T) {
			compare := func(t *testing.T, dgs [][]byte) {
				full, ferr := c.Decode(dgs, codecs.DecodeOptions{})
				lean, lerr := c.Decode(dgs, codecs.DecodeOptions{NoFields: true})
				if (ferr == nil) != (lerr == nil) || (ferr != nil && ferr.Error() != lerr.Error()) {
					t.Fatalf("errors differ: full %v, NoFields %v", ferr, lerr)
				}
				if full.Kind != lean.Kind || full.Denied != lean.Denied || !reflect.DeepEqual(full.Info, lean.Info) ||
					!reflect.DeepEqual(full.Servers, lean.Servers) || !reflect.DeepEqual(full.Warnings, lean.Warnings) {
					t.Errorf("messages differ:\nfull     %+v\nNoFields %+v", full, lean)
				}
				// A server's answer keeps at most the country (queries and
				// master lists, not what a server list decodes per server,
				// may keep theirs).
				if lean.Kind == codecs.KindResponse || lean.Kind == codecs.KindDenied {
					for _, kv := range lean.Fields {
						if kv.Key != "country" {
							t.Errorf("NoFields kept field %q", kv.Key)
						}
					}
				}
				if f, l := codecs.AppendSummaryJSON(nil, full, ferr), codecs.AppendSummaryJSON(nil, lean, lerr); string(f) != string(l) {
					t.Errorf("summaries differ:\nfull     %s\nNoFields %s", f, l)
				}
			}
			compare(t, dgs)
			last := dgs[len(dgs)-1]
			for _, n := range []int{0, 1, len(last) / 2, len(last) - 1} {
				if n >= 0 && n < len(last) {
					cut := append(append([][]byte(nil), dgs[:len(dgs)-1]...), last[:n])
					compare(t, cut)
				}
			}
		})
	}
}
