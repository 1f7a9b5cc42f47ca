//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
	"testing"

	"github.com/querylens/querylens/pcapng"
)

// TestCapture drives the capture functions as the worker does: open, feed
// a file in two chunks, read the rows, end; and a file that is not a
// capture gives an error naming the block and offset, as data.
func TestCapture(t *testing.T) {
	srv, _ := pcapng.ParseEndpoint("127.0.0.1:27015")
	file := pcapng.Append(nil, "test", []pcapng.Packet{
		{Target: srv, Data: []byte("\xff\xff\xff\xffTSource Engine Query\x00")},
		{Direction: pcapng.Received, Target: srv, Data: []byte("hello")},
	})
	o := ql.Call("captureOpen")
	h := o.Get("handle")
	if o.Get("rowSize").Int() != 48 {
		t.Errorf("rowSize %d", o.Get("rowSize").Int())
	}
	n := 0
	var eps []string
	for _, chunk := range [][]byte{file[:50], file[50:]} {
		ql.Call("captureFeed", h, bytesToJS(chunk))
		for {
			r := ql.Call("captureNext", h, 1)
			if e := r.Get("error"); !e.IsUndefined() {
				t.Fatalf("captureNext: %s", stringify(e))
			}
			n += r.Get("n").Int()
			if got := len(goBytes(t, r.Get("rows"))); got != 48*r.Get("n").Int() {
				t.Errorf("%d bytes of rows for %d rows", got, r.Get("n").Int())
			}
			for i := 0; i < r.Get("endpoints").Length(); i++ {
				eps = append(eps, r.Get("endpoints").Index(i).String())
			}
			if r.Get("more").Bool() {
				break
			}
		}
	}
	end := ql.Call("captureEnd", h)
	if !end.Get("error").IsUndefined() || end.Get("stats").Get("udp").Int() != 2 {
		t.Errorf("captureEnd: %s", stringify(end))
	}
	if n != 2 || strings.Join(eps, " ") != "0.0.0.0:49152 127.0.0.1:27015" {
		t.Errorf("%d rows, endpoints %q", n, eps)
	}
	if p := ql.Call("capturePayload", h, 0); !p.IsNull() {
		t.Errorf("a payload kept for a row in the file: %s", stringify(p))
	}
	ql.Call("captureClose", h)
	if r := ql.Call("captureNext", h); r.Get("error").Get("message").String() != "capture: no open capture by that handle" {
		t.Errorf("after close: %s", stringify(r))
	}

	bad := ql.Call("captureOpen").Get("handle")
	ql.Call("captureFeed", bad, bytesToJS([]byte("this is not a capture file, not at all")))
	r := ql.Call("captureNext", bad)
	if e := r.Get("error"); e.IsUndefined() || e.Get("block").String() != "file" || e.Get("offset").Int() != 0 {
		t.Errorf("not a capture: %s", stringify(r))
	}
}

// TestHuffman: encode then decode gives the payload back; a bad operation
// or argument is an error as data.
func TestHuffman(t *testing.T) {
	payload := []byte("\xc7\x00\x00\x00\xff\x3f\xfb\xfb\x01\x00\x00\x00")
	wire := goBytes(t, ql.Call("huffman", "encode", bytesToJS(payload)))
	if back := goBytes(t, ql.Call("huffman", "decode", bytesToJS(wire))); string(back) != string(payload) {
		t.Errorf("decode(encode(p)) = %x, want %x", back, payload)
	}
	for _, v := range []js.Value{ql.Call("huffman", "squash", bytesToJS(payload)), ql.Call("huffman", "encode")} {
		if v.Get("error").IsUndefined() {
			t.Errorf("want an error, got %s", stringify(v))
		}
	}
}
