// Package wire is the cursor the protocol packages decode with: it consumes
// as it reads, its first error sticks (later reads return zero values and
// leave the error alone), and it optionally records a codecs.Span for every
// field it reads.
//
//	r := wire.NewReader("zandronum", payload, 1, spans)
//	code := r.U32LE("response")
//	name := r.CString("name")
//	return resp, r.Err()
//
// Field paths are built from a stack (Enter/Leave) only when a span or an
// error needs them, so decoding with spans off does not allocate for names.
package wire

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
)

type pathElem struct {
	_     [0]func() // not comparable: no equality function to compile
	name  string
	index int // -1: not a list element
}

// Reader is a decoding cursor over one layer's bytes.
type Reader struct {
	proto string
	b     []byte
	off   int
	base  int // offset of b[0] within its layer (for sub-readers)
	layer int
	spans *[]codecs.Span
	path  []pathElem
	err   *codecs.Error
}

// NewReader returns a cursor over b, which is layer number layer of the
// message. spans may be nil (no recording).
func NewReader(proto string, b []byte, layer int, spans *[]codecs.Span) *Reader {
	return &Reader{proto: proto, b: b, layer: layer, spans: spans}
}

// Reset reuses r for new bytes, keeping its span sink.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Reset(b []byte, layer int) {
	r.b, r.off, r.base, r.layer, r.path, r.err = b, 0, 0, layer, r.path[:0], nil
}

// Err returns the first error, or nil. The returned value is a *codecs.Error.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Err() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

// Failed reports whether a read has failed.
func (r *Reader) Failed() bool { return r.err != nil }

// Offset is the current position in the layer.
func (r *Reader) Offset() int { return r.base + r.off }

// Len is the number of unread bytes.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Empty reports whether every byte was read (or a read failed).
func (r *Reader) Empty() bool { return r.err != nil || r.off >= len(r.b) }

// Rest returns the unread bytes without consuming them.
func (r *Reader) Rest() []byte { return r.b[r.off:] }

// Recording reports whether spans are being recorded, so a decoder can skip
// building display values when nobody will see them.
func (r *Reader) Recording() bool { return r.spans != nil }

// Enter pushes a path element: Enter("players", 3) then U8("team") records
// "players[3].team". index < 0 means a plain name ("limits.fraglimit").
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Enter(name string, index int) {
	r.path = append(r.path, pathElem{name: name, index: index})
}

// Leave pops the last path element.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Leave() { r.path = r.path[:len(r.path)-1] }

// Path returns the full dotted path of field under the current stack.
func (r *Reader) Path(field string) string {
	if len(r.path) == 0 {
		return field
	}
	var b []byte
	for _, p := range r.path {
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, p.name...)
		if p.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.index), 10)
			b = append(b, ']')
		}
	}
	if field != "" {
		b = append(b, '.')
		b = append(b, field...)
	}
	return string(b)
}

// Fail records err for field at the current offset, unless an error is
// already recorded.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Fail(field string, err error) { r.FailAt(field, r.Offset(), err) }

// FailAt records err for field at offset off (layer-relative).
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) FailAt(field string, off int, err error) {
	if r.err == nil {
		r.err = &codecs.Error{Protocol: r.proto, Field: r.Path(field), Offset: off, Err: err}
	}
}

// Span records a span for field over [start, Offset()) with the given kind
// and display value. start is a layer offset as returned by Offset. Callers
// that compute an expensive value should check Recording first.
func (r *Reader) Span(field, kind string, start int, value string) {
	if r.spans == nil || r.err != nil {
		return
	}
	*r.spans = append(*r.spans, codecs.Span{Layer: r.layer, Start: start, End: r.Offset(), Field: r.Path(field), Kind: kind, Value: value})
}

// take consumes n bytes for field, or fails with ErrShort.
func (r *Reader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.Fail(field, codecs.ErrShort)
		return nil
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v
}

func (r *Reader) uspan(field, kind string, start int, v uint64) {
	if r.spans != nil && r.err == nil {
		r.Span(field, kind, start, strconv.FormatUint(v, 10))
	}
}

func (r *Reader) sspan(field, kind string, start int, v int64) {
	if r.spans != nil && r.err == nil {
		r.Span(field, kind, start, strconv.FormatInt(v, 10))
	}
}

// U8 reads one byte.
func (r *Reader) U8(field string) uint8 {
	start := r.Offset()
	b := r.take(field, 1)
	if b == nil {
		return 0
	}
	r.uspan(field, "u8", start, uint64(b[0]))
	return b[0]
}

// Bool reads one byte as 0/1 (any non-zero is true).
func (r *Reader) Bool(field string) bool {
	start := r.Offset()
	b := r.take(field, 1)
	if b == nil {
		return false
	}
	if r.spans != nil {
		r.Span(field, "bool", start, strconv.FormatBool(b[0] != 0))
	}
	return b[0] != 0
}

// U16LE reads a little-endian uint16.
func (r *Reader) U16LE(field string) uint16 {
	start := r.Offset()
	b := r.take(field, 2)
	if b == nil {
		return 0
	}
	v := binary.LittleEndian.Uint16(b)
	r.uspan(field, "u16le", start, uint64(v))
	return v
}

