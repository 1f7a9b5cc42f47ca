package huffman

import (
	"encoding/binary"
	"slices"
)

// Encode appends the datagram carrying src to dst and returns the extended
// slice, using the rule of the current (2013 and later) Zandronum encoder:
// Huffman form (padding-count byte, then the codes least-significant bit
// first, zero padding) unless the codes need more than len(src) bytes, in
// which case the raw form 0xff followed by src. The result is never longer
// than len(src)+1 bytes. The empty payload encodes to the single byte 00.
func Encode(dst, src []byte) []byte {
	if len(src) == 0 {
		return append(dst, 0)
	}
	return encode(dst, src, len(src))
}

// EncodeLegacy is Encode with the rule of the pre-2013 encoder (Skulltag,
// Zandronum 1.x, qstat): raw form whenever 1+k >= len(src)+1 for k bytes of
// codes, i.e. Huffman only when it is strictly shorter, and 0xff alone for
// the empty payload. It differs from Encode only for the empty payload and
// when k == len(src) (see IsLegacy). Use it to test or to emulate old
// servers; its padding bits are zero, not the garbage old servers sent.
func EncodeLegacy(dst, src []byte) []byte {
	if len(src) == 0 {
		return append(dst, rawMarker)
	}
	return encode(dst, src, len(src)-1)
}

// encode writes the Huffman form of a non-empty src if its codes fit in
// limit bytes, and the raw form otherwise. limit is at most len(src).
func encode(dst, src []byte, limit int) []byte {
	base := len(dst)
	// Both forms fit in len(src)+1 bytes, a bound set by the input size.
	dst = slices.Grow(dst, len(src)+1)
	out := dst[base+1 : base+1+len(src)] // room for the codes after byte 0

	var (
		acc uint64 // pending code bits, the oldest in bit 0
		na  uint   // how many low bits of acc are pending
		o   int    // bytes of out written
		j   int    // next byte of src
	)

	// Fast path: OR five codes (at most 50 bits) above the fewer than 8
	// pending bits, so at most 57 bits are pending and nothing overflows
	// the 64-bit accumulator. Then store all 8 bytes of acc at once and
	// advance by the whole bytes only (na>>3); the partial byte stays in
	// acc and is rewritten, completed, by the next store. acc >>= na&^7
	// drops exactly the bytes advanced over (na&^7 <= 56, a legal shift).
	// The store needs o+8 <= len(out); the codes overflow limit as soon as
	// o > limit, which lets incompressible input bail out early.
	for j+5 <= len(src) && o+8 <= len(out) {
		e0 := encTable[src[j]]
		e1 := encTable[src[j+1]]
		e2 := encTable[src[j+2]]
		e3 := encTable[src[j+3]]
		e4 := encTable[src[j+4]]
		j += 5
		acc |= uint64(e0>>4) << na
		na += uint(e0 & 15)
		acc |= uint64(e1>>4) << na
		na += uint(e1 & 15)
		acc |= uint64(e2>>4) << na
		na += uint(e2 & 15)
		acc |= uint64(e3>>4) << na
		na += uint(e3 & 15)
		acc |= uint64(e4>>4) << na
		na += uint(e4 & 15)

		binary.LittleEndian.PutUint64(out[o:], acc)
		o += int(na >> 3)
		acc >>= na &^ 7
		na &= 7
		if o > limit {
			return appendRaw(dst[:base], src)
		}
	}

	// Tail: one code at a time, flushing whole bytes one by one. A byte
	// written at index o makes the code at least o+1 bytes long.
	for ; j < len(src); j++ {
		e := encTable[src[j]]
		acc |= uint64(e>>4) << na
		na += uint(e & 15)
		for na >= 8 {
			if o >= limit {
				return appendRaw(dst[:base], src)
			}
			out[o] = byte(acc)
			o++
			acc >>= 8
			na -= 8
		}
	}
	pad := byte(0)
	if na > 0 {
		if o >= limit {
			return appendRaw(dst[:base], src)
		}
		out[o] = byte(acc) // the bits above na are zero: zero padding
		o++
		pad = byte(8 - na)
	}
	dst = dst[:base+1+o]
	dst[base] = pad
	return dst
}

func appendRaw(dst, src []byte) []byte {
	return append(append(dst, rawMarker), src...)
}
