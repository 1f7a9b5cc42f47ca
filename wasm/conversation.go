//go:build js && wasm

package main

import (
	"strconv"
	"syscall/js"
	"unsafe"

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
//
// Out of line: runRequest would otherwise carry an inlined copy of it, as
// of the other helpers of batch below, growing the browser module (see
// "Code size" in codecs/doc.go).
//
//go:noinline
func (c *conversation) appendStep(dst []byte, b []byte) []byte {
	send, done, err := c.q.Feed(b)
	c.sending(send)
	c.done = c.done || done
	dst = appendSend(append(dst, '{'), send)
	dst = append(dst, `,"done":`...)
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
//
// Out of line: see appendStep.
//
//go:noinline
func (c *conversation) appendSummary(dst []byte) []byte {
	m, err := c.q.Result(codecs.DecodeOptions{Query: c.sent, NoFields: true})
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
// their summaries, so it drives them through three WebAssembly exports
// (go:wasmexport) that JS calls directly, without syscall/js: the worker
// writes many requests into Go's memory at querylens_in(), runs them with
// one call, querylens_batch(n), and reads the JSON array of their results
// from Go's memory at querylens_out(). A call through syscall/js (a
// js.FuncOf) resumes the Go scheduler and makes a reference, with a
// finalizer, for each argument and result; an export is a plain call into
// the module. web/static/ql.js attachBatch puts them on the namespace as
// querylens.batch, querylens.in and querylens.out.
//
// Requests (integers big-endian, strings UTF-8):
//
//	0x01 OPEN    u8 n | protocol | u8 count | count × (u8 n | key | u16 n | value)
//	             → {"handle": h, "send": [hex…]} | {"error": …}
//	0x02 STEP    u32 handle | u32 n | datagram
//	             → {"send": [hex…], "done": bool, "error"?: …, "summary"?: codecs.Summary}
//	             The conversation is released once done.
//	0x03 FINISH  u32 handle
//	             → codecs.Summary of what came so far; the conversation is released.
//
// A request for a closed conversation gets {"error": {"message":
// "conversation is closed"}} and the others run. A request the reader
// cannot make out (unknown type, a length past the end) gets an error
// naming its offset, and the requests after it are not run.

// Request types of batch.
const (
	reqOpen   = 0x01
	reqStep   = 0x02
	reqFinish = 0x03
)

// inSize bounds one batch's requests: a STEP holds a whole datagram (UDP
// allows 65,507 bytes of payload), so any single request fits.
const inSize = 1 << 17

// inBuf is where the worker writes a batch's requests; an array, so its
// address never changes.
var inBuf [inSize]byte

// outBuf holds the JSON of the last batch, until the next one.
var outBuf []byte

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
	outBuf = runBatch(outBuf[:0], inBuf[:n])
	return int32(len(outBuf))
}

// exportOut is the address of the last batch's JSON in the module's
// memory; it stays there until the next batch.
//
//go:wasmexport querylens_out
func exportOut() uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(outBuf)))) }

// runBatch appends the JSON array of the results of the requests in b.
func runBatch(dst, b []byte) []byte {
	dst = append(dst, '[')
	for off, i := 0, 0; off < len(b); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		var next int
		var ok bool
		dst, next, ok = runRequest(dst, b, off)
		if !ok {
			break
		}
		off = next
	}
	return append(dst, ']')
}

// runRequest runs the request at b[off:] and appends its result. It
// returns the offset of the next request, or false (with an error result
// appended) when the request cannot be read.
func runRequest(dst, b []byte, off int) ([]byte, int, bool) {
	r := batchReader{b: b, off: off}
	switch typ := r.u8(); typ {
	case reqOpen:
		name := string(r.bytes(int(r.u8())))
		var opts map[string]string
		if n := int(r.u8()); n > 0 {
			opts = make(map[string]string, n)
			for range n {
				k := string(r.bytes(int(r.u8())))
				opts[k] = string(r.bytes(int(r.u16())))
			}
		}
		if r.bad {
			return batchError(dst, "OPEN", off), 0, false
		}
		return appendOpen(dst, name, opts), r.off, true
	case reqStep:
		h := int(r.u32())
		d := r.bytes(int(r.u32()))
		if r.bad {
			return batchError(dst, "STEP", off), 0, false
		}
		c, ok := conversations[h]
		if !ok {
			return appendClosed(dst), r.off, true
		}
		// The codecs may keep the datagram (a segment waiting for the
		// others), and inBuf is reused.
		dst = c.appendStep(dst, append([]byte(nil), d...))
		if c.done {
			delete(conversations, h)
		}
		return dst, r.off, true
	case reqFinish:
		h := int(r.u32())
		if r.bad {
			return batchError(dst, "FINISH", off), 0, false
		}
		c, ok := conversations[h]
		if !ok {
			return appendClosed(dst), r.off, true
		}
		delete(conversations, h)
		return c.appendSummary(dst), r.off, true
	default:
		return appendMessage(dst, "batch: unknown request type 0x"+strconv.FormatUint(uint64(typ), 16)+" at offset "+strconv.Itoa(off)), 0, false
	}
}

// appendOpen starts a conversation and appends {"handle", "send"} or the
// error object.
//
// Out of line: see appendStep.
//
//go:noinline
func appendOpen(dst []byte, name string, opts map[string]string) []byte {
	c, err := codecs.Lookup(name)
	if err != nil {
		return codecs.AppendJSON(dst, codecs.ErrorObject(err, nil))
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		return codecs.AppendJSON(dst, codecs.ErrorObject(err, nil))
	}
	h := nextHandle
	nextHandle++
	conv := &conversation{protocol: c.Name(), q: q}
	conversations[h] = conv
	dgs := q.Start()
	conv.sending(dgs)
	dst = append(dst, `{"handle":`...)
	dst = strconv.AppendInt(dst, int64(h), 10)
	return append(appendSend(append(dst, ','), dgs), '}')
}

// appendSend appends "send": [hex…].
//
// Out of line: see appendStep.
//
//go:noinline
func appendSend(dst []byte, dgs [][]byte) []byte {
	dst = append(dst, `"send":[`...)
	for i, d := range dgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = codecs.AppendJSON(dst, codecs.Hex(d))
	}
	return append(dst, ']')
}

func appendClosed(dst []byte) []byte { return appendMessage(dst, "conversation is closed") }

// appendMessage appends {"error": {"message": msg}}.
//
// Out of line: see appendStep.
//
//go:noinline
func appendMessage(dst []byte, msg string) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = codecs.AppendJSONString(dst, msg)
	return append(dst, "}}"...)
}

// batchError reports a request that ends before its fields do.
//
// Out of line: see appendStep.
//
//go:noinline
func batchError(dst []byte, name string, off int) []byte {
	return appendMessage(dst, "batch: "+name+" request at offset "+strconv.Itoa(off)+" is truncated")
}

// batchReader reads a request; past the end it returns zeros and sets bad.
type batchReader struct {
	b   []byte
	off int
	bad bool
}

// Out of line: see appendStep.
//
//go:noinline
func (r *batchReader) bytes(n int) []byte {
	if r.bad || n > len(r.b)-r.off {
		r.bad = true
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *batchReader) u8() uint8 {
	if s := r.bytes(1); s != nil {
		return s[0]
	}
	return 0
}

func (r *batchReader) u16() uint16 {
	if s := r.bytes(2); s != nil {
		return uint16(s[0])<<8 | uint16(s[1])
	}
	return 0
}

func (r *batchReader) u32() uint32 {
	if s := r.bytes(4); s != nil {
		return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
	}
	return 0
}
