package a2s

import (
	"github.com/querylens/querylens/codecs"
)

// A bzip2 decompressor for Source's compressed split replies, in place of
// compress/bzip2: with it (and hash/crc32's tables) the A2S family added
// 55,214 bytes of brotli to the browser module, with this file 39,527 of
// its 40,000 (scripts/family-size.sh). It decodes
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

// bzField names the part of the stream being read, for errors: a small
// number, not a string, so that setting it is one store (a string field
// of a heap struct costs a write barrier at each assignment).
type bzField uint8

const (
	bzFHeader bzField = iota
	bzFLevel
	bzFBlockMagic
	bzFBlockCrc
	bzFStreamCrc
	bzFRandomised
	bzFOrigPtr
	bzFUsedMap
	bzFGroups
	bzFSelectors
	bzFCodeLengths
	bzFSymbols
	bzFOutput
)

var bzFieldNames = [...]string{"bzip2.header", "bzip2.level", "bzip2.block_magic", "bzip2.block_crc", "bzip2.stream_crc", "bzip2.randomised", "bzip2.orig_ptr", "bzip2.used_map", "bzip2.groups", "bzip2.selectors", "bzip2.code_lengths", "bzip2.symbols", "bzip2.output"}

// bzReader reads bits most significant first, with a sticky error as
// package wire's cursor has: after the first failure every read returns
// 0 and the error keeps the field and offset of that failure. bits holds
// nbits unread bits left-aligned (the next bit is bit 63); pos is the next
// byte of src to load; field names what is being read.
type bzReader struct {
	src   []byte
	pos   int
	bits  uint64
	nbits uint
	field bzField
	err   error
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

// read returns the next n bits (n ≤ 32), or 0 and the error "the stream
// ends inside r.field" when src ends first.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *bzReader) read(n uint) uint32 {
	if r.nbits < n {
		r.fill()
		if r.nbits < n {
			r.fail(-1, codecs.ErrShort, "the stream ends inside it")
			r.nbits = 0
			return 0
		}
	}
	v := uint32(r.bits >> (64 - n))
	r.bits <<= n
	r.nbits -= n
	return v
}

// fail records the first error: r.field at off, or at the next unread
// bit's byte when off < 0.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *bzReader) fail(off int, sentinel error, text string) {
	if off < 0 {
		off = r.offset()
	}
	if r.err == nil {
		r.err = newDetail(bzFieldNames[r.field], off, "", sentinel, text)
	}
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
	var count, next [bzMaxLen + 1]int32
	h.minLen, h.maxLen = bzMaxLen, 1
	for _, l := range lens {
		count[l]++
		h.minLen = min(h.minLen, uint(l))
		h.maxLen = max(h.maxLen, uint(l))
	}
	var code, idx int32
	for l := 1; l <= bzMaxLen; l++ {
		h.base[l] = idx - code
		next[l] = idx // where the symbols of length l go in perm
		code += count[l]
		idx += count[l]
		if code > 1<<l {
			return false
		}
		h.limit[l] = code
		code <<= 1
	}
	for s, l := range lens {
		h.perm[next[l]] = uint16(s)
		next[l]++
	}
	return true
}

// decode reads one symbol, or returns -1 after recording an error. It
// peeks at 20 bits (zeros past the end of src) and finds the code's
// length as the shortest l whose first l bits are below limit[l]: in a
// canonical code, a prefix at or past the codes of length l continues
// into the codes of length l+1.
func (h *bzHuffman) decode(r *bzReader) int {
	if r.nbits < bzMaxLen {
		r.fill()
	}
	v := int32(r.bits >> (64 - bzMaxLen))
	for l := h.minLen; l <= h.maxLen; l++ {
		c := v >> (bzMaxLen - l)
		if c < h.limit[l] {
			if l > r.nbits {
				break
			}
			r.bits <<= l
			r.nbits -= l
			return int(h.perm[h.base[l]+c])
		}
	}
	if r.nbits < h.maxLen {
		r.read(bzMaxLen) // the stream ends inside the code
	} else {
		r.fail(-1, codecs.ErrBadValue, "a Huffman code assigned to no symbol")
	}
	return -1
}

