//go:build js && wasm

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall/js"
	"testing"
	"unsafe"

	"github.com/querylens/querylens/codecs"
)

// echoCodec is a protocol made up for these tests, so that the boundary is
// tested on its own: a query is "Q" plus a name to echo; the server answers
// "C" (a challenge) first when the query carries no token, then "R" + name.
type echoCodec struct{}

func (echoCodec) Name() string     { return "echotest" }
func (echoCodec) Title() string    { return "Echo (test)" }
func (echoCodec) DefaultPort() int { return 7 }
func (echoCodec) Options() []codecs.Option {
	return []codecs.Option{{Name: "name", Kind: "choice", Default: "a", Choices: []string{"a", "b"}, Help: "what to echo"}}
}

func (echoCodec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case len(b) > 0 && b[0] == 'Q':
		return codecs.KindQuery, codecs.Certain
	case len(b) > 0 && b[0] == 'R':
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}

func (echoCodec) CheckQuery(b []byte) error {
	if len(b) == 0 || b[0] != 'Q' {
		return codecs.NewError("echotest", "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}

func (echoCodec) Decode(dgs [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	b := dgs[0]
	m := &codecs.Message{Protocol: "echotest"}
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
		m.Spans = []codecs.Span{{Start: 0, End: 1, Field: "magic", Kind: "u8", Value: string(b[:1])}}
	}
	switch {
	case len(b) == 0:
		return m, codecs.NewError("echotest", "magic", 0, codecs.ErrShort)
	case b[0] == 'Q':
		m.Kind = codecs.KindQuery
	case b[0] == 'R':
		m.Kind = codecs.KindResponse
		m.Info = &codecs.Info{Has: codecs.HasName, Name: string(b[1:])}
		m.Fields = codecs.Object{{Key: "name", Value: string(b[1:])}}
		if len(b) < 2 {
			return m, codecs.NewError("echotest", "name", 1, codecs.ErrShort)
		}
	default:
		return m, codecs.NewError("echotest", "magic", 0, codecs.ErrBadMagic)
	}
	if opt.Spans && len(b) > 1 {
		m.Spans = append(m.Spans, codecs.Span{Start: 1, End: len(b), Field: "name", Kind: "bytes", Value: string(b[1:])})
	}
	return m, nil
}

func (echoCodec) NewQuery(opts map[string]string) (codecs.Query, error) {
	name := "a"
	for k, v := range opts {
		if k != "name" {
			return nil, codecs.NewError("echotest", "options."+k, 0, codecs.ErrUnknown)
		}
		name = v
	}
	return &echoQuery{name: name}, nil
}

type echoQuery struct {
	name  string
	reply []byte
}

func (q *echoQuery) Start() [][]byte { return [][]byte{[]byte("Q" + q.name)} }

func (q *echoQuery) Feed(b []byte) ([][]byte, bool, error) {
	switch {
	case len(b) == 5 && b[0] == 'C':
		tok := binary.BigEndian.Uint32(b[1:])
		return [][]byte{binary.BigEndian.AppendUint32([]byte("Q"+q.name), tok)}, false, nil
	case len(b) > 0 && b[0] == 'R':
		q.reply = b
		return nil, true, nil
	}
	return nil, false, codecs.NewError("echotest", "reply", 0, errors.New("not mine"))
}

func (q *echoQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: "echotest", Kind: codecs.KindResponse}, codecs.NewError("echotest", "reply", 0, codecs.ErrIncomplete)
	}
	return echoCodec{}.Decode([][]byte{q.reply}, opt)
}

var ql js.Value

func TestMain(m *testing.M) {
	codecs.Register(echoCodec{})
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
	for _, name := range []string{"protocols", "detect", "buildQuery", "newQuery", "decode", "inspect", "pcapng"} {
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
	m, err := echoCodec{}.Decode([][]byte{[]byte("Rhello")}, codecs.DecodeOptions{})
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

// Request encoders for batch, as web/static/relay.js writes them.
func reqOpenBytes(protocol string, opts ...string) []byte {
	b := append([]byte{reqOpen, byte(len(protocol))}, protocol...)
	b = append(b, byte(len(opts)/2))
	for i := 0; i+1 < len(opts); i += 2 {
		b = append(append(b, byte(len(opts[i]))), opts[i]...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(opts[i+1])))
		b = append(b, opts[i+1]...)
	}
	return b
}

func reqStepBytes(h int, d string) []byte {
	b := binary.BigEndian.AppendUint32([]byte{reqStep}, uint32(h))
	b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
	return append(b, d...)
}

func reqFinishBytes(h int) []byte { return binary.BigEndian.AppendUint32([]byte{reqFinish}, uint32(h)) }

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

// TestBatch is the worker's path: conversations opened, stepped once per
// reply (released once complete) and finished after a timeout, many per
// call, with the handles the first batch gave.
func TestBatch(t *testing.T) {
	h := nextHandle
	got := runJS(t, reqOpenBytes("echotest", "name", "b"), reqOpenBytes("echotest"),
		reqOpenBytes("nosuch"), reqOpenBytes("echotest", "bogus", "1"))
	want := `[{"handle":` + strconv.Itoa(h) + `,"send":["5162"]},{"handle":` + strconv.Itoa(h+1) + `,"send":["5161"]},` +
		`{"error":{"protocol":"nosuch","field":"protocol","offset":0,"message":"unknown protocol"}},` +
		`{"error":{"protocol":"echotest","field":"options.bogus","offset":0,"message":"unknown protocol"}}]`
	if got != want {
		t.Fatalf("open ×4:\n got %s\nwant %s", got, want)
	}
	got = runJS(t, reqStepBytes(h, "C\x00\x00\x01\x02"), reqStepBytes(h+1, "Ra"))
	want = `[{"send":["516200000102"],"done":false},{"send":[],"done":true,"summary":{"kind":"response","row":["a","","",0,0,0,false,"","a\n\n"]}}]`
	if got != want {
		t.Errorf("step ×2:\n got %s\nwant %s", got, want)
	}
	got = runJS(t, reqStepBytes(h+1, "Ra"), reqStepBytes(h, "junk"), reqStepBytes(h, "Rb"), reqFinishBytes(h))
	want = `[{"error":{"message":"conversation is closed"}},` +
		`{"send":[],"done":false,"error":{"protocol":"echotest","field":"reply","offset":0,"message":"not mine"}},` +
		`{"send":[],"done":true,"summary":{"kind":"response","row":["b","","",0,0,0,false,"","b\n\n"]}},` +
		`{"error":{"message":"conversation is closed"}}]`
	if got != want {
		t.Errorf("step after done, stray, reply, finish:\n got %s\nwant %s", got, want)
	}
	// A server that never answers: finish gives the summary and releases.
	h = nextHandle
	runJS(t, reqOpenBytes("echotest"))
	if got := runJS(t, reqFinishBytes(h), reqFinishBytes(h)); !strings.Contains(got, `"message":"incomplete message"`) ||
		!strings.HasSuffix(got, `,{"error":{"message":"conversation is closed"}}]`) {
		t.Errorf("finish twice = %s", got)
	}
	if len(conversations) != 0 {
		t.Errorf("%d conversations left open", len(conversations))
	}
}

// TestBatchBadRequests: a request batch cannot read ends the batch with an
// error naming it and its offset; what came before it ran.
func TestBatchBadRequests(t *testing.T) {
	h := nextHandle
	for _, tc := range []struct {
		name string
		reqs [][]byte
		want string
	}{
		{"empty", nil, `[]`},
		{"unknown type", [][]byte{reqFinishBytes(999), {0x7f, 1, 2}}, `[{"error":{"message":"conversation is closed"}},{"error":{"message":"batch: unknown request type 0x7f at offset 5"}}]`},
		{"step past the end", [][]byte{reqStepBytes(1, "abc")[:8]}, `[{"error":{"message":"batch: STEP request at offset 0 is truncated"}}]`},
		{"hostile step length", [][]byte{{reqStep, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 'R'}}, `[{"error":{"message":"batch: STEP request at offset 0 is truncated"}}]`},
		{"open options past the end", [][]byte{reqOpenBytes("echotest", "name", "b")[:14]}, `[{"error":{"message":"batch: OPEN request at offset 0 is truncated"}}]`},
		{"finish cut", [][]byte{{reqFinish, 0, 0}}, `[{"error":{"message":"batch: FINISH request at offset 0 is truncated"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runJS(t, tc.reqs...); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	for _, n := range []int32{-1, inSize + 1} {
		if got := exportBatch(n); got != -1 {
			t.Errorf("querylens_batch(%d) = %d, want -1", n, got)
		}
	}
	if nextHandle != h || len(conversations) != 0 {
		t.Errorf("bad batches opened conversations: next handle %d (was %d), %d open", nextHandle, h, len(conversations))
	}
}

// FuzzBatch: no request buffer makes batch panic, and its answer is
// always one JSON array.
func FuzzBatch(f *testing.F) {
	f.Add(bytes.Join([][]byte{reqOpenBytes("echotest", "name", "b"), reqStepBytes(1, "Rb"), reqFinishBytes(2)}, nil))
	f.Add([]byte{reqStep, 0, 0, 0, 1, 0, 0, 0, 2, 'R', 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > inSize {
			return
		}
		got := runBatch(nil, b)
		if !js.Global().Get("JSON").Call("parse", string(got)).InstanceOf(jsArray) {
			t.Fatalf("batch(%x) = %s, not an array", b, got)
		}
		for h := range conversations {
			delete(conversations, h)
		}
	})
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
