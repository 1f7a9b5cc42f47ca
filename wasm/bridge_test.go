//go:build js && wasm

package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"syscall/js"
	"testing"
	"unsafe"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/wasm/internal/echotest"
)

var ql js.Value

func TestMain(m *testing.M) {
	codecs.Register(echotest.Codec{})
	register()
	ql = js.Global().Get("querylens")
	os.Exit(m.Run())
}

func u8(s string) js.Value { return bytesToJS([]byte(s)) }

func goBytes(t *testing.T, v js.Value) []byte {
	t.Helper()
	b, ok := bytesFromJS(v)
	if !ok {
		t.Fatalf("want a Uint8Array, got %s", js.Global().Get("JSON").Call("stringify", v).String())
	}
	return b
}

// stringify shows a JS value as JSON, for comparisons and failure messages.
func stringify(v js.Value) string { return js.Global().Get("JSON").Call("stringify", v).String() }

func TestNamespace(t *testing.T) {
	for _, name := range []string{"protocols", "detect", "buildQuery", "newQuery", "decode", "inspect", "pcapng", "captureOpen", "captureFeed", "captureNext", "captureEnd", "capturePayload", "captureClose", "huffman", "ref", "hostPort", "detectOrder"} {
		if ql.Get(name).Type() != js.TypeFunction {
			t.Errorf("querylens.%s is %s, want a function", name, ql.Get(name).Type())
		}
	}
	if v := ql.Get("version"); v.Type() != js.TypeString || v.String() == "" {
		t.Errorf("querylens.version = %v", v)
	}
}

func TestProtocols(t *testing.T) {
	list := ql.Call("protocols")
	var found js.Value
	for i := 0; i < list.Length(); i++ {
		if list.Index(i).Get("name").String() == "echotest" {
			found = list.Index(i)
		}
	}
	if found.IsUndefined() {
		t.Fatalf("echotest missing from %s", stringify(list))
	}
	want := `{"name":"echotest","title":"Echo (test)","default_port":7,"options":[{"name":"name","kind":"choice","default":"a","choices":["a","b"],"help":"what to echo"}]}`
	if got := stringify(found); got != want {
		t.Errorf("protocols() entry\n got %s\nwant %s", got, want)
	}
}

func TestDetect(t *testing.T) {
	if got, want := stringify(ql.Call("detect", u8("Rx"))), `{"protocol":"echotest","kind":"response"}`; got != want {
		t.Errorf("detect = %s, want %s", got, want)
	}
	got := ql.Call("detect", u8("\x00\x01\x02"))
	if got.Get("error").Get("message").String() == "" {
		t.Errorf("detect of garbage = %s, want an error object", stringify(got))
	}
}

