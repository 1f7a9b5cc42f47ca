//go:build js && wasm

package main

import (
	"syscall/js"
	"unsafe"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/wasm/internal/batch"
)

// Conversations live in Go, keyed by a handle the JS object carries. The
// methods are shared js.Funcs that find their conversation through `this`,
// so a page can run a thousand conversations without a thousand sets of
// functions to release; close() drops the Go side.
var (
	conversations = map[int]codecs.Query{}
	nextHandle    = 1
	convMethods   = js.Global().Get("Object").New()
)

func init() {
	convMethods.Set("start", method(func(q codecs.Query, _ []js.Value) any {
		return bytesList(q.Start())
	}))
	convMethods.Set("feed", method(func(q codecs.Query, args []js.Value) any {
		b, ok := bytesFromJS(arg(args, 0))
		if !ok {
			return usageError("feed: want a Uint8Array")
		}
		send, done, err := q.Feed(b)
		o := jsObject.New()
		if err != nil {
			o = errorValue(err, nil)
		}
		o.Set("send", bytesList(send))
		o.Set("done", done)
		return o
	}))
	convMethods.Set("result", method(func(q codecs.Query, args []js.Value) any {
		var opt codecs.DecodeOptions
		if o := arg(args, 0); o.Type() == js.TypeObject {
			opt.Spans = o.Get("spans").Truthy()
			if q, ok := bytesFromJS(o.Get("query")); ok {
				opt.Query = q
			}
		}
		return messageValue(q.Result(opt))
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
func method(f func(q codecs.Query, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) any {
		h := this.Get("handle")
		if h.Type() != js.TypeNumber {
			return usageError("conversation method called without its object")
		}
		q, ok := conversations[h.Int()]
		if !ok {
			return usageError("conversation is closed")
		}
		return f(q, args)
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
	conversations[h] = q
	o := jsObject.Call("create", convMethods)
	o.Set("protocol", c.Name())
	o.Set("handle", h)
	// The page asks a stream protocol with the relay's EXCHANGE, and feeds
	// the CHUNKs to this conversation.
	o.Set("stream", codecs.Streamed(c))
	return o
}

// The server browser's worker runs a thousand conversations and needs only
// their summaries, so it drives them through three WebAssembly exports
// (go:wasmexport) that JS calls directly, without syscall/js: the worker
// writes many requests (package batch documents them) into Go's memory at
// querylens_in(), runs them with one call, querylens_batch(n), and reads
// the JSON array of their results from Go's memory at querylens_out(). A
// call through syscall/js (a js.FuncOf) resumes the Go scheduler and makes
// a reference, with a finalizer, for each argument and result; an export
// is a plain call into the module. web/static/ql.js attachBatch puts them
// on the namespace as querylens.batch, querylens.in and querylens.out.

// inSize bounds one batch's requests: a STEP holds a whole datagram (UDP
// allows 65,507 bytes of payload), so any single request fits.
const inSize = 1 << 17

var (
	// inBuf is where the worker writes a batch's requests; an array, so
	// its address never changes.
	inBuf [inSize]byte
	// outBuf holds the JSON of the last batch, until the next one.
	outBuf []byte
	// table holds the worker's conversations.
	table batch.Table
)

// exportIn is the address of inBuf in the module's memory.
//
//go:wasmexport querylens_in
//lint:ignore U1000 called from JS, as a WebAssembly export
func exportIn() uint32 { return uint32(uintptr(unsafe.Pointer(&inBuf[0]))) }

// exportInSize is the size of inBuf.
//
//go:wasmexport querylens_in_size
//lint:ignore U1000 called from JS, as a WebAssembly export
func exportInSize() int32 { return inSize }

// exportBatch runs the n bytes of requests at the start of inBuf and
// returns the length of the JSON array of results (at exportOut), or -1
// when n is outside inBuf.
//
//go:wasmexport querylens_batch
func exportBatch(n int32) int32 {
	if n < 0 || n > inSize {
		return -1
	}
	outBuf = table.Run(outBuf[:0], inBuf[:n])
	return int32(len(outBuf))
}

// exportOut is the address of the last batch's JSON in the module's
// memory; it stays there until the next batch.
//
//go:wasmexport querylens_out
func exportOut() uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(outBuf)))) }
