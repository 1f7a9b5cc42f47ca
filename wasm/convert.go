//go:build js && wasm

package main

import (
	"strconv"
	"syscall/js"

	"github.com/querylens/querylens/codecs"
)

var (
	jsObject     = js.Global().Get("Object")
	jsArray      = js.Global().Get("Array")
	jsUint8Array = js.Global().Get("Uint8Array")
	jsParse      = js.Global().Get("JSON").Get("parse")
)

// parseJSON turns JSON produced by the codecs into a JS value.
func parseJSON(b []byte) js.Value { return jsParse.Invoke(string(b)) }

// object returns a codecs.Object as a JS object, through JSON.
func object(o codecs.Object) js.Value { return parseJSON(codecs.AppendJSON(nil, o)) }

// errorValue is docs/protocols/json.md's failure object for err, with partial (may be nil).
func errorValue(err error, partial *codecs.Message) js.Value {
	return object(codecs.ErrorObject(err, partial))
}

// messageValue is the JSON of m, or of err with m as the partial result.
func messageValue(m *codecs.Message, err error) js.Value {
	if err != nil {
		return errorValue(err, m)
	}
	return parseJSON(m.AppendJSON(nil))
}

// usageError is a failure object for a caller's mistake (a wrong argument
// type), which has no protocol or offset.
func usageError(msg string) js.Value {
	return object(make(codecs.Object, 0, 1).Add("error", make(codecs.Object, 0, 1).Add("message", msg)))
}

// bytesToJS copies b into a new Uint8Array.
func bytesToJS(b []byte) js.Value {
	u := jsUint8Array.New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

// bytesList returns datagrams as a JS array of Uint8Array.
func bytesList(dgs [][]byte) js.Value {
	a := jsArray.New(len(dgs))
	for i, d := range dgs {
		a.SetIndex(i, bytesToJS(d))
	}
	return a
}

// isBytes reports whether v is a Uint8Array.
func isBytes(v js.Value) bool { return v.Type() == js.TypeObject && v.InstanceOf(jsUint8Array) }

// bytesFromJS copies a Uint8Array into Go. It reports false for anything else.
func bytesFromJS(v js.Value) ([]byte, bool) {
	if !isBytes(v) {
		return nil, false
	}
	b := make([]byte, v.Get("length").Int())
	js.CopyBytesToGo(b, v)
	return b, true
}

// datagramsFromJS accepts one Uint8Array or an array of them.
func datagramsFromJS(v js.Value) ([][]byte, bool) {
	if b, ok := bytesFromJS(v); ok {
		return [][]byte{b}, true
	}
	if v.Type() != js.TypeObject || !jsArray.Call("isArray", v).Bool() {
		return nil, false
	}
	n := v.Length()
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		b, ok := bytesFromJS(v.Index(i))
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// optionsFromJS converts a plain object of query options to the map
// Codec.NewQuery takes. Values are converted with String(); null and
// undefined values are left out, so a form can pass empty fields as null.
func optionsFromJS(v js.Value) map[string]string {
	if v.Type() != js.TypeObject {
		return nil
	}
	keys := jsObject.Call("keys", v)
	opts := make(map[string]string, keys.Length())
	for i := 0; i < keys.Length(); i++ {
		k := keys.Index(i).String()
		x := v.Get(k)
		switch x.Type() {
		case js.TypeNull, js.TypeUndefined:
			continue
		case js.TypeBoolean:
			opts[k] = strconv.FormatBool(x.Bool())
		default:
			opts[k] = js.Global().Call("String", x).String()
		}
	}
	return opts
}

// arg returns args[i], or undefined when the caller passed fewer.
func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// stringArg returns args[i] as a string, and "" for null or undefined.
func stringArg(args []js.Value, i int) string {
	v := arg(args, i)
	if v.Type() != js.TypeString {
		return ""
	}
	return v.String()
}