// bunzip2 appends the decompression of the bzip2 stream src (one stream,
// or several concatenated) to dst, and fails with codecs.ErrTooLong on
// field "bzip2.output" as soon as it would append more than limit bytes.
// Memory is bounded by limit too: a block is at most level×100,000
// symbols and at most what limit bytes of output can come from (4 bytes
// out for every 5 in, at worst), 4 bytes each, and one Huffman table set.
func bunzip2(dst, src []byte, limit int) ([]byte, error) {
	r := &bzReader{src: src}
	d := &bzDecoder{maxOut: len(dst) + limit}
	for stream := 0; r.err == nil; stream++ {
		r.fill()
		if stream > 0 && r.nbits == 0 {
			break // the end of the last stream
		}
		r.field = bzFHeader
		off := r.offset()
		if r.read(24) != 'B'<<16|'Z'<<8|'h' && r.err == nil {
			r.fail(off, codecs.ErrBadMagic, `want "BZh" (after a stream, another stream)`)
		}
		r.field = bzFLevel
		level := int(r.read(8)) - '0'
		if (level < 1 || level > 9) && r.err == nil {
			r.fail(off+3, codecs.ErrBadValue, "want '1'..'9'")
		}
		var combined uint32
		for r.err == nil {
			r.field = bzFBlockMagic
			off := r.offset()
			magic := uint64(r.read(24))<<24 | uint64(r.read(24))
			r.field = bzFBlockCrc
			if magic == bzEndMagic {
				r.field = bzFStreamCrc
			}
			want := r.read(32)
			if r.err != nil {
				break
			}
			if magic == bzEndMagic {
				if want != combined {
					r.fail(off+6, codecs.ErrBadValue, "the blocks' CRCs do not combine to the one announced")
				}
				r.read(r.nbits % 8) // padding to a byte boundary
				break
			}
			if magic != bzBlockMagic {
				r.field = bzFBlockMagic
				r.fail(off, codecs.ErrBadMagic, "want a block (0x314159265359) or the end (0x177245385090)")
				break
			}
			// At worst 5 block bytes give 4 bytes out ("aaaa" and a count
			// 0), so a block longer than this overflows the bound.
			rest := d.maxOut - len(dst)
			d.levelMax = level * 100_000
			dst = d.block(r, dst, min(d.levelMax, rest+rest/4+4))
			crc := d.crc
			if crc != want && r.err == nil {
				r.field = bzFBlockCrc
				r.fail(off+6, codecs.ErrBadValue, "the block's bytes do not have the CRC announced")
			}
			combined = (combined<<1 | combined>>31) ^ crc
		}
	}
	return dst, r.err
}

// bzDecoder holds one block's state, reused across blocks.
type bzDecoder struct {
	levelMax int // the stream's block size
	maxOut   int // the bound on len(dst)
	tt       []uint32
	selector [bzMaxSel]uint8 // the group of each 50 symbols
	nsel     int
	crc      uint32       // the last block's CRC
	tables   [8]bzHuffman // 6 used; 8 lets a masked index skip the bounds check
	lens     [bzMaxAlpha]uint8
}

