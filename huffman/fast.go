package huffman

import (
	"encoding/binary"
	"math/bits"
)

// The fast decoders work in batches of batchLookups lookups in multiTab,
// each consuming at most multiBits bits of a 64-bit bit buffer that holds
// at least 57 valid bits when the batch starts, and writing the batch's
// symbols through a window of windowSize bytes of out.
const (
	batchLookups = 3
	batchBits    = batchLookups * multiBits
	windowSize   = 24

	// Streams this long are decoded as two halves at once (decodeSplit).
	splitMinBits = 512
	// How many of the second half's batch boundaries decodeSplit records
	// for resynchronising the halves.
	maxEdges = 16
	// How far past the second half's start the first half runs in batches
	// before it looks for a common boundary. A parse begun at an arbitrary
	// bit of real traffic joins the true parse within 24 bits in half the
	// cases and within 88 in nine cases out of ten, so the first half has
	// usually passed the junction by then and only has to reach the next
	// recorded boundary.
	overshoot = 96
)

// Compile-time checks of the batch arithmetic (a negative constant does not
// convert to uint): a batch fits in the 57 bits a refill guarantees; the
// sums of a batch's bit counts and code counts fit their bytes (see
// decodeSeq); the write offsets before the last lookup, at most
// (batchLookups-1)*multiMaxCodes, are unchanged by the mask 15; and a
// store of 8 bytes at offset 15 or less ends inside the window.
const (
	_ = uint(57 - batchBits)
	_ = uint(255 - batchBits)
	_ = uint(15 - batchLookups*multiMaxCodes)
	_ = uint(15 - (batchLookups-1)*multiMaxCodes)
	_ = uint(windowSize - 15 - 8)
)

// loadClamped returns the 8 bytes of data from index i on, little-endian,
// without reading past the end: it loads the last 8 bytes of data instead
// (last = len(data)-8 >= 0) and shifts the i-last bytes before i out, so
// bytes past the end read as zero. When i >= len(data) none of the bytes
// exist and the value is meaningless (the shift count wraps mod 64); the
// callers only use such values for stream bits past the end of data.
func loadClamped(data []byte, i, last int) uint64 {
	j := min(i, last)
	return binary.LittleEndian.Uint64(data[j:j+8]) >> (uint(i-j) * 8 & 63)
}

