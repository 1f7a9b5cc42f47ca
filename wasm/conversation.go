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
	// sent is the last datagram the conversation asked to send: the query
	// a reply answers, which step and finish decode the result against.
	sent []byte
	done bool // the message is complete (set by appendStep)
}

// sending records the last of dgs as the query replies answer.
func (c *conversation) sending(dgs [][]byte) {
	if len(dgs) > 0 {
		c.sent = dgs[len(dgs)-1]
	}
}

// appendStep appends step's JSON: {"send": [hex…], "done": bool,
// "error"?: the feed error, "summary"?: codecs.Summary of the result once
// done}. The server browser's worker makes one call per reply and reads
// everything it needs from this one value.
func (c *conversation) appendStep(dst []byte, b []byte) []byte {
	send, done, err := c.q.Feed(b)
	c.sending(send)
	c.done = c.done || done
	dst = append(dst, `{"send":[`...)
	for i, d := range send {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = codecs.AppendJSON(dst, codecs.Hex(d))
	}
	dst = append(dst, `],"done":`...)
	dst = codecs.AppendJSON(dst, done)
	if err != nil {
		dst = append(dst, `,"error":`...)
		e, _ := codecs.ErrorObject(err, nil).Get("error")
		dst = codecs.AppendJSON(dst, e)
	}
	if done {
		dst = append(dst, `,"summary":`...)
		dst = c.appendSummary(dst)
	}
	return append(dst, '}')
}

// appendSummary appends the JSON of codecs.Summary of what was received.
func (c *conversation) appendSummary(dst []byte) []byte {
	m, err := c.q.Result(codecs.DecodeOptions{Query: c.sent})
	return codecs.AppendSummaryJSON(dst, m, err)
}

func init() {
	convMethods.Set("start", method(func(c *conversation, _ []js.Value) any {
		dgs := c.q.Start()
		c.sending(dgs)
		return bytesList(dgs)
	}))
	convMethods.Set("feed", method(func(c *conversation, args []js.Value) any {
		b, ok := bytesFromJS(arg(args, 0))
		if !ok {
			return usageError("feed: want a Uint8Array")
		}
		send, done, err := c.q.Feed(b)
		c.sending(send)
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

// The server browser's worker runs a thousand conversations and needs only
// their summaries, so it drives them through three namespace functions that
// cross the Go↔JS boundary as rarely as possible: open (one call: the
// conversation and its first datagrams), step (one call per reply, which
// releases the conversation once the message is complete) and finish (the
// summary after a timeout, releasing it too). Datagrams to send are hex.

// open(protocol, options) → {handle, send: [hex…]} | {error}
//
// open, step and finish return their JSON through out (see outJSON).
func openConversation(args []js.Value) any {
	c, q, fail := startQuery(args)
	if q == nil {
		return fail
	}
	h := nextHandle
	nextHandle++
	conv := &conversation{protocol: c.Name(), q: q}
	conversations[h] = conv
	dgs := q.Start()
	conv.sending(dgs)
	b := append(make([]byte, 0, 64), `{"handle":`...)
	b = codecs.AppendJSON(b, h)
	b = append(b, `,"send":[`...)
	for i, d := range dgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = codecs.AppendJSON(b, codecs.Hex(d))
	}
	return outJSON(append(b, "]}"...))
}

// handleArg finds the open conversation args[0] names.
func handleArg(args []js.Value) (int, *conversation, js.Value) {
	v := arg(args, 0)
	if v.Type() != js.TypeNumber {
		return 0, nil, usageError("want a conversation handle")
	}
	h := v.Int()
	c, ok := conversations[h]
	if !ok {
		return 0, nil, usageError("conversation is closed")
	}
	return h, c, js.Value{}
}

// step(handle, bytes) → {send, done, error?, summary?}; the conversation
// is released when done.
func stepConversation(args []js.Value) any {
	h, c, fail := handleArg(args)
	if c == nil {
		return fail
	}
	b, ok := bytesFromJS(arg(args, 1))
	if !ok {
		return usageError("step: want a Uint8Array")
	}
	out := c.appendStep(nil, b)
	if c.done {
		delete(conversations, h)
	}
	return outJSON(out)
}

// finish(handle) → summary of what came so far; releases the conversation.
func finishConversation(args []js.Value) any {
	h, c, fail := handleArg(args)
	if c == nil {
		return fail
	}
	delete(conversations, h)
	return outJSON(c.appendSummary(nil))
}

// out is where open, step and finish leave their JSON for the worker to
// read (querylens.out): a number crosses back to JS without the string and
// parsed object syscall/js would otherwise allocate, and finalize, per call.
var out = jsUint8Array.New(outSize)

const outSize = 1 << 16

// outJSON copies b into out and returns its length, or, when b does not
// fit, b parsed as before.
func outJSON(b []byte) any {
	if len(b) > outSize {
		return parseJSON(b)
	}
	return js.CopyBytesToJS(out, b)
}
