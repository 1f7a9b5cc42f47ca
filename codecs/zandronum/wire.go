package zandronum

import (
	"errors"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
	"github.com/querylens/querylens/huffman"
)

// scratch is the reusable state of a decode without spans: a buffer for
// the Huffman payloads and a cursor whose path stack keeps its capacity.
// Nothing decoded aliases it: strings and slices in results are copies.
type scratch struct {
	buf []byte
	r   *wire.Reader
}

func newScratch() *scratch {
	return &scratch{buf: make([]byte, 0, 2048), r: wire.NewReader(Protocol, nil, 0, nil)}
}

// keep reports whether s is worth reusing: not what one huge message grew.
func keep(s *scratch) bool {
	s.buf = s.buf[:0]
	return cap(s.buf) <= huffman.MaxDecoded*2
}

// scratchFor takes a scratch whose cursor stands at the start of one
// message: the payload of datagram b when isWire, else b as a plain
// payload, which it also returns.
func scratchFor(b []byte, isWire bool) (*scratch, []byte, error) {
	s := getScratch()
	if isWire {
		var err error
		if s.buf, err = unwrap(s.buf, b, "wire"); err != nil {
			putScratch(s)
			return nil, nil, err
		}
		b = s.buf
	}
	s.r.Reset(b, 0)
	return s, b, nil
}

// done puts s back and, for a datagram, names the payload layer in err.
func done(s *scratch, err error, isWire bool) error {
	putScratch(s)
	if isWire {
		err = inLayer(err, "payload")
	}
	return err
}

// unwrap appends the payload of datagram b to dst. A Huffman problem is a
// *codecs.Error in the wire layer, with the byte offset the Huffman
// decoder reported.
func unwrap(dst, b []byte, layer string) ([]byte, error) {
	out, err := huffman.Decode(dst, b)
	if err == nil {
		return out, nil
	}
	off := 0
	text := err.Error()
	if he, ok := errors.AsType[*huffman.Error](err); ok {
		off, text = he.Offset, he.Err.Error()
	}
	return out, newError("huffman", off, layer, codecs.Detail(codecs.ErrHuffman, text))
}

// isLegacy reports a datagram only the legacy encoder produces.
func isLegacy(b []byte) bool { return huffman.IsLegacy(b) }

// wrap appends payload p as a datagram, with the current encoder's rule.
func wrap(dst, p []byte) []byte { return huffman.Encode(dst, p) }

// Wrap appends the datagram carrying payload p (Huffman-encoded with the
// current Zandronum rule) to dst. Every Append* function without the
// Payload suffix is its Payload twin followed by Wrap.
func Wrap(dst, p []byte) []byte { return wrap(dst, p) }

// Unwrap appends the payload carried by datagram b to dst (the Huffman
// layer undone). Errors are *codecs.Error with Field "huffman".
func Unwrap(dst, b []byte) ([]byte, error) { return unwrap(dst, b, "wire") }

// layerNames returns the names of datagram i's two layers among n.
func layerNames(i, n int) (wireName, payloadName string) {
	if n == 1 {
		return "wire", "payload"
	}
	s := strconv.Itoa(i)
	return "wire " + s, "payload " + s
}

// inLayer sets the layer name of a *codecs.Error that has none.
func inLayer(err error, name string) error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*codecs.Error](err); ok && e.Layer == "" {
		e.Layer = name
	}
	return err
}

// sink records layers and spans for a Message when the caller asked for
// them; a nil *sink records nothing, and its methods are no-ops.
type sink struct {
	layers []codecs.Layer
	spans  []codecs.Span
	buf    []byte // the payloads
}

func (s *sink) spanPtr() *[]codecs.Span {
	if s == nil {
		return nil
	}
	return &s.spans
}

// addLayer appends a layer and returns its index (or 0 with no sink).
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (s *sink) addLayer(name string, b []byte, parent int) int {
	if s == nil {
		return 0
	}
	s.layers = append(s.layers, codecs.Layer{Name: name, Bytes: b, Parent: parent})
	return len(s.layers) - 1
}

