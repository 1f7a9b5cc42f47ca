package huffman

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
	"strconv"
)

// MaxDecoded is the largest payload Decode produces: Zandronum's decoded
// receive buffer, (8192*8)/3+1 bytes (an 8192-byte packet of the shortest,
// 3-bit, codes, plus one).
const MaxDecoded = 21846

// rawMarker as the first byte of a datagram means "sent unencoded".
const rawMarker = 0xff

// Sentinel errors carried by *Error. Compare with errors.Is.
var (
	// ErrEmpty: the datagram has no bytes at all, so not even the
	// padding-count byte.
	ErrEmpty = errors.New("empty datagram")
	// ErrIncompleteCode: the meaningful bits end in the middle of a code.
	// No encoder produces this; the datagram is truncated or corrupt.
	ErrIncompleteCode = errors.New("bit stream ends inside a code")
	// ErrTooLong: the payload would exceed MaxDecoded bytes.
	ErrTooLong = errors.New("decoded payload exceeds " + strconv.Itoa(MaxDecoded) + " bytes")
)

// Error reports a datagram Decode could not fully decode, in the manner of
// compress/flate's CorruptInputError: Offset is the byte offset in the
// datagram (counting the padding-count byte as offset 0) where the problem
// was found, and Err is one of the sentinels above.
type Error struct {
	Offset int
	Err    error
}

func (e *Error) Error() string {
	return "huffman: " + e.Err.Error() + " at offset " + strconv.Itoa(e.Offset)
}

func (e *Error) Unwrap() error { return e.Err }

// Decode appends the payload carried by the datagram src to dst and
// returns the extended slice.
//
// A first byte of 0xff means the rest of src is the payload as is. Any
// other first byte p is the number of padding bits in the last byte: the
// stream is the following (len(src)-1)*8-p bits, least-significant bit of
// each byte first. Values 8..254, which no encoder writes, shorten the
// stream accordingly (to nothing when the count is not positive), as the
// current Zandronum decoder does. Padding bits are ignored whatever their
// value, so packets from the legacy encoder, which left them uninitialised,
// decode too.
//
// On error the returned slice holds dst plus every byte decoded before the
// problem, and the error is an *Error: ErrEmpty for an empty src,
// ErrIncompleteCode when the stream ends inside a code, ErrTooLong when the
// payload would exceed MaxDecoded bytes (the first MaxDecoded are
// returned). Decode never returns more than MaxDecoded bytes beyond
// len(dst), and it grows dst by at most min(8*len(src)/3, MaxDecoded).
func Decode(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst, &Error{Offset: 0, Err: ErrEmpty}
	}
	if src[0] == rawMarker {
		p := src[1:]
		if len(p) > MaxDecoded {
			return append(dst, p[:MaxDecoded]...), &Error{Offset: 1 + MaxDecoded, Err: ErrTooLong}
		}
		return append(dst, p...), nil
	}
	data := src[1:]
	total := len(data)*8 - int(src[0])
	if total <= 0 {
		return dst, nil
	}

	// Every code is at least minCodeLen bits, so total/minCodeLen bounds
	// the output; growing once up front lets the loops store by index.
	room := min(total/minCodeLen, MaxDecoded)
	base := len(dst)
	dst = slices.Grow(dst, room)
	out := dst[base : base+room]

	initMultiTable()
	o, pos := 0, 0
	// decodeSplit sizes its two output regions from the bound
	// total/minCodeLen; when out was capped at MaxDecoded, decode in one
	// piece.
	if total >= splitMinBits && room == total/minCodeLen {
		o, pos = decodeSplit(out, data, total)
	}
	o, pos = decodeSeq(out, data, total, o, pos)

	// The fast decoders stop fewer than batchBits bits before the end
	// (or when out is nearly full). Near the end, continue on a
	// zero-padded copy of what is left, so that every load is a plain
	// one; skip converts positions back for error offsets.
	skip := 0
	if b := pos >> 3; len(data)-b <= 16 {
		var pad [24]byte
		copy(pad[:], data[b:])
		data, skip = pad[:], 8*b
		total, pos = total-skip, pos-skip
	}

	// The rest, one lookup at a time, each checked against the meaningful
	// bits that remain. Whatever the lookup index holds beyond them
	// (padding, or zeros past the end) cannot change the answer for codes
	// that end within them, because the code is prefix-free. So a
	// multi-code entry whose codes fit in total-pos bits is taken whole;
	// otherwise a single code is looked up, and if even that one is longer
	// than the bits left, the meaningful bits stop inside a code.
	for pos < total {
		v := peek64(data, pos)
		if o+8 <= len(out) {
			if e := multiTab[uint16(v)]; int(e&0xff) <= total-pos {
				binary.LittleEndian.PutUint64(out[o:], bits.RotateLeft64(e, -16))
				o += int(e >> 8 & 0xff)
				pos += int(e & 0xff)
				continue
			}
		}
		e := decTable[v&tableMask]
		n := int(e & 0xff)
		if n > total-pos {
			return dst[:base+o], &Error{Offset: 1 + (skip+pos)/8, Err: ErrIncompleteCode}
		}
		if o == len(out) {
			return dst[:base+o], &Error{Offset: 1 + (skip+pos)/8, Err: ErrTooLong}
		}
		out[o] = byte(e >> 8)
		o++
		pos += n
	}
	return dst[:base+o], nil
}

// IsLegacy reports whether src is a datagram that only the legacy
// (Skulltag, Zandronum 1.x and before) encoder produces, so a caller can
// warn about an old server: either a lone 0xff (the legacy encoding of the
// empty payload; the current one is 00), or the raw 0xff form for a
// payload of n bytes whose Huffman code fits in exactly n bytes (the
// current encoder uses Huffman there, the legacy one fell back to raw).
// Both are still valid and Decode accepts them.
//
// Huffman-form datagrams are never reported, even with nonzero padding
// bits (which only the legacy encoder left behind, but which a corrupt
// packet could show too).
func IsLegacy(src []byte) bool {
	if len(src) == 0 || src[0] != rawMarker {
		return false
	}
	n := len(src) - 1
	if n == 0 {
		return true
	}
	return (codeBits(src[1:])+7)/8 == n
}

// codeBits returns the number of bits the Huffman code of p takes.
func codeBits(p []byte) int {
	b := 0
	for _, c := range p {
		b += int(encTable[c] & 15)
	}
	return b
}
