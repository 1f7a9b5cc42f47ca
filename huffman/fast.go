package huffman

import "encoding/binary"

// The fast decoders work in batches of pairLookups lookups of at most
// pairBits bits each, all taken from a 64-bit bit buffer that holds at
// least 57 valid bits, writing at most batchOut bytes.
const (
	pairLookups = 5
	batchBits   = pairLookups * pairBits
	batchOut    = 2 * pairLookups
	// Each batch writes through a window of this many bytes of out.
	windowSize = 17

	// Streams this long are decoded as two halves at once (decodeSplit).
	splitMinBits = 1024
	// How many of the second half's batch boundaries decodeSplit records
	// for resynchronising the halves.
	maxEdges = 16
)

// Compile-time checks of the batch arithmetic below (a negative constant
// does not convert to uint): a batch fits in the 57 bits a refill
// guarantees, its writes (up to batchOut+1 bytes, see step) fit the
// 17-byte window, and the first code of every pair-table index is
// complete.
const (
	_ = uint(57 - batchBits)
	_ = uint(windowSize - batchOut - 1)
	_ = uint(pairBits - maxCodeLen)
)

// decodeFast decodes from the start of the stream into out for as long as
// whole batches are safe without per-code checks, and returns the bytes
// written and the bits consumed; Decode finishes the rest code by code.
// A batch is safe when its loads stay inside data, every index bit it can
// look at lies inside the total meaningful bits (so padding is never
// decoded) and out has room for its writes.
func decodeFast(out, data []byte, total int) (o, pos int) {
	// decodeSplit sizes its two output regions from the bound total/3;
	// when out was capped at MaxDecoded, decode in one piece.
	if total >= splitMinBits && len(out) == total/minCodeLen {
		o, pos = decodeSplit(out, data, total)
	}
	return decodeSeq(out, data, total, o, pos)
}

// step performs one lookup: the one or two codes at the bottom of *w
// become symbols in win at *k, and their length is dropped from *w and
// added to *n.
//
// The entry's low byte is the length of its codes. The critical path from
// one lookup to the next is mask, load, shift; "*w >>= e & 63" compiles to
// a single shift because the hardware already takes shift counts mod 64.
// The output and the bookkeeping hang off that chain and run beside it.
// Both symbol bytes are stored every time, as one 16-bit store, and *k
// advances by the count (1 or 2), so an unused second byte is overwritten
// by the next lookup or lies beyond the returned length. k never exceeds
// batchOut < 16, so k&15 == k; the mask lets the compiler prove that
// win[k&15:] has the 2 bytes the store needs (15+2 <= windowSize) and drop
// the bounds checks.
func step(w *uint64, win *[windowSize]byte, k *int, n *uint) {
	e := pairTable[*w&pairMask]
	binary.LittleEndian.PutUint16(win[*k&15:], uint16(e>>8))
	*k += int(e >> 24)
	*n += uint(e & 0xff)
	*w >>= e & 63
}

// decodeSeq continues decoding at bit pos into out[o:], in batches, while
// a batch is safe and ends no later than bit limit.
//
// The bit buffer w holds stream bits pos, pos+1, ... as its bits 0, 1,
// ...: at least all the bits of the 8 bytes starting with the one that
// holds bit pos, i.e. 64-(pos&7) >= 57 of them. The stream is LSB-first,
// so a little-endian load of that byte shifted right by pos's offset in
// it lines them up. Each batch also loads the following 8 bytes (hi) at
// its start, from pos alone, so that load's latency overlaps the lookups;
// hi's bit 0 is stream bit 8*(pos>>3)+64, which after the batch consumed
// n bits sits 64-(pos&7)-n bits above w's bit 0 (pos&7 + n <= 7+55 < 64).
// ORing it in there leaves w with 64 valid bits for the next batch.
func decodeSeq(out, data []byte, limit, o, pos int) (int, int) {
	if pos>>3+16 > len(data) {
		return o, pos
	}
	w := binary.LittleEndian.Uint64(data[pos>>3:]) >> (pos & 7)
	for pos+batchBits <= limit && pos>>3+16 <= len(data) && o+windowSize <= len(out) {
		hi := binary.LittleEndian.Uint64(data[pos>>3+8:])
		r := uint(pos & 7)
		win := (*[windowSize]byte)(out[o : o+windowSize])
		var k int
		var n uint
		step(&w, win, &k, &n)
		step(&w, win, &k, &n)
		step(&w, win, &k, &n)
		step(&w, win, &k, &n)
		step(&w, win, &k, &n)
		o += k
		pos += int(n)
		w |= hi << ((64 - (r + n)) & 63)
	}
	return o, pos
}

