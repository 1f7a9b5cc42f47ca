//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/querylens/querylens/codecs"
)

// version is set with -ldflags "-X main.version=…"; otherwise it comes from
// the build's VCS stamp.
var version = ""

// register installs globalThis.querylens.
func register() {
	ns := jsObject.New()
	ns.Set("version", buildVersion())
	ns.Set("protocols", fn(protocols))
	ns.Set("detect", fn(detect))
	ns.Set("buildQuery", fn(buildQuery))
	ns.Set("newQuery", fn(newQuery))
	ns.Set("decode", fn(func(args []js.Value) any { return decode(args, false) }))
	ns.Set("inspect", fn(func(args []js.Value) any { return decode(args, true) }))
	registerInspector(ns)
	registerRef(ns)
	js.Global().Set("querylens", ns)
}

// fn wraps a function that ignores `this`. The js.Func values live as long
// as the page, so they are never released.
//
// Out of line: called once per exported function; a copy inlined at
// each would grow the browser module (see "Code size" in codecs/doc.go).
//
//go:noinline
func fn(f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any { return f(args) })
}

// buildVersion is the module version stamped at build time, or "devel".
// (runtime/debug.ReadBuildInfo would give the VCS revision, but it links fmt.)
func buildVersion() string {
	if version != "" {
		return version
	}
	return "devel"
}

// protocols() → [{name, title, default_port, options: [{name, kind, default, choices, help}]}]
func protocols(_ []js.Value) any {
	list := make([]codecs.Object, 0, 4)
	for _, c := range codecs.Protocols() {
		opts := make([]codecs.Object, 0, len(c.Options()))
		for _, o := range c.Options() {
			choices := o.Choices
			if choices == nil {
				choices = []string{}
			}
			opts = append(opts, make(codecs.Object, 0, 5).Add("name", o.Name).Add("kind", o.Kind).
				Add("default", o.Default).Add("choices", choices).Add("help", o.Help))
		}
		list = append(list, make(codecs.Object, 0, 4).Add("name", c.Name()).Add("title", c.Title()).
			Add("default_port", c.DefaultPort()).Add("options", opts))
	}
	return parseJSON(codecs.AppendJSON(nil, list))
}

// detect(bytes) → {protocol, kind} | {error}
func detect(args []js.Value) any {
	b, ok := bytesFromJS(arg(args, 0))
	if !ok {
		return usageError("detect: want a Uint8Array")
	}
	c, kind, err := codecs.Detect(b)
	if err != nil {
		return errorValue(err, nil)
	}
	return object(make(codecs.Object, 0, 2).Add("protocol", c.Name()).Add("kind", string(kind)))
}

// lookup finds the codec for name, or by detection on first when name is "".
func lookup(name string, first []byte) (codecs.Codec, error) {
	if name != "" {
		return codecs.Lookup(name)
	}
	c, _, err := codecs.Detect(first)
	return c, err
}

// buildQuery(protocol, options) → {datagrams: Uint8Array[]} | {error}
//
// The datagrams are exactly what a conversation sends first, wire form
// included (Zandronum's are Huffman-encoded); decode them to see the layers.
func buildQuery(args []js.Value) any {
	c, q, fail := startQuery(args)
	if q == nil {
		return fail
	}
	o := jsObject.New()
	o.Set("protocol", c.Name())
	o.Set("datagrams", bytesList(q.Start()))
	return o
}

// startQuery makes the query that args (protocol, options) describe, or
// returns the failure object to hand back.
func startQuery(args []js.Value) (codecs.Codec, codecs.Query, js.Value) {
	c, err := codecs.Lookup(stringArg(args, 0))
	if err != nil {
		return nil, nil, errorValue(err, nil)
	}
	// A stream protocol's query takes the relay's CHUNKs as they come
	// (codecs.NewConversation): the relay holds its conversation.
	q, _, err := codecs.NewConversation(c, optionsFromJS(arg(args, 1)))
	if err != nil {
		return nil, nil, errorValue(err, nil)
	}
	return c, q, js.Value{}
}

// decode(protocol|null, datagrams, {query, spans}) → message | {error, partial}
// inspect(...) is the same with spans always on.
func decode(args []js.Value, spans bool) any {
	dgs, ok := datagramsFromJS(arg(args, 1))
	if !ok || len(dgs) == 0 {
		return usageError("decode: want a Uint8Array or a non-empty array of them")
	}
	opt := codecs.DecodeOptions{Spans: spans}
	if o := arg(args, 2); o.Type() == js.TypeObject {
		if o.Get("spans").Truthy() {
			opt.Spans = true
		}
		if q, ok := bytesFromJS(o.Get("query")); ok {
			opt.Query = q
		}
	}
	c, err := lookup(stringArg(args, 0), dgs[0])
	if err != nil {
		return errorValue(err, nil)
	}
	if len(dgs) == 1 {
		// One buffer: a datagram, or a stream protocol's reply whole,
		// cut into its messages (codecs.DecodeStream).
		return messageValue(codecs.DecodeStream(c, dgs[0], opt))
	}
	return messageValue(c.Decode(dgs, opt))
}
