package deflate

import "math/bits"

// DEFLATE limits (RFC 1951 section 3.2.5).
const (
	minMatch   = 3
	maxMatch   = 258
	windowSize = 32768 // largest distance

	numLitLen   = 288 // literal/length alphabet as the fixed code defines it
	numDist     = 30  // distance alphabet actually used (30 and 31 never occur)
	numCodeLen  = 19  // code-length alphabet
	endOfBlock  = 256 // end-of-block symbol
	maxCodeBits = 15  // longest literal/length or distance code
	maxCLBits   = 7   // longest code-length code
)

// Base lengths and extra bits of length symbols 257..285.
var lengthBase = [29]uint16{
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
}

var lengthExtra = [29]uint8{
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
}

// Base distances and extra bits of distance symbols 0..29.
var distBase = [30]uint16{
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
}

var distExtra = [30]uint8{
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
}

// Order in which the code-length code's lengths are sent.
var codeLenOrder = [numCodeLen]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// lengthSymTab maps a match length 3..258 to its symbol minus 257.
var lengthSymTab = func() (t [maxMatch + 1]uint8) {
	for s := 0; s < len(lengthBase)-1; s++ {
		for l := int(lengthBase[s]); l < int(lengthBase[s])+1<<lengthExtra[s] && l < maxMatch; l++ {
			t[l] = uint8(s)
		}
	}
	// Symbol 284 could also say 258 (227 + 31), but 258 has its own symbol,
	// 285, with no extra bits: RFC 1951 never uses 284 for it.
	t[maxMatch] = uint8(len(lengthBase) - 1)
	return t
}()

// lengthSym returns the length symbol index (0..28, add 257 for the
// literal/length alphabet) of a match length 3..258.
func lengthSym(l int) int { return int(lengthSymTab[l]) }

// distSym returns the distance symbol (0..29) of a distance 1..32768.
// Distances 1..4 have symbols 0..3; above that every power of two is split
// into two symbols, so the symbol is twice the position of the top bit of
// d-1 plus the next bit, less two.
func distSym(d int) int {
	d--
	if d < 4 {
		return d
	}
	n := bits.Len(uint(d)) - 1 // position of the top bit, >= 2
	return 2*n + (d>>(n-1))&1
}

// fixedLitLenBits is the code length of each literal/length symbol in the
// fixed code (RFC 1951 section 3.2.6); the fixed distance code is 5 bits.
func fixedLitLenBits(s int) int {
	switch {
	case s < 144:
		return 8
	case s < 256:
		return 9
	case s < 280:
		return 7
	default:
		return 8
	}
}