// decodeSplit decodes the stream as two halves at once and returns the
// state from which decodeSeq and Decode's tail continue.
//
// Each lookup waits for the previous one (its shift amount comes from the
// table), so one stream runs at the latency of the mask-load-shift chain
// and leaves most of the CPU idle. A Huffman code resynchronises: decoding
// begun at an arbitrary bit, possibly inside a code, soon lands on a true
// code boundary, and from there it yields exactly the true symbols. So
// chain A decodes from bit 0 up to near the middle bit m while chain B,
// interleaved with it step by step, decodes from m to near the end, both
// in batches. B records its first batch boundaries (bit position and
// output count). A then goes on one code at a time until it lands on one
// of those recorded boundaries: there both parses agree, and B's output
// from that boundary on is moved down to follow A's. If A passes all
// recorded boundaries without landing on one (possible with contrived
// input, not seen in practice within a few codes), B's work is dropped and
// decoding simply continues from A.
//
// Output regions: A writes to out[:bStart] and B to out[bStart:], which
// is large enough for every code B can meet, (total-m)/3 of them, plus the
// write window. If A's region fills, A stops and the same fallback
// applies.
func decodeSplit(out, data []byte, total int) (o, pos int) {
	m := total / 2
	bStart := len(out) - (total-m)/minCodeLen - windowSize
	outA, outB := out[:bStart], out[bStart:]
	var edgePos, edgeCnt [maxEdges]int
	edgePos[0], edgeCnt[0] = m, 0 // B's starting point is a boundary of its parse
	ne := 1

	posA, oA := 0, 0
	posB, oB := m, 0
	wA := binary.LittleEndian.Uint64(data)
	wB := binary.LittleEndian.Uint64(data[m>>3:]) >> (m & 7)
	for posA+batchBits <= m && oA+windowSize <= len(outA) &&
		posB+batchBits <= total && posB>>3+16 <= len(data) && oB+windowSize <= len(outB) {
		hiA := binary.LittleEndian.Uint64(data[posA>>3+8:])
		hiB := binary.LittleEndian.Uint64(data[posB>>3+8:])
		rA, rB := uint(posA&7), uint(posB&7)
		winA := (*[windowSize]byte)(outA[oA : oA+windowSize])
		winB := (*[windowSize]byte)(outB[oB : oB+windowSize])
		var kA, kB int
		var nA, nB uint
		step(&wA, winA, &kA, &nA)
		step(&wB, winB, &kB, &nB)
		step(&wA, winA, &kA, &nA)
		step(&wB, winB, &kB, &nB)
		step(&wA, winA, &kA, &nA)
		step(&wB, winB, &kB, &nB)
		step(&wA, winA, &kA, &nA)
		step(&wB, winB, &kB, &nB)
		step(&wA, winA, &kA, &nA)
		step(&wB, winB, &kB, &nB)
		oA += kA
		posA += int(nA)
		wA |= hiA << ((64 - (rA + nA)) & 63)
		oB += kB
		posB += int(nB)
		wB |= hiB << ((64 - (rB + nB)) & 63)
		if ne < maxEdges {
			edgePos[ne], edgeCnt[ne] = posB, oB
			ne++
		}
	}
	// Whichever half stopped first, finish the other alone.
	oA, posA = decodeSeq(outA, data, m, oA, posA)
	oB, posB = decodeSeq(outB, data, total, oB, posB)

	// Walk A one code at a time (every true boundary) until it meets a
	// recorded boundary of B. Both sequences increase, so one pass
	// through the edges suffices.
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
		e := decTable[peek64(data, posA)&tableMask]
		n := int(e & 0xff)
		if posA+n > total || oA == len(outA) {
			return oA, posA
		}
		outA[oA] = byte(e >> 8)
		oA++
		posA += n
	}
	oA += copy(out[oA:], outB[edgeCnt[j]:oB])
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