// U16BE reads a big-endian uint16.
func (r *Reader) U16BE(field string) uint16 {
	start := r.Offset()
	b := r.take(field, 2)
	if b == nil {
		return 0
	}
	v := binary.BigEndian.Uint16(b)
	r.uspan(field, "u16be", start, uint64(v))
	return v
}

// S16LE reads a little-endian int16.
func (r *Reader) S16LE(field string) int16 {
	start := r.Offset()
	b := r.take(field, 2)
	if b == nil {
		return 0
	}
	v := int16(binary.LittleEndian.Uint16(b))
	r.sspan(field, "s16le", start, int64(v))
	return v
}

// S16BE reads a big-endian int16.
func (r *Reader) S16BE(field string) int16 {
	start := r.Offset()
	b := r.take(field, 2)
	if b == nil {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(b))
	r.sspan(field, "s16be", start, int64(v))
	return v
}

// U32LE reads a little-endian uint32.
func (r *Reader) U32LE(field string) uint32 {
	start := r.Offset()
	b := r.take(field, 4)
	if b == nil {
		return 0
	}
	v := binary.LittleEndian.Uint32(b)
	r.uspan(field, "u32le", start, uint64(v))
	return v
}

// U32BE reads a big-endian uint32.
func (r *Reader) U32BE(field string) uint32 {
	start := r.Offset()
	b := r.take(field, 4)
	if b == nil {
		return 0
	}
	v := binary.BigEndian.Uint32(b)
	r.uspan(field, "u32be", start, uint64(v))
	return v
}

// S32LE reads a little-endian int32.
func (r *Reader) S32LE(field string) int32 {
	start := r.Offset()
	b := r.take(field, 4)
	if b == nil {
		return 0
	}
	v := int32(binary.LittleEndian.Uint32(b))
	r.sspan(field, "s32le", start, int64(v))
	return v
}

// F32LE reads a little-endian IEEE-754 single.
func (r *Reader) F32LE(field string) float32 {
	start := r.Offset()
	b := r.take(field, 4)
	if b == nil {
		return 0
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(b))
	if r.spans != nil {
		r.Span(field, "f32le", start, strconv.FormatFloat(float64(v), 'g', -1, 32))
	}
	return v
}

// Bytes reads n raw bytes (aliasing the input).
func (r *Reader) Bytes(field string, n int) []byte {
	start := r.Offset()
	b := r.take(field, n)
	if b != nil && r.spans != nil {
		r.Span(field, "bytes", start, string(codecs.AppendHex(nil, b)))
	}
	return b
}

// Skip consumes n bytes for field without recording a span and returns them
// (aliasing the input), for encodings the caller interprets itself and then
// describes with Mark (Bloodmasters' 7-bit length-prefixed strings). It
// fails with ErrShort like every read.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Skip(field string, n int) []byte { return r.take(field, n) }

// CString reads bytes up to a NUL terminator and consumes the terminator.
// The result aliases the input and excludes the NUL. A missing terminator
// fails with ErrShort at the string's start. The span's value is the text
// as Latin-1.
func (r *Reader) CString(field string) []byte {
	if r.err != nil {
		return nil
	}
	start := r.Offset()
	rest := r.b[r.off:]
	for i, c := range rest {
		if c == 0 {
			r.off += i + 1
			if r.spans != nil {
				r.Span(field, "cstring", start, codecs.Latin1(rest[:i]))
			}
			return rest[:i:i]
		}
	}
	r.FailAt(field, start, codecs.Detail(codecs.ErrShort, "string has no terminator"))
	return nil
}

// Mark records a span over [start, Offset()) for a value the caller decoded
// itself (a group such as one player, or a custom encoding).
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Mark(field, kind string, start int, value string) { r.Span(field, kind, start, value) }

// Sub returns a reader over the next n bytes (consumed from r) that records
// into the same span sink with the same path, with offsets continuing r's.
// Errors in the sub-reader do not propagate; call r.Adopt(sub) for that.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Sub(field string, n int) *Reader {
	start := r.Offset()
	b := r.take(field, n)
	s := &Reader{proto: r.proto, b: b, base: start, layer: r.layer, spans: r.spans, path: append([]pathElem(nil), r.path...)}
	if b == nil {
		s.err = r.err
	}
	return s
}

// Adopt copies sub's error into r if r has none.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Reader) Adopt(sub *Reader) {
	if r.err == nil && sub.err != nil {
		r.err = sub.err
	}
}

// Msg returns format with each "%d" replaced by the next of args in
// decimal.
func Msg(format string, args ...int64) string {
	b := make([]byte, 0, len(format)+8*len(args))
	for i := 0; i < len(format); i++ {
		if format[i] == '%' && i+1 < len(format) && format[i+1] == 'd' && len(args) > 0 {
			b = strconv.AppendInt(b, args[0], 10)
			args = args[1:]
			i++
			continue
		}
		b = append(b, format[i])
	}
	return string(b)
}

// Detailf is codecs.Detail(sentinel, Msg(format, args...)).
func Detailf(sentinel error, format string, args ...int64) error {
	return codecs.Detail(sentinel, Msg(format, args...))
}

// TrimSpace is strings.TrimSpace: s without leading and trailing white
// space as Unicode defines it.
func TrimSpace(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !isSpace(r) {
			break
		}
		s = s[n:]
	}
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !isSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// isSpace is unicode.IsSpace.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}