// block decodes one block after its CRC, appending its bytes to dst;
// errors go to r. maxBlock bounds its symbols.
func (d *bzDecoder) block(r *bzReader, dst []byte, maxBlock int) []byte {
	// The randomised bit and origPtr in one read.
	r.field = bzFRandomised
	ptrOff := r.offset()
	v := r.read(25)
	if v>>24 != 0 {
		r.fail(ptrOff, codecs.ErrBadValue, "randomised blocks (bzip2 0.9.0) are not supported")
	}
	origPtr := int(v & 0xffffff)

	// The bytes the block uses, in order: MTF index k starts as the k-th.
	r.field = bzFUsedMap
	ranges := r.read(16)
	var seq [256]byte
	used := 0
	for i := range 256 {
		if i%16 == 0 && ranges&(0x8000>>(i/16)) != 0 {
			ranges |= r.read(16) << 16 // this range's map, in the upper half
		}
		if ranges&(0x80000000>>(i%16)) != 0 {
			seq[used&0xff] = byte(i) // used < 256 here: the mask only drops a bounds check
			used++
		}
		if i%16 == 15 {
			ranges &= 0xffff
		}
	}
	if used == 0 {
		r.fail(-1, codecs.ErrBadValue, "a block that uses no byte")
	}
	alpha := used + 2 // RUNA, RUNB, MTF indexes 1..used-1, end of block

	// The groups and the number of selectors in one read.
	r.field = bzFGroups
	v = r.read(18)
	groups, nsel := int(v>>15), int(v&0x7fff)
	if groups < 2 || groups > bzMaxGroups || nsel == 0 {
		r.fail(-1, codecs.ErrBadValue, "want 2..6 Huffman groups and at least one selector")
	}
	if r.err != nil {
		return dst
	}
	// Selectors past 18002 (what 900,000 symbols need) are read and
	// dropped, as the reference decoder does.
	d.nsel = 0
	mtfGroups := [8]uint8{0, 1, 2, 3, 4, 5} // 8: indexes masked with 7 need no bounds check
	for range nsel {
		k := 0
		for r.read(1) != 0 {
			k++
			if k >= groups {
				r.fail(-1, codecs.ErrBadValue, "a selector past the groups")
				return dst
			}
		}
		g := mtfGroups[k&7]
		for j := k & 7; j > 0; j-- {
			mtfGroups[j] = mtfGroups[j-1]
		}
		mtfGroups[0] = g
		if d.nsel < bzMaxSel {
			d.selector[d.nsel] = g
			d.nsel++
		}
	}

	r.field = bzFCodeLengths
	for g := range groups {
		l := r.read(5)
		for s := 0; s < alpha && r.err == nil; {
			if l < 1 || l > bzMaxLen {
				r.fail(-1, codecs.ErrBadValue, "a code length past 1..20")
			}
			if r.read(1) == 0 { // "0": the length of symbol s
				d.lens[s] = uint8(l)
				s++
				continue
			}
			l += 1 - 2*r.read(1) // "10" adds one, "11" takes one
		}
		if r.err == nil && !d.tables[g].build(d.lens[:alpha]) {
			r.fail(-1, codecs.ErrBadValue, "more codes than the lengths allow")
		}
	}
	if r.err != nil {
		return dst
	}

	// The symbols: undo RUNA/RUNB and the MTF into tt, counting each byte.
	// tt grows with what the block holds, never past maxBlock: a stream
	// that claims a large bound but holds little allocates little.
	r.field = bzFSymbols
	tt := d.tt[:0]
	var count [256]int
	mtf := seq // MTF list of the used bytes
	run, runBit := 0, 0
	var h *bzHuffman
	for i := 0; ; i++ {
		if i%bzGroupSize == 0 {
			if i/bzGroupSize >= d.nsel {
				r.fail(-1, codecs.ErrBadValue, "more symbols than the selectors cover")
				return dst
			}
			h = &d.tables[d.selector[i/bzGroupSize]&7]
		}
		s := h.decode(r)
		if s < 0 {
			return dst
		}
		if s <= 1 { // RUNA or RUNB: (s+1) × 2^runBit more of mtf[0]
			run += (s + 1) << runBit
			runBit++
			if run <= maxBlock-len(tt) {
				continue
			}
		} else if run > 0 {
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
		if s > 1 {
			k := s - 1       // MTF index
			b := mtf[k&0xff] // k < 255: the mask only drops a bounds check
			for j := k & 0xff; j > 0; j-- {
				mtf[j] = mtf[j-1]
			}
			mtf[0] = b
			count[b]++
			tt = append(tt, uint32(b))
		}
		if len(tt)+run > maxBlock {
			if maxBlock == d.levelMax {
				r.fail(-1, codecs.ErrTooLong, "more bytes than the stream's block size")
			} else {
				d.tooMuch(r)
			}
			return dst
		}
	}
	d.tt = tt
	n := len(tt)
	if origPtr >= n {
		r.field = bzFOrigPtr
		r.fail(ptrOff, codecs.ErrBadValue, "past the end of the block")
		return dst
	}

	// Inverse BWT: tt[i]'s low byte is the i-th byte of the last column;
	// the upper 24 bits get, at the row where that byte lands in the
	// sorted first column, the index i, so following the links from
	// origPtr walks the original string.
	sum := 0
	for b := range 256 {
		sum, count[b] = sum+count[b], sum
	}
	for i := range n {
		b := byte(tt[i])
		tt[count[b]] |= uint32(i) << 8
		count[b]++
	}

	// The final run-length coding: four equal bytes, then a count; the
	// block's CRC is taken on the way.
	crc := ^uint32(0)
	pos := tt[origPtr] >> 8
	last, same := -1, 0
	for range n {
		pos = tt[pos]
		b := byte(pos)
		pos >>= 8
		k := 1
		if same == 4 {
			k, b, same = int(b), byte(last), 0
		} else if int(b) == last {
			same++
		} else {
			last, same = int(b), 1
		}
		if k > d.maxOut-len(dst) {
			d.tooMuch(r)
			return dst
		}
		for range k {
			dst = append(dst, b)
			crc = crc<<8 ^ bzCRCTable[byte(crc>>24)^b]
		}
	}
	d.crc = ^crc
	return dst
}

// tooMuch is the error for output past the caller's bound.
func (d *bzDecoder) tooMuch(r *bzReader) {
	r.field = bzFOutput
	r.fail(-1, codecs.ErrTooLong, "the stream decompresses to more bytes than allowed")
}