// wireSpans describes the Huffman framing of datagram b (layer li) that
// decoded to n payload bytes.
func (s *sink) wireSpans(li int, b []byte, n int) {
	if s == nil || len(b) == 0 {
		return
	}
	head := codecs.Span{Layer: li, Start: 0, End: 1, Field: "huffman.padding", Kind: "u8"}
	rest := codecs.Span{Layer: li, Start: 1, End: len(b), Field: "huffman.stream", Kind: "huffman"}
	if b[0] == 0xff {
		head.Field, head.Value = "huffman.marker", "255 = sent unencoded"
		rest.Field, rest.Kind = "huffman.raw", "bytes"
	} else {
		head.Value = wire.Msg("%d padding bits", int64(b[0]))
	}
	s.spans = append(s.spans, head)
	if len(b) > 1 {
		if b[0] == 0xff {
			rest.Value = wire.Msg("%d payload bytes", int64(len(b)-1))
		} else {
			bits := max((len(b)-1)*8-int(b[0]), 0)
			rest.Value = wire.Msg("%d bits = %d payload bytes", int64(bits), int64(n))
		}
		s.spans = append(s.spans, rest)
	}
}

// reader returns a cursor over layer p (number li): the reusable rd when
// nothing is recorded, else a new one recording into the sink.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (s *sink) reader(rd *wire.Reader, p []byte, li int) *wire.Reader {
	if s == nil && rd != nil {
		rd.Reset(p, li)
		return rd
	}
	return wire.NewReader(Protocol, p, li, s.spanPtr())
}

// text is a whole layer as one string, so that ASCII strings of a message
// are substrings of it and cost no allocation of their own.
type text string

// cstring reads a NUL-terminated string at the cursor as Latin-1.
func (t text) cstring(r *wire.Reader, field string) string {
	start := r.Offset()
	return t.of(start, r.CString(field))
}

// of returns b, found at offset start of the layer, as UTF-8.
func (t text) of(start int, b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, c := range b {
		if c >= 0x80 {
			return codecs.Latin1(b)
		}
	}
	if start < 0 || start+len(b) > len(t) {
		return string(b)
	}
	return string(t[start : start+len(b)])
}

// expect32 reads a LONG that must equal want.
func expect32(r *wire.Reader, field string, want uint32) uint32 {
	start := r.Offset()
	v := r.U32LE(field)
	if !r.Failed() && v != want {
		r.FailAt(field, start, wire.Detailf(codecs.ErrBadMagic, "got %d, want %d", int64(v), int64(want)))
	}
	return v
}

// flags32 reads a flag word and records it with its names.
func flags32(r *wire.Reader, field, kind string, names *[32]string) uint32 {
	start := r.Offset()
	b := r.Skip(field, 4)
	if len(b) < 4 {
		return 0
	}
	v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	if r.Recording() {
		// The names without their common prefix keep dumps readable.
		r.Mark(field, kind, start, "0x"+hex32(v)+" "+dropPrefixes(bitNames(v, names)))
	}
	return v
}

// dropPrefixes removes every "SQF2_" and "SQF_" from s.
func dropPrefixes(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		n := 0
		if len(s)-i >= 4 && s[i:i+3] == "SQF" {
			if s[i+3] == '_' {
				n = 4
			} else if len(s)-i >= 5 && s[i+3:i+5] == "2_" {
				n = 5
			}
		}
		if n == 0 {
			b = append(b, s[i])
			i++
			continue
		}
		i += n
	}
	return string(b)
}

func hex32(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	for len(s) < 8 {
		s = "0" + s
	}
	return s
}

// enum8 reads a byte and records it as "value meaning": meaning(value),
// or text when meaning is nil.
func enum8(r *wire.Reader, field string, meaning func(uint8) string, text string) uint8 {
	start := r.Offset()
	b := r.Skip(field, 1)
	if len(b) < 1 {
		return 0
	}
	if r.Recording() {
		if meaning != nil {
			text = meaning(b[0])
		}
		r.Mark(field, "u8", start, wire.Msg("%d ", int64(b[0]))+text)
	}
	return b[0]
}

// markGroup records a span enclosing several fields already recorded
// since span index at, and moves it in front of them so that dumps read in
// order.
func markGroup(r *wire.Reader, spans *[]codecs.Span, at int, field, kind string, start int, value string) {
	if spans == nil {
		return
	}
	n := len(*spans)
	r.Mark(field, kind, start, value)
	s := *spans
	if len(s) == n+1 && at >= 0 && at < n {
		g := s[n]
		copy(s[at+1:], s[at:n])
		s[at] = g
	}
}

func spanCount(spans *[]codecs.Span) int {
	if spans == nil {
		return 0
	}
	return len(*spans)
}
