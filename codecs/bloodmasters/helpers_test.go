package bloodmasters_test

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// golden is one testdata/*.hex packet: the datagram and the comment on its
// first line, which says where it came from.
type golden struct {
	name   string
	source string
	b      []byte
}

// readHex parses a hand-written .hex file: hex bytes separated by spaces,
// '#' to the end of the line is a comment, the first comment is the source.
func readHex(t testing.TB, path string) golden {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := golden{name: strings.TrimSuffix(filepath.Base(path), ".hex")}
	var digits strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			if g.source == "" {
				g.source = strings.TrimSpace(line[i+1:])
			}
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	g.b, err = hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

func goldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden packets: %v", err)
	}
	gs := make([]golden, 0, len(paths))
	for _, p := range paths {
		gs = append(gs, readHex(t, p))
	}
	return gs
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantError checks that err is a *codecs.Error wrapping sentinel, for field
// (when not empty) at offset (when >= 0), and returns it.
func wantError(t testing.TB, err error, sentinel error, field string, offset int) *codecs.Error {
	t.Helper()
	var e *codecs.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a *codecs.Error", err)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("err = %v, want %v", err, sentinel)
	}
	if field != "" && e.Field != field {
		t.Errorf("err field = %q, want %q (%v)", e.Field, field, err)
	}
	if offset >= 0 && e.Offset != offset {
		t.Errorf("err offset = %d, want %d (%v)", e.Offset, offset, err)
	}
	return e
}
