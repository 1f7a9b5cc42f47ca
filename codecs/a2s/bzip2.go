package a2s

import (
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// A bzip2 decompressor for Source's compressed split replies, in place of
// compress/bzip2: that package (with hash/crc32's tables) took about 15 KB
// of brotli in the browser module, more than this whole file. It decodes
// into one slice bounded by the caller, and reports errors as
// *codecs.Error naming the part of the stream at fault and its byte
// offset in the stream.
//
// The format, as this decoder reads it (all fields most significant bit
// first, packed without byte alignment except at the start of a stream):
//
//	stream  "BZh" level('1'..'9': blocks hold at most level×100,000 bytes)
//	        block* end [padding to a byte] [another stream]
//	block   magic 0x314159265359 (48 bits), CRC (32), randomised (1),
//	        origPtr (24), the used bytes as a 16-bit map of 16-byte ranges
//	        and 16 bits for each range marked, groups (3 bits, 2..6),
//	        selectors (15 bits, ≥ 1) each a unary MTF index of a group,
//	        then per group the code lengths of the alphabet (used bytes + 2):
//	        a 5-bit start, then per symbol "10" +1, "11" −1, "0" next symbol
//	        (lengths 1..20), then the Huffman-coded symbols, the group
//	        changing every 50 symbols, up to the end-of-block symbol.
//	end     magic 0x177245385090 (48 bits), the stream's combined CRC (32)
//
// The symbols undo, in order: RUNA/RUNB (symbols 0 and 1: a run of the
// byte at the front of the MTF list, its length written in bijective base
// 2, RUNA = 1 and RUNB = 2 at each position), the move-to-front coding
// (symbol k+1 is the byte at MTF index k), the Burrows–Wheeler transform
// (origPtr is the row of the original string), and last a run-length
// coding: after four equal bytes, the next byte is how many more follow
// (0..255).
//
// Each block's CRC covers its decompressed bytes; the combined CRC is,
// over the blocks, combined = (combined rotated left by 1) XOR blockCRC.
// Both are the MSB-first CRC-32 with polynomial 0x04c11db7 (initial value
// and final XOR 0xffffffff), not the reflected IEEE CRC-32 of hash/crc32.
// Randomised blocks (an obsolete bzip2 0.9.0 mode no encoder since has
// written) are rejected, as compress/bzip2 does.

const (
	bzBlockMagic = 0x314159265359 // the digits of pi
	bzEndMagic   = 0x177245385090 // the digits of sqrt(pi)
	bzMaxLen     = 20             // longest Huffman code
	bzMaxGroups  = 6
	bzMaxAlpha   = 258 // 256 used bytes + 2: RUNA, RUNB, MTF indexes 1..255, end of block
	bzGroupSize  = 50  // symbols coded with one selector
	bzMaxSel     = 18002
)

// bzCRCTable is the MSB-first CRC-32 table for polynomial 0x04c11db7,
// made at init (a few microseconds): made lazily it would need a lock,
// as decoders run concurrently.
var bzCRCTable = func() *[256]uint32 {
	t := new([256]uint32)
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// bzReader reads bits most significant first. bits holds nbits unread
// bits left-aligned (the next bit is bit 63); pos is the next byte of src
// to load.
type bzReader struct {
	src   []byte
	pos   int
	bits  uint64
	nbits uint
}

// fill loads whole bytes while at least one fits in bits.
func (r *bzReader) fill() {
	for r.nbits <= 56 && r.pos < len(r.src) {
		r.bits |= uint64(r.src[r.pos]) << (56 - r.nbits)
		r.pos++
		r.nbits += 8
	}
}

// offset is the byte of src holding the next unread bit.
func (r *bzReader) offset() int {
	return (r.pos*8 - int(r.nbits)) / 8
}

// read returns the next n bits (n ≤ 32); ok is false when src ends first.
func (r *bzReader) read(n uint) (uint32, bool) {
	if r.nbits < n {
		r.fill()
		if r.nbits < n {
			return 0, false
		}
	}
	v := uint32(r.bits >> (64 - n))
	r.bits <<= n
	r.nbits -= n
	return v, true
}

// bzHuffman decodes one group's canonical code: codes are given in order
// of length, and within a length in symbol order. limit[l] is one past
// the last code of length l (codes compared as l-bit numbers), base[l]
// the index in perm of the first symbol of length l minus the first code
// of length l, so that a code c of length l is symbol perm[base[l]+c].
type bzHuffman struct {
	minLen, maxLen uint
	limit          [bzMaxLen + 1]int32
	base           [bzMaxLen + 1]int32
	perm           [bzMaxAlpha]uint16
}

// build makes the decoding tables from the code lengths (1..20), failing
// when the lengths claim more codes than exist (an over-subscribed code).
// An incomplete code is allowed: a code not assigned fails when decoded.
func (h *bzHuffman) build(lens []uint8) bool {
	var count [bzMaxLen + 1]int32
	h.minLen, h.maxLen = bzMaxLen, 1
	for _, l := range lens {
		count[l]++
		h.minLen = min(h.minLen, uint(l))
		h.maxLen = max(h.maxLen, uint(l))
	}
	var code, idx int32
	for l := 1; l <= bzMaxLen; l++ {
		h.base[l] = idx - code
		code += count[l]
		idx += count[l]
		if code > 1<<l {
			return false
		}
		h.limit[l] = code
		code <<= 1
	}
	// perm: symbols by length, then by symbol.
	var next [bzMaxLen + 1]int32
	idx = 0
	for l := 1; l <= bzMaxLen; l++ {
		next[l] = idx
		idx += count[l]
	}
	for s, l := range lens {
		h.perm[next[l]] = uint16(s)
		next[l]++
	}
	return true
}

// decode reads one symbol. It peeks at 20 bits (zeros past the end of
// src) and finds the code's length as the shortest l whose first l bits
// are below limit[l]: in a canonical code, a prefix that is at or past
// the codes of length l continues into the codes of length l+1.
func (h *bzHuffman) decode(r *bzReader) (int, bool) {
	if r.nbits < bzMaxLen {
		r.fill()
	}
	v := int32(r.bits >> (64 - bzMaxLen))
	for l := h.minLen; l <= h.maxLen; l++ {
		c := v >> (bzMaxLen - l)
		if c < h.limit[l] {
			if l > r.nbits {
				return 0, false
			}
			r.bits <<= l
			r.nbits -= l
			return int(h.perm[h.base[l]+c]), true
		}
	}
	return -1, true
}

// bzErr is a bzip2 error: field is the part of the stream at fault, off
// the byte offset in the stream where it starts.
func bzErr(field string, off int, sentinel error, text string) error {
	return newError("bzip2."+field, off, "", codecs.Detail(sentinel, text))
}

// bzTruncated is the error for a stream that ends inside field.
func bzTruncated(field string, r *bzReader) error {
	return bzErr(field, r.offset(), codecs.ErrShort, "the stream ends inside it")
}

// bunzip2 appends the decompression of the bzip2 stream src (one stream,
// or several concatenated) to dst, and fails with codecs.ErrTooLong on
// field "bzip2.output" as soon as it would append more than limit bytes.
// Memory is bounded by limit too: a block is at most level×100,000
// symbols and at most what limit bytes of output can come from (4 bytes
// out for every 5 in, at worst), 4 bytes each, and one Huffman table set.
func bunzip2(dst, src []byte, limit int) ([]byte, error) {
	r := bzReader{src: src}
	var d bzDecoder
	start := len(dst)
	for stream := 0; ; stream++ {
		off := r.offset()
		head, ok := r.read(24)
		if !ok && stream > 0 && r.nbits == 0 {
			return dst, nil // the end of the last stream
		}
		if !ok || head != 'B'<<16|'Z'<<8|'h' {
			if stream > 0 {
				return dst, bzErr("header", off, codecs.ErrBadMagic, "bytes after the stream are not another stream")
			}
			if !ok {
				return dst, bzTruncated("header", &r)
			}
			return dst, bzErr("header", off, codecs.ErrBadMagic, `want "BZh"`)
		}
		level, ok := r.read(8)
		if !ok {
			return dst, bzTruncated("level", &r)
		}
		if level < '1' || level > '9' {
			return dst, bzErr("level", off+3, codecs.ErrBadValue, "want '1'..'9', got "+wire.Msg("%d", int64(level)))
		}
		var combined uint32
		for {
			off := r.offset()
			hi, ok1 := r.read(24)
			lo, ok2 := r.read(24)
			if !ok1 || !ok2 {
				return dst, bzTruncated("block_magic", &r)
			}
			magic := uint64(hi)<<24 | uint64(lo)
			if magic == bzEndMagic {
				crc, ok := r.read(32)
				if !ok {
					return dst, bzTruncated("stream_crc", &r)
				}
				if crc != combined {
					return dst, bzErr("stream_crc", off+6, codecs.ErrBadValue, wire.Msg("the blocks combine to CRC %d, %d announced", int64(combined), int64(crc)))
				}
				// Padding to a byte boundary.
				r.read(r.nbits % 8)
				break
			}
			if magic != bzBlockMagic {
				return dst, bzErr("block_magic", off, codecs.ErrBadMagic, "want a block (0x314159265359) or the end (0x177245385090)")
			}
			want, ok := r.read(32)
			if !ok {
				return dst, bzTruncated("block_crc", &r)
			}
			// At worst 5 block bytes give 4 bytes out ("aaaa" and a count
			// 0), so a block longer than this overflows the bound.
			rest := limit - (len(dst) - start)
			d.levelMax = int(level-'0') * 100_000
			d.limit = limit
			var err error
			blockStart := len(dst)
			dst, err = d.block(&r, dst, min(d.levelMax, rest+rest/4+4), start+limit)
			if err != nil {
				return dst, err
			}
			crc := ^uint32(0)
			t := bzCRCTable
			for _, b := range dst[blockStart:] {
				crc = crc<<8 ^ t[byte(crc>>24)^b]
			}
			crc = ^crc
			if crc != want {
				return dst, bzErr("block_crc", off+6, codecs.ErrBadValue, wire.Msg("the block decompresses to CRC %d, %d announced", int64(crc), int64(want)))
			}
			combined = (combined<<1 | combined>>31) ^ crc
		}
	}
}

// bzDecoder holds one block's state, reused across blocks.
type bzDecoder struct {
	levelMax int      // the stream's block size
	limit    int      // the caller's bound on the output
	tt       []uint32 // the block's bytes, then the inverse BWT's links
	selector []uint8
	tables   [bzMaxGroups]bzHuffman
	lens     [bzMaxAlpha]uint8
}

// block decodes one block after its CRC, appending its bytes to dst.
// maxBlock bounds its symbols, maxOut the length of dst.
func (d *bzDecoder) block(r *bzReader, dst []byte, maxBlock, maxOut int) ([]byte, error) {
	off := r.offset()
	rnd, ok := r.read(1)
	if !ok {
		return dst, bzTruncated("randomised", r)
	}
	if rnd != 0 {
		return dst, bzErr("randomised", off, codecs.ErrBadValue, "randomised blocks (bzip2 0.9.0) are not supported")
	}
	ptrOff := r.offset()
	origPtr, ok := r.read(24)
	if !ok {
		return dst, bzTruncated("orig_ptr", r)
	}

	// The bytes the block uses, in order: MTF index k starts as the k-th.
	off = r.offset()
	ranges, ok := r.read(16)
	if !ok {
		return dst, bzTruncated("used_map", r)
	}
	var seq [256]byte
	used := 0
	for i := range 16 {
		if ranges&(0x8000>>i) == 0 {
			continue
		}
		m, ok := r.read(16)
		if !ok {
			return dst, bzTruncated("used_map", r)
		}
		for j := range 16 {
			if m&(0x8000>>j) != 0 {
				seq[used] = byte(i*16 + j)
				used++
			}
		}
	}
	if used == 0 {
		return dst, bzErr("used_map", off, codecs.ErrBadValue, "a block that uses no byte")
	}
	alpha := used + 2 // RUNA, RUNB, MTF indexes 1..used-1, end of block

	off = r.offset()
	groups, ok := r.read(3)
	if !ok {
		return dst, bzTruncated("groups", r)
	}
	if groups < 2 || groups > bzMaxGroups {
		return dst, bzErr("groups", off, codecs.ErrBadValue, wire.Msg("%d Huffman groups, want 2..6", int64(groups)))
	}
	off = r.offset()
	nsel, ok := r.read(15)
	if !ok {
		return dst, bzTruncated("selectors", r)
	}
	if nsel == 0 {
		return dst, bzErr("selectors", off, codecs.ErrBadValue, "no selectors")
	}
	// Selectors past 18002 (what 900,000 symbols need) are read and
	// dropped, as the reference decoder does.
	if cap(d.selector) < int(min(nsel, bzMaxSel)) {
		d.selector = make([]uint8, 0, min(nsel, bzMaxSel))
	}
	d.selector = d.selector[:0]
	mtfGroups := [bzMaxGroups]uint8{0, 1, 2, 3, 4, 5}
	for range nsel {
		off := r.offset()
		k := 0
		for {
			b, ok := r.read(1)
			if !ok {
				return dst, bzTruncated("selectors", r)
			}
			if b == 0 {
				break
			}
			k++
			if k >= int(groups) {
				return dst, bzErr("selectors", off, codecs.ErrBadValue, wire.Msg("selector index %d of %d groups", int64(k), int64(groups)))
			}
		}
		g := mtfGroups[k]
		copy(mtfGroups[1:k+1], mtfGroups[:k])
		mtfGroups[0] = g
		if len(d.selector) < bzMaxSel {
			d.selector = append(d.selector, g)
		}
	}

	for g := range int(groups) {
		off := r.offset()
		l, ok := r.read(5)
		if !ok {
			return dst, bzTruncated("code_lengths", r)
		}
		for s := range alpha {
			for {
				if l < 1 || l > bzMaxLen {
					return dst, bzErr("code_lengths", off, codecs.ErrBadValue, wire.Msg("group %d: a code length of %d, want 1..20", int64(g), int64(l)))
				}
				b, ok := r.read(1)
				if !ok {
					return dst, bzTruncated("code_lengths", r)
				}
				if b == 0 {
					break
				}
				b, ok = r.read(1)
				if !ok {
					return dst, bzTruncated("code_lengths", r)
				}
				l += 1 - 2*b // "10" adds one, "11" takes one
			}
			d.lens[s] = uint8(l)
		}
		if !d.tables[g].build(d.lens[:alpha]) {
			return dst, bzErr("code_lengths", off, codecs.ErrBadValue, wire.Msg("group %d: more codes than the lengths allow", int64(g)))
		}
	}

	// The symbols: undo RUNA/RUNB and the MTF into tt, counting each byte.
	// tt grows with what the block holds, never past maxBlock: a stream
	// that claims a large bound but holds little allocates little.
	tt := d.tt[:0]
	var count [256]int
	mtf := seq // MTF list of the used bytes
	run, runBit := 0, 0
	sel := 0
	left := 0 // symbols left in the current group
	var h *bzHuffman
	for {
		if left == 0 {
			if sel >= len(d.selector) {
				return dst, bzErr("symbols", r.offset(), codecs.ErrBadValue, "more symbols than the selectors cover")
			}
			h = &d.tables[d.selector[sel]]
			sel++
			left = bzGroupSize
		}
		left--
		off := r.offset()
		s, ok := h.decode(r)
		if !ok {
			return dst, bzTruncated("symbols", r)
		}
		if s < 0 {
			return dst, bzErr("symbols", off, codecs.ErrBadValue, "a Huffman code assigned to no symbol")
		}
		if s <= 1 { // RUNA or RUNB
			if runBit > 20 { // 2^21 is past any block
				return dst, bzErr("symbols", off, codecs.ErrTooLong, "a run longer than a block")
			}
			run += (s + 1) << runBit
			runBit++
			continue
		}
		if run > 0 {
			if run > maxBlock-len(tt) {
				return dst, d.blockFull(off, maxBlock)
			}
			b := mtf[0]
			count[b] += run
			for range run {
				tt = append(tt, uint32(b))
			}
			run, runBit = 0, 0
		}
		if s == alpha-1 {
			break // end of block
		}
		k := s - 1 // MTF index
		b := mtf[k]
		copy(mtf[1:k+1], mtf[:k])
		mtf[0] = b
		if len(tt) >= maxBlock {
			return dst, d.blockFull(off, maxBlock)
		}
		count[b]++
		tt = append(tt, uint32(b))
	}
	d.tt = tt
	n := len(tt)
	if int(origPtr) >= n {
		return dst, bzErr("orig_ptr", ptrOff, codecs.ErrBadValue, wire.Msg("row %d of a block of %d bytes", int64(origPtr), int64(n)))
	}

	// Inverse BWT: tt[i]'s low byte is the i-th byte of the last column;
	// the upper 24 bits get, at the row where that byte lands in the
	// sorted first column, the index i, so following the links from
	// origPtr walks the original string.
	var cum [256]int
	sum := 0
	for b := range 256 {
		cum[b] = sum
		sum += count[b]
	}
	for i := range n {
		b := byte(tt[i])
		tt[cum[b]] |= uint32(i) << 8
		cum[b]++
	}

	// The final run-length coding: four equal bytes, then a count.
	pos := tt[origPtr] >> 8
	last, same := -1, 0
	for range n {
		pos = tt[pos]
		b := byte(pos)
		pos >>= 8
		if same == 4 {
			k := int(b)
			if k > maxOut-len(dst) {
				return dst, d.tooMuch(r.offset())
			}
			for range k {
				dst = append(dst, byte(last))
			}
			last, same = -1, 0
			continue
		}
		if int(b) == last {
			same++
		} else {
			last, same = int(b), 1
		}
		if len(dst) >= maxOut {
			return dst, d.tooMuch(r.offset())
		}
		dst = append(dst, b)
	}
	return dst, nil
}

// blockFull is the error for a block past maxBlock symbols: the stream's
// block size, or else what the output's bound allows.
func (d *bzDecoder) blockFull(off, maxBlock int) error {
	if maxBlock == d.levelMax {
		return bzErr("symbols", off, codecs.ErrTooLong, wire.Msg("more than the %d bytes of a block", int64(maxBlock)))
	}
	return d.tooMuch(off)
}

// tooMuch is the error for output past the caller's bound.
func (d *bzDecoder) tooMuch(off int) error {
	return bzErr("output", off, codecs.ErrTooLong, wire.Msg("the stream decompresses to more than the %d bytes allowed", int64(d.limit)))
}
