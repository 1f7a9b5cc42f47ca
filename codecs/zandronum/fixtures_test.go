package zandronum

import (
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

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
	e := codectest.WantError(t, err, sentinel, field, -1)
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
