// Package batch runs the server browser's conversations for the browser
// module: a thousand servers, of which the page needs only a table row
// each, driven by requests that come many at a time in one byte buffer
// (package main in wasm/ hands the buffer over from JS; see
// web/static/relay.js Batch), answered by one JSON array. Pure Go, so it
// is tested and fuzzed natively too.
//
// Requests (integers big-endian, strings UTF-8):
//
//	0x01 OPEN    u8 n | protocol | u8 count | count × (u8 n | key | u16 n | value)
//	             → {"handle": h, "send": [hex…], "stream"?: true} | {"error": …}
//	             stream: a TCP protocol, which the page asks with the relay's
//	             EXCHANGE (its options), feeding the CHUNKs to STEP
//	             (codecs.NewConversation); send is then what the relay's own
//	             query writes, for the record.
//	0x02 STEP    u32 handle | u32 n | datagram
//	             → {"send": [hex…], "done": bool, "error"?: …, "summary"?: its summary}
//	             The conversation is released once done.
//	0x03 FINISH  u32 handle
//	             → the summary (codecs.AppendSummaryJSON) of what came so far; the
//	             conversation is released.
//
// A request for a closed conversation gets {"error": {"message":
// "conversation is closed"}} and the others run. A request the reader
// cannot make out (unknown type, a length past the end) gets an error
// naming its offset, and the requests after it are not run.
package batch

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// Table holds the open conversations by handle. The zero Table is ready;
// handles start at 1.
type Table struct {
	conv map[int]*conversation
	next int
}

// Len is the number of open conversations.
func (t *Table) Len() int { return len(t.conv) }

// conversation is one server's, as the table holds it.
type conversation struct {
	q codecs.Query
	// sent is the last datagram the conversation asked to send: the query
	// a reply answers, which step and finish decode the result against.
	sent []byte
}

// sending records the last of dgs as the query replies answer.
func (c *conversation) sending(dgs [][]byte) {
	if len(dgs) > 0 {
		c.sent = dgs[len(dgs)-1]
	}
}

// appendStep feeds reply b and appends STEP's result: {"send": [hex…],
// "done": bool, "error"?: the feed error, "summary"?: the summary
// (codecs.AppendSummaryJSON) once done}. It reports whether the message is
// complete.
//
// Out of line: run would otherwise carry an inlined copy of it, as
// of the other helpers of batch below, growing the browser module (see
// "Code size" in codecs/doc.go).
//
//go:noinline
func (c *conversation) appendStep(dst []byte, b []byte) ([]byte, bool) {
	send, done, err := c.q.Feed(b)
	c.sending(send)
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
	return append(dst, '}'), done
}

// appendSummary appends the summary (codecs.AppendSummaryJSON) of what was
// received.
//
// Out of line: as appendStep; see "Code size" in codecs/doc.go.
//
//go:noinline
func (c *conversation) appendSummary(dst []byte) []byte {
	m, err := c.q.Result(codecs.DecodeOptions{Query: c.sent, NoFields: true})
	return codecs.AppendSummaryJSON(dst, m, err)
}

// Request types.
const (
	reqOpen   = 0x01
	reqStep   = 0x02
	reqFinish = 0x03
)

// Run runs the requests in b, in order, and appends the JSON array of
// their results to dst.
func (t *Table) Run(dst, b []byte) []byte {
	dst = append(dst, '[')
	for off, i := 0, 0; off < len(b); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		var next int
		var ok bool
		dst, next, ok = t.run(dst, b, off)
		if !ok {
			break
		}
		off = next
	}
	return append(dst, ']')
}

// run runs the request at b[off:] and appends its result. It returns the
// offset of the next request, or false (with an error result appended)
// when the request cannot be read.
func (t *Table) run(dst, b []byte, off int) ([]byte, int, bool) {
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
		return t.appendOpen(dst, name, opts), r.off, true
	case reqStep:
		h := int(r.u32())
		d := r.bytes(int(r.u32()))
		if r.bad {
			return batchError(dst, "STEP", off), 0, false
		}
		c, ok := t.conv[h]
		if !ok {
			return appendClosed(dst), r.off, true
		}
		// The codecs may keep the datagram (a segment waiting for the
		// others), and the caller reuses b.
		dst, done := c.appendStep(dst, append([]byte(nil), d...))
		if done {
			delete(t.conv, h)
		}
		return dst, r.off, true
	case reqFinish:
		h := int(r.u32())
		if r.bad {
			return batchError(dst, "FINISH", off), 0, false
		}
		c, ok := t.conv[h]
		if !ok {
			return appendClosed(dst), r.off, true
		}
		delete(t.conv, h)
		return c.appendSummary(dst), r.off, true
	default:
		return appendMessage(dst, "batch: unknown request type 0x"+strconv.FormatUint(uint64(typ), 16)+" at offset "+strconv.Itoa(off)), 0, false
	}
}

// appendOpen starts a conversation and appends {"handle", "send"} or the
// error object.
//
// Out of line: as appendStep; see "Code size" in codecs/doc.go.
//
//go:noinline
func (t *Table) appendOpen(dst []byte, name string, opts map[string]string) []byte {
	c, err := codecs.Lookup(name)
	if err != nil {
		return codecs.AppendJSON(dst, codecs.ErrorObject(err, nil))
	}
	q, stream, err := codecs.NewConversation(c, opts)
	if err != nil {
		return codecs.AppendJSON(dst, codecs.ErrorObject(err, nil))
	}
	if t.conv == nil {
		t.conv = map[int]*conversation{}
	}
	t.next++
	h := t.next
	conv := &conversation{q: q}
	t.conv[h] = conv
	dgs := q.Start()
	conv.sending(dgs)
	dst = append(dst, `{"handle":`...)
	dst = strconv.AppendInt(dst, int64(h), 10)
	if stream {
		dst = append(dst, `,"stream":true`...)
	}
	return append(appendSend(append(dst, ','), dgs), '}')
}

// appendSend appends "send": [hex…].
//
// Out of line: as appendStep; see "Code size" in codecs/doc.go.
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
// Out of line: as appendStep; see "Code size" in codecs/doc.go.
//
//go:noinline
func appendMessage(dst []byte, msg string) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = codecs.AppendJSONString(dst, msg)
	return append(dst, "}}"...)
}

// batchError reports a request that ends before its fields do.
//
// Out of line: as appendStep; see "Code size" in codecs/doc.go.
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

// Out of line: as appendStep; see "Code size" in codecs/doc.go.
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