// decodeSeq continues decoding at bit pos into out[o:] in batches for as
// long as every index bit of a batch lies inside the total meaningful bits
// (so padding and bytes past the end are never decoded) and out has room
// for the batch's window; it returns the new o and pos. Decode finishes
// the last bits code by code.
//
// The bit buffer w holds stream bits pos, pos+1, ... as its bits 0, 1,
// ...: at least all the bits of the 8 bytes starting with the one that
// holds bit pos, i.e. 64-(pos&7) >= 57 of them. The stream is LSB-first,
// so a little-endian load of that byte shifted right by pos's offset in it
// lines them up.
//
// A lookup: the index is the low 16 bits of w (uint16(w), a zero-extending
// move), the entry e gives the codes there (layout at multiTable), and
// "w >>= e & 63" drops them. That is a single shift instruction: the
// hardware takes shift counts mod 64 anyway, and the entry's byte 0 (its
// bit count, at most 16) is all it sees. This index-load-shift chain is
// what bounds the speed; everything else hangs off it.
//
// The symbols: e's symbols sit in its bytes 2..6, so rotating it right by
// 16 bits brings them to bytes 0..4, and all 8 bytes are stored at once at
// the lookup's offset in the window; the bytes after its c real symbols
// are overwritten by the next lookup or lie past the decoded length. The
// offsets come from adding up the entries (acc): byte 0 of the sum is the
// batch's bit count (at most 48) and byte 1 its code count (at most 15),
// neither of which carries into the byte above, while the sums of symbol
// bytes above them never carry downwards. So after k lookups acc>>8&15 is
// where the next lookup's symbols go and acc&0xff how far the batch got.
// The & 15 changes nothing (the offsets are at most 10) but lets the
// compiler see that an 8-byte store there stays inside the 24-byte window,
// so the stores need no bounds checks.
//
// The refill: after a batch that consumed n bits (9 <= n <= 48, as each
// lookup takes at least one code), the 8 bytes after the ones w was loaded
// from (hi) go in above what is left. hi's bit 0 is stream bit
// 8*(pos>>3)+64, which now sits 64-(pos&7)-n bits (9..55) above w's bit 0;
// the bits of hi shifted past bit 63 are dropped and loaded again by the
// next refill, and where hi overlaps the bits still in w it holds the same
// stream bits, so the OR changes nothing there. This leaves w with 64
// valid bits. loadClamped keeps the loads inside data near its end; the
// bytes it cannot supply lie past the meaningful bits, which no batch
// index reaches.
func decodeSeq(out, data []byte, total, o, pos int) (int, int) {
	if len(data) < 8 || pos > total-batchBits {
		return o, pos
	}
	last := len(data) - 8
	w := loadClamped(data, pos>>3, last) >> (pos & 7)
	for pos <= total-batchBits && o+windowSize <= len(out) {
		// The three lookups are written out rather than left to a helper:
		// the inliner would not inline it on every architecture (wasm
		// prices the 8-byte loads and stores higher), and a call per
		// lookup would cost more than the lookup.
		win := (*[windowSize]byte)(out[o : o+windowSize])
		e0 := multiTab[uint16(w)]
		w >>= e0 & 63
		e1 := multiTab[uint16(w)]
		w >>= e1 & 63
		e2 := multiTab[uint16(w)]
		w >>= e2 & 63
		binary.LittleEndian.PutUint64(win[0:], bits.RotateLeft64(e0, -16))
		binary.LittleEndian.PutUint64(win[e0>>8&15:], bits.RotateLeft64(e1, -16))
		acc := e0 + e1
		binary.LittleEndian.PutUint64(win[acc>>8&15:], bits.RotateLeft64(e2, -16))
		acc += e2
		n := uint(acc & 0xff)
		i := pos>>3 + 8
		j := min(i, last) // loadClamped(data, i, last), written out for wasm
		hi := binary.LittleEndian.Uint64(data[j:j+8]) >> (uint(i-j) * 8 & 63)
		w |= hi << ((64 - (uint(pos&7) + n)) & 63)
		pos += int(n)
		o += int(acc >> 8 & 0xff)
	}
	return o, pos
}

