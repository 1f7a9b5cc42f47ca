package codecs

import (
	"errors"
	"strconv"
)

// Sentinel errors wrapped by Error. Compare with errors.Is.
var (
	ErrShort       = errors.New("short buffer")
	ErrBadMagic    = errors.New("bad magic")
	ErrTooLong     = errors.New("too long")
	ErrBadValue    = errors.New("bad value")
	ErrUnknownCode = errors.New("unknown response code")
	ErrTrailing    = errors.New("trailing bytes")
	ErrIncomplete  = errors.New("incomplete message")
	ErrNotQuery    = errors.New("not a query")
	ErrUnknown     = errors.New("unknown protocol")
	ErrUndetected  = errors.New("no protocol recognises this datagram")
	ErrHuffman     = errors.New("corrupt huffman data")
)

// Error is the one error type every codec returns. Field is a dotted path
// ("players[2].ping"); Offset is the byte offset in the layer being read
// where the problem was found; Layer names that layer when a message has
// more than one ("payload", "segment 2").
type Error struct {
	Protocol string
	Field    string
	Offset   int
	Layer    string
	Err      error
}

func (e *Error) Error() string {
	s := e.Protocol + ": " + e.Field + " at offset " + strconv.Itoa(e.Offset)
	if e.Layer != "" {
		s += " of " + e.Layer
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Message returns the description without the location prefix, as docs/protocols/json.md's
// error.message wants it.
func (e *Error) Message() string {
	if e.Err == nil {
		return "error"
	}
	return e.Err.Error()
}

// Errorf-free constructor used by the protocol packages.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func NewError(protocol, field string, offset int, err error) *Error {
	return &Error{Protocol: protocol, Field: field, Offset: offset, Err: err}
}

// Detail wraps a sentinel with extra text while keeping errors.Is working:
// errors.Is(Detail(ErrBadValue, "game mode 99"), ErrBadValue) is true.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func Detail(sentinel error, text string) error {
	return &detailError{sentinel: sentinel, text: text}
}

type detailError struct {
	_        [0]func() // not comparable: no equality function to compile
	sentinel error
	text     string
}

func (d *detailError) Error() string { return d.sentinel.Error() + ": " + d.text }
func (d *detailError) Unwrap() error { return d.sentinel }

// CheckQueryLen is the first step of every Codec.CheckQuery: a datagram
// longer than max, the longest query a real client of the protocol sends,
// is refused with ErrTooLong at offset max before anything is parsed.
func CheckQueryLen(protocol string, b []byte, max int) error {
	if len(b) <= max {
		return nil
	}
	return &Error{Protocol: protocol, Field: "datagram", Offset: max, Err: Detail(ErrTooLong,
		strconv.Itoa(len(b))+" bytes; a client's query is at most "+strconv.Itoa(max))}
}
