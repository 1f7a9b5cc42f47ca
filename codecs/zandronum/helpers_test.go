package zandronum

import (
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// unhex decodes hex that may contain spaces and newlines; "#" starts a
// comment that runs to the end of the line.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// readHexFile reads testdata/name: one datagram per non-comment line.
func readHexFile(t testing.TB, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, line := range strings.Split(string(b), "\n") {
		if d := unhex(t, line); len(d) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func equal[T any](t testing.TB, name string, want, got T) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s:\n got  %#v\n want %#v", name, got, want)
	}
}

func noErr(t testing.TB, name string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// codecErr checks that err is a *codecs.Error wrapping sentinel with the
// given field (when not "") and layer (when not "-").
func codecErr(t testing.TB, name string, err, sentinel error, field, layer string) *codecs.Error {
	t.Helper()
	var e *codecs.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v is not a *codecs.Error", name, err)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("%s: error %v does not wrap %v", name, err, sentinel)
	}
	if field != "" && e.Field != field {
		t.Errorf("%s: field %q, want %q (%v)", name, e.Field, field, err)
	}
	if layer != "-" && e.Layer != layer {
		t.Errorf("%s: layer %q, want %q (%v)", name, e.Layer, layer, err)
	}
	if e.Protocol != Protocol {
		t.Errorf("%s: protocol %q", name, e.Protocol)
	}
	return e
}

// jsonOf renders an Object (or any value Object accepts) as JSON text.
func jsonOf(v any) string { return string(codecs.AppendJSON(nil, v)) }

func errorsAs(err error, target **codecs.Error) bool { return errors.As(err, target) }

// wrapAll puts every payload through the Huffman layer.
func wrapAll(payloads [][]byte) [][]byte {
	var out [][]byte
	for _, p := range payloads {
		out = append(out, Wrap(nil, p))
	}
	return out
}
