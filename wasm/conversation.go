//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/querylens/querylens/codecs"
)

// Conversations live in Go, keyed by a handle the JS object carries. The
// methods are shared js.Funcs that find their conversation through `this`,
// so a page can run a thousand conversations without a thousand sets of
// functions to release; close() drops the Go side.
var (
	conversations = map[int]*conversation{}
	nextHandle    = 1
	convMethods   = js.Global().Get("Object").New()
)

type conversation struct {
	protocol string
	q        codecs.Query
}

func init() {
	convMethods.Set("start", method(func(c *conversation, _ []js.Value) any {
		return bytesList(c.q.Start())
	}))
	convMethods.Set("feed", method(func(c *conversation, args []js.Value) any {
		b, ok := bytesFromJS(arg(args, 0))
		if !ok {
			return usageError("feed: want a Uint8Array")
		}
		send, done, err := c.q.Feed(b)
		o := jsObject.New()
		if err != nil {
			o = errorValue(err, nil)
		}
		o.Set("send", bytesList(send))
		o.Set("done", done)
		return o
	}))
	convMethods.Set("result", method(func(c *conversation, args []js.Value) any {
		var opt codecs.DecodeOptions
		if o := arg(args, 0); o.Type() == js.TypeObject {
			opt.Spans = o.Get("spans").Truthy()
			if q, ok := bytesFromJS(o.Get("query")); ok {
				opt.Query = q
			}
		}
		return messageValue(c.q.Result(opt))
	}))
	convMethods.Set("close", js.FuncOf(func(this js.Value, _ []js.Value) any {
		delete(conversations, this.Get("handle").Int())
		this.Set("closed", true)
		return nil
	}))
}

// method wraps f so that it runs on the conversation `this` refers to. A
// closed conversation answers with an error object.
//
// Out of line: called once per exported function; a copy inlined at
// each would grow the browser module (see "Code size" in codecs/doc.go).
//
//go:noinline
func method(f func(c *conversation, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) any {
		h := this.Get("handle")
		if h.Type() != js.TypeNumber {
			return usageError("conversation method called without its object")
		}
		c, ok := conversations[h.Int()]
		if !ok {
			return usageError("conversation is closed")
		}
		return f(c, args)
	})
}

// newQuery(protocol, options) → {protocol, handle, start(), feed(b), result(opts), close()} | {error}
func newQuery(args []js.Value) any {
	c, q, fail := startQuery(args)
	if q == nil {
		return fail
	}
	h := nextHandle
	nextHandle++
	conversations[h] = &conversation{protocol: c.Name(), q: q}
	o := jsObject.Call("create", convMethods)
	o.Set("protocol", c.Name())
	o.Set("handle", h)
	return o
}