// decodeSplit decodes the stream as two halves at once and returns the
// state from which decodeSeq and Decode's tail continue.
//
// Each lookup waits for the previous one (its shift amount comes from the
// table), so one stream runs at the latency of the index-load-shift chain
// and leaves much of the processor idle. A Huffman code resynchronises:
// decoding begun at an arbitrary bit, possibly inside a code, soon lands
// on a true code boundary, and from there it yields exactly the true
// symbols. So stream A decodes from bit 0 to a little past a point m near
// the middle (overshoot) while stream B decodes from m towards the end,
// both in batches as decodeSeq does (the batch is written out twice, for
// the reason given there); the loop body runs A's batch and then B's, two
// independent chains the processor overlaps. B records its first
// batch boundaries (bit position and output index). A then goes on until
// it lands on one of them: there both parses agree, and B's output from
// that boundary on is moved down to follow A's. A steps a whole table
// entry at a time while that cannot take it past the next recorded
// boundary, and one code at a time otherwise, so it never jumps over a
// boundary it could land on. If A passes all recorded boundaries without
// landing on one (possible with contrived input, rare in practice), B's
// work is dropped and decoding simply continues from A.
//
// Output regions: A writes to out[:bStart], large enough for every code A
// can decode in batches (a code has at least minCodeLen bits) plus its
// window; B writes to out[bStart:] as long as its window fits. B's loads
// stay 16 bytes short of the end of data, so neither half needs
// loadClamped in the loop; decodeSeq takes over from there.
func decodeSplit(out, data []byte, total int) (o, pos int) {
	m := (total - overshoot) / 2
	limA := m + overshoot - batchBits              // A's batches start at or before limA
	limB := min(total-batchBits, 8*(len(data)-16)) // and B's at or before limB
	bStart := limA/minCodeLen + windowSize
	if m <= 0 || limA>>3+16 > len(data) || limB < m || bStart+windowSize > len(out) {
		return 0, 0
	}
	var edgePos, edgeCnt [maxEdges]int
	edgePos[0], edgeCnt[0] = m, bStart // B's start is a boundary of its parse
	ne := 1

	posA, oA := 0, 0
	posB, oB := m, bStart
	wA := binary.LittleEndian.Uint64(data[0:8])
	wB := binary.LittleEndian.Uint64(data[m>>3:m>>3+8]) >> (m & 7)
	for posA <= limA && posB <= limB && oB+windowSize <= len(out) {
		{
			win := (*[windowSize]byte)(out[oA : oA+windowSize])
			e0 := multiTab[uint16(wA)]
			wA >>= e0 & 63
			e1 := multiTab[uint16(wA)]
			wA >>= e1 & 63
			e2 := multiTab[uint16(wA)]
			wA >>= e2 & 63
			binary.LittleEndian.PutUint64(win[0:], bits.RotateLeft64(e0, -16))
			binary.LittleEndian.PutUint64(win[e0>>8&15:], bits.RotateLeft64(e1, -16))
			acc := e0 + e1
			binary.LittleEndian.PutUint64(win[acc>>8&15:], bits.RotateLeft64(e2, -16))
			acc += e2
			n := uint(acc & 0xff)
			hi := binary.LittleEndian.Uint64(data[posA>>3+8 : posA>>3+16])
			wA |= hi << ((64 - (uint(posA&7) + n)) & 63)
			posA += int(n)
			oA += int(acc >> 8 & 0xff)
		}
		{
			win := (*[windowSize]byte)(out[oB : oB+windowSize])
			e0 := multiTab[uint16(wB)]
			wB >>= e0 & 63
			e1 := multiTab[uint16(wB)]
			wB >>= e1 & 63
			e2 := multiTab[uint16(wB)]
			wB >>= e2 & 63
			binary.LittleEndian.PutUint64(win[0:], bits.RotateLeft64(e0, -16))
			binary.LittleEndian.PutUint64(win[e0>>8&15:], bits.RotateLeft64(e1, -16))
			acc := e0 + e1
			binary.LittleEndian.PutUint64(win[acc>>8&15:], bits.RotateLeft64(e2, -16))
			acc += e2
			n := uint(acc & 0xff)
			hi := binary.LittleEndian.Uint64(data[posB>>3+8 : posB>>3+16])
			wB |= hi << ((64 - (uint(posB&7) + n)) & 63)
			posB += int(n)
			oB += int(acc >> 8 & 0xff)
		}
		if ne < maxEdges {
			edgePos[ne], edgeCnt[ne] = posB, oB
			ne++
		}
	}

	// If B stopped first, A goes on alone in batches to its limit.
	oA, posA = decodeSeq(out[:bStart], data, limA+batchBits, oA, posA)

	// Walk A on until it meets a recorded boundary of B. Both sequences
	// increase, so one pass through the edges suffices. The edges lie
	// inside the meaningful bits, so A's steps start inside data; a single
	// code that would end past total cannot meet an edge, and A stops.
	last := len(data) - 8
	j := 0
	for {
		for j < ne && edgePos[j] < posA {
			j++
		}
		if j == ne {
			return oA, posA
		}
		if edgePos[j] == posA {
			break
		}
		v := loadClamped(data, posA>>3, last) >> (posA & 7)
		e := multiTab[uint16(v)]
		if posA+int(e&0xff) > edgePos[j] {
			// One code, as an entry of the same layout.
			d := decTable[v&tableMask]
			e = uint64(d&0xff) | 1<<8 | uint64(d>>8)<<16
		}
		if posA+int(e&0xff) > total || oA+8 > bStart {
			return oA, posA
		}
		binary.LittleEndian.PutUint64(out[oA:], bits.RotateLeft64(e, -16))
		oA += int(e >> 8 & 0xff)
		posA += int(e & 0xff)
	}
	oA += copy(out[oA:], out[edgeCnt[j]:oB])
	return oA, posB
}

// peek64 returns the stream bits from bit pos on as bits 0, 1, ... (at
// least 57 of them, or all that remain), as decodeSeq's buffer holds them;
// bits past the end of data read as zero. pos must lie inside data.
func peek64(data []byte, pos int) uint64 {
	b := pos >> 3
	if b+8 <= len(data) {
		return binary.LittleEndian.Uint64(data[b:]) >> (pos & 7)
	}
	var last [8]byte
	copy(last[:], data[b:])
	return binary.LittleEndian.Uint64(last[:]) >> (pos & 7)
}