// TestDecodeMatchesCLI checks that decode returns exactly the JSON the
// codecs produce, which is what the command line prints.
func TestDecodeMatchesCLI(t *testing.T) {
	m, err := echotest.Codec{}.Decode([][]byte{[]byte("Rhello")}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := string(m.AppendJSON(nil))
	for _, proto := range []any{"echotest", nil} {
		if got := stringify(ql.Call("decode", proto, u8("Rhello"))); got != want {
			t.Errorf("decode(%v)\n got %s\nwant %s", proto, got, want)
		}
	}
	// An array of datagrams is accepted as well as one.
	if got := stringify(ql.Call("decode", "echotest", []any{u8("Rhello")})); got != want {
		t.Errorf("decode([…]) = %s", got)
	}
}

func TestDecodeErrorIsData(t *testing.T) {
	got := ql.Call("decode", "echotest", u8("R"))
	e := got.Get("error")
	if e.Get("field").String() != "name" || e.Get("offset").Int() != 1 || e.Get("message").String() != "short buffer" {
		t.Errorf("error = %s", stringify(e))
	}
	if got.Get("partial").Get("kind").String() != "response" {
		t.Errorf("partial = %s", stringify(got.Get("partial")))
	}
	if got := ql.Call("decode", "nosuch", u8("R")); !strings.Contains(stringify(got), "unknown protocol") {
		t.Errorf("unknown protocol: %s", stringify(got))
	}
	if got := ql.Call("decode", "echotest", "not bytes"); got.Get("error").IsUndefined() {
		t.Errorf("bad argument: %s", stringify(got))
	}
}

func TestInspectHasSpans(t *testing.T) {
	got := ql.Call("inspect", nil, u8("Rhi"))
	if got.Get("layers").Index(0).Get("hex").String() != "526869" {
		t.Errorf("layers = %s", stringify(got.Get("layers")))
	}
	spans := got.Get("spans")
	if spans.Length() != 2 || spans.Index(1).Get("field").String() != "name" || spans.Index(1).Get("end").Int() != 3 {
		t.Errorf("spans = %s", stringify(spans))
	}
	if plain := ql.Call("decode", nil, u8("Rhi")); !plain.Get("spans").IsUndefined() {
		t.Errorf("decode without spans has spans: %s", stringify(plain))
	}
	if with := ql.Call("decode", nil, u8("Rhi"), map[string]any{"spans": true}); with.Get("spans").Length() != 2 {
		t.Errorf("decode with {spans:true}: %s", stringify(with))
	}
}

func TestBuildQuery(t *testing.T) {
	got := ql.Call("buildQuery", "echotest", map[string]any{"name": "b"})
	if d := goBytes(t, got.Get("datagrams").Index(0)); string(d) != "Qb" {
		t.Errorf("datagram = %q", d)
	}
	if got := ql.Call("buildQuery", "echotest", map[string]any{"bogus": 1}); got.Get("error").IsUndefined() {
		t.Errorf("unknown option accepted: %s", stringify(got))
	}
	// null option values mean "not set".
	if got := ql.Call("buildQuery", "echotest", map[string]any{"name": nil}); string(goBytes(t, got.Get("datagrams").Index(0))) != "Qa" {
		t.Errorf("null option: %s", stringify(got))
	}
}

// TestConversation drives a challenge exchange the way the page does with
// relay replies.
func TestConversation(t *testing.T) {
	c := ql.Call("newQuery", "echotest", map[string]any{"name": "b"})
	if c.Get("protocol").String() != "echotest" {
		t.Fatalf("newQuery = %s", stringify(c))
	}
	start := c.Call("start")
	if start.Length() != 1 || string(goBytes(t, start.Index(0))) != "Qb" {
		t.Fatalf("start = %s", stringify(start))
	}
	r := c.Call("feed", u8("C\x00\x00\x01\x02"))
	if r.Get("done").Bool() || r.Get("send").Length() != 1 {
		t.Fatalf("feed(challenge) = %s", stringify(r))
	}
	if got := goBytes(t, r.Get("send").Index(0)); !bytes.Equal(got, []byte("Qb\x00\x00\x01\x02")) {
		t.Errorf("challenge answer = %q", got)
	}
	if r := c.Call("feed", u8("zzz")); r.Get("error").IsUndefined() || r.Get("done").Bool() {
		t.Errorf("feed(stray) = %s, want an error and not done", stringify(r))
	}
	r = c.Call("feed", u8("Rb"))
	if !r.Get("done").Bool() || r.Get("send").Length() != 0 {
		t.Fatalf("feed(reply) = %s", stringify(r))
	}
	if got := c.Call("result").Get("info").Get("name").String(); got != "b" {
		t.Errorf("result name = %q", got)
	}
	if got := c.Call("result", map[string]any{"spans": true}).Get("spans").Length(); got != 2 {
		t.Errorf("result with spans has %d spans", got)
	}
	c.Call("close")
	if got := c.Call("start"); got.Get("error").IsUndefined() {
		t.Errorf("start after close = %s, want an error", stringify(got))
	}
	if len(conversations) != 0 {
		t.Errorf("%d conversations left open", len(conversations))
	}
}

// TestBatchExports: the worker's exports run package batch's requests
// from inBuf and leave the JSON array in outBuf (package batch tests the
// requests themselves).
func TestBatchExports(t *testing.T) {
	open := []byte{0x01, 8, 'e', 'c', 'h', 'o', 't', 'e', 's', 't', 1, 4, 'n', 'a', 'm', 'e', 0, 1, 'b'}
	got := runJS(t, open)
	if !strings.HasPrefix(got, `[{"handle":`) || !strings.HasSuffix(got, `,"send":["5162"]}]`) {
		t.Fatalf("OPEN = %s", got)
	}
	h := table.Len()
	step := []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 2, 'R', 'b'} // handle 0: never given
	if got := runJS(t, step); got != `[{"error":{"message":"conversation is closed"}}]` {
		t.Errorf("STEP on an unknown handle = %s", got)
	}
	if table.Len() != h {
		t.Errorf("%d conversations open, want %d", table.Len(), h)
	}
	for _, n := range []int32{-1, inSize + 1} {
		if got := exportBatch(n); got != -1 {
			t.Errorf("querylens_batch(%d) = %d, want -1", n, got)
		}
	}
}

// runJS runs one batch of requests as the worker does: written into
// inBuf, run by the querylens_batch export, read from querylens_out.
func runJS(t *testing.T, reqs ...[]byte) string {
	t.Helper()
	b := bytes.Join(reqs, nil)
	copy(inBuf[:], b)
	n := exportBatch(int32(len(b)))
	if n < 0 {
		t.Fatalf("querylens_batch(%d) = %d", len(b), n)
	}
	if uintptr(exportOut()) != uintptr(unsafe.Pointer(unsafe.SliceData(outBuf))) || int(n) != len(outBuf) {
		t.Fatalf("querylens_out() = %#x for %d bytes; the JSON is at %p, %d bytes", exportOut(), n, unsafe.SliceData(outBuf), len(outBuf))
	}
	return string(outBuf)
}

func TestIncompleteResult(t *testing.T) {
	c := ql.Call("newQuery", "echotest", nil)
	defer c.Call("close")
	got := c.Call("result")
	if got.Get("error").Get("message").String() != "incomplete message" {
		t.Errorf("result before any reply = %s", stringify(got))
	}
}

func TestPcapng(t *testing.T) {
	f := goBytes(t, ql.Call("pcapng", []any{
		map[string]any{"time": 1700000000123.5, "direction": "sent", "target": "127.0.0.1:10666", "data": u8("Qa")},
		map[string]any{"time": 1700000000200.0, "direction": "received", "target": "game.example:10666", "data": u8("Ra")},
	}))
	// SHB, IDB and two EPBs; the pcapng package's own tests check the layout.
	if binary.LittleEndian.Uint32(f) != 0x0a0d0d0a {
		t.Fatalf("not a pcapng section header: % x", f[:8])
	}
	blocks := 0
	for off := 0; off < len(f); blocks++ {
		off += int(binary.LittleEndian.Uint32(f[off+4:]))
	}
	if blocks != 4 {
		t.Errorf("%d blocks, want 4", blocks)
	}
	if !bytes.Contains(f, []byte("target game.example:10666")) {
		t.Errorf("unresolved target not named in a comment")
	}
	if got := ql.Call("pcapng", "nope"); got.Get("error").IsUndefined() {
		t.Errorf("pcapng(bad) = %s", stringify(got))
	}
}
