package deflate

// token is one step of a parse: a literal byte (dist == 0, litLen is the
// byte) or a match (litLen is the length 3..258, dist the distance 1..32768).
type token struct {
	litLen uint16
	dist   uint16
}

// histogram counts the symbols of a run of tokens; the end-of-block symbol is
// not counted (every block has exactly one).
type histogram struct {
	ll [numLitLen]uint32
	d  [numDist]uint32
}

func (h *histogram) add(t token) {
	if t.dist == 0 {
		h.ll[t.litLen]++
		return
	}
	h.ll[257+lengthSym(int(t.litLen))]++
	h.d[distSym(int(t.dist))]++
}

func (h *histogram) addAll(ts []token) {
	for _, t := range ts {
		h.add(t)
	}
}

// extraBits is the number of extra bits the counted length and distance
// symbols carry, which no choice of code changes.
func (h *histogram) extraBits() int {
	n := 0
	for s, e := range lengthExtra {
		n += int(h.ll[257+s]) * int(e)
	}
	for s, e := range distExtra {
		n += int(h.d[s]) * int(e)
	}
	return n
}

// The fixed code (RFC 1951 section 3.2.6).
var fixedLL, fixedD = func() (ll, d huffCode) {
	for s := range ll.lens {
		ll.lens[s] = uint8(fixedLitLenBits(s))
	}
	canonicalCodes(ll.lens[:], ll.codes[:])
	for s := range 32 {
		d.lens[s] = 5
	}
	// Symbols 30 and 31 complete the fixed distance code but are never sent,
	// so the 30 used symbols keep their canonical codes 0..29.
	canonicalCodes(d.lens[:], d.codes[:])
	return ll, d
}()

// huffCode is a literal/length or distance code: lengths and bit-reversed
// canonical codes. The distance arrays are padded to the literal size.
type huffCode struct {
	lens  [numLitLen]uint8
	codes [numLitLen]uint16
}

// clItem is one symbol of the run-length coded code lengths, with the value
// of its extra bits (16: 2 bits, 17: 3 bits, 18: 7 bits).
type clItem struct {
	sym, extra uint8
}

var clExtraBits = [numCodeLen]uint8{16: 2, 17: 3, 18: 7}

// dynamicCode is everything needed to write a dynamic block header and to
// count its cost.
type dynamicCode struct {
	ll, d       huffCode
	nLL, nD     int // HLIT+257 and HDIST+1: code lengths sent
	items       []clItem
	clLens      [numCodeLen]uint8
	clCodes     [numCodeLen]uint16
	nCL         int // HCLEN+4
	headerBits  int // bits after BFINAL and BTYPE up to the first data symbol
	payloadBits int // data symbols, extra bits and end of block
}

// rleCodeLengths run-length codes lens (RFC 1951 section 3.2.7) using
// symbol 16 (repeat the previous length 3..6 times), 17 (3..10 zeros) and
// 18 (11..138 zeros) where allowed, appending to dst.
func rleCodeLengths(dst []clItem, lens []uint8, use16, use17, use18 bool) []clItem {
	for i := 0; i < len(lens); {
		v := lens[i]
		run := 1
		for i+run < len(lens) && lens[i+run] == v {
			run++
		}
		i += run
		if v == 0 {
			for use18 && run >= 11 {
				r := min(run, 138)
				if use17 && run-r > 0 && run-r < 3 {
					r = run - 3 // leave three zeros for one 17 instead of two or fewer literal zeros
				}
				dst = append(dst, clItem{18, uint8(r - 11)})
				run -= r
			}
			for use17 && run >= 3 {
				r := min(run, 10)
				if run-r > 0 && run-r < 3 && run-3 >= 3 {
					r = run - 3
				}
				dst = append(dst, clItem{17, uint8(r - 3)})
				run -= r
			}
		} else {
			dst = append(dst, clItem{v, 0})
			run--
			for use16 && run >= 3 {
				r := min(run, 6)
				if run-r > 0 && run-r < 3 && run-3 >= 3 {
					r = run - 3
				}
				dst = append(dst, clItem{16, uint8(r - 3)})
				run -= r
			}
		}
		for ; run > 0; run-- {
			dst = append(dst, clItem{v, 0})
		}
	}
	return dst
}

// effort says how hard buildDynamic looks for a small header.
type effort uint8

const (
	// quick run-length codes the code lengths with all of symbols 16, 17
	// and 18, which is nearly always best: a close estimate for searching
	// split points.
	quick effort = iota
	// exact keeps the smallest header among the eight ways of using 16,
	// 17 and 18: the size of the block as written, short of shaping.
	exact
	// shaped also tries codes built from counts evened out over stretches
	// of similar counts (see shapeCounts), which cost a little in the data
	// but make longer runs of equal code lengths; only worth it for the
	// blocks actually written.
	shaped
)

// buildDynamic makes optimal length-limited codes for the counted symbols
// plus one end-of-block, with a header found with effort e, and keeps
// whichever block is smallest.
func buildDynamic(h *histogram, dc *dynamicCode, e effort) {
	buildDynamicFrom(h, h, dc, e >= exact)
	if e < shaped {
		return
	}
	var try dynamicCode
	var sh histogram
	for _, tol := range shapeTolerances {
		shapeCounts(h.ll[:286], sh.ll[:286], tol)
		shapeCounts(h.d[:], sh.d[:], tol)
		buildDynamicFrom(h, &sh, &try, true)
		if try.headerBits+try.payloadBits < dc.headerBits+dc.payloadBits {
			*dc, try = try, dynamicCode{}
		}
	}
}

// shapeTolerances are the spreads tried by shapeCounts, in percent.
var shapeTolerances = []uint64{5, 15, 30, 60}

// shapeCounts copies src to dst, replacing each stretch of at least four
// nonzero counts that stay within tol percent (plus one) of the stretch's
// running mean by that mean. Code lengths built from the result repeat more
// often, so the run-length coded header shrinks.
func shapeCounts(src, dst []uint32, tol uint64) {
	copy(dst, src)
	for i := 0; i < len(src); {
		if src[i] == 0 {
			i++
			continue
		}
		sum := uint64(src[i])
		j := i + 1
		for j < len(src) && src[j] != 0 {
			// |src[j] - sum/n| > tol% * sum/n + 1, times 100n.
			n := uint64(j - i)
			x := uint64(src[j]) * n
			d := max(x, sum) - min(x, sum)
			if 100*d > tol*sum+100*n {
				break
			}
			sum += uint64(src[j])
			j++
		}
		if n := uint64(j - i); n >= 4 {
			m := uint32((sum + n/2) / n)
			for k := i; k < j; k++ {
				dst[k] = max(m, 1)
			}
		}
		i = j
	}
}

// buildDynamicFrom builds the codes from the counts in shape (which must be
// nonzero wherever h is) and prices the block for the counts in h; allRLE
// tries every combination of run-length symbols, else only all three.
func buildDynamicFrom(h, shape *histogram, dc *dynamicCode, allRLE bool) {
	var llf [numLitLen]uint32
	copy(llf[:], shape.ll[:])
	llf[endOfBlock] = 1
	codeLengths(llf[:286], maxCodeBits, dc.ll.lens[:286]) // 286 and 287 are never used
	dc.ll.lens[286], dc.ll.lens[287] = 0, 0
	codeLengths(shape.d[:], maxCodeBits, dc.d.lens[:numDist])
	canonicalCodes(dc.ll.lens[:], dc.ll.codes[:])
	canonicalCodes(dc.d.lens[:numDist], dc.d.codes[:numDist])

	dc.nLL = 286
	for dc.nLL > 257 && dc.ll.lens[dc.nLL-1] == 0 {
		dc.nLL--
	}
	dc.nD = numDist
	for dc.nD > 1 && dc.d.lens[dc.nD-1] == 0 {
		dc.nD--
	}
	var all [286 + numDist]uint8
	n := copy(all[:], dc.ll.lens[:dc.nLL])
	n += copy(all[n:], dc.d.lens[:dc.nD])

	best := -1
	var items []clItem
	first := 0
	if !allRLE {
		first = 7
	}
	for flags := first; flags < 8; flags++ {
		items = rleCodeLengths(items[:0], all[:n], flags&1 != 0, flags&2 != 0, flags&4 != 0)
		var clf [numCodeLen]uint32
		for _, it := range items {
			clf[it.sym]++
		}
		var clLens [numCodeLen]uint8
		codeLengths(clf[:], maxCLBits, clLens[:])
		nCL := numCodeLen
		for nCL > 4 && clLens[codeLenOrder[nCL-1]] == 0 {
			nCL--
		}
		bitsUsed := 5 + 5 + 4 + 3*nCL
		for s, f := range clf {
			bitsUsed += int(f) * (int(clLens[s]) + int(clExtraBits[s]))
		}
		if best < 0 || bitsUsed < best {
			best = bitsUsed
			dc.items = append(dc.items[:0], items...)
			dc.clLens = clLens
			dc.nCL = nCL
		}
	}
	canonicalCodes(dc.clLens[:], dc.clCodes[:])
	dc.headerBits = best

	p := int(dc.ll.lens[endOfBlock]) + h.extraBits()
	for s, f := range h.ll {
		p += int(f) * int(dc.ll.lens[s])
	}
	for s, f := range h.d {
		p += int(f) * int(dc.d.lens[s])
	}
	dc.payloadBits = p
}

// dynamicBits is the size in bits of a dynamic block for h, block header
// included, as buildDynamic makes it with effort e.
func dynamicBits(h *histogram, e effort) int {
	var dc dynamicCode
	buildDynamic(h, &dc, e)
	return 3 + dc.headerBits + dc.payloadBits
}

// fixedBits is the size in bits of a fixed-code block for h.
func fixedBits(h *histogram) int {
	n := 3 + int(fixedLL.lens[endOfBlock]) + h.extraBits()
	for s, f := range h.ll {
		n += int(f) * int(fixedLL.lens[s])
	}
	for _, f := range h.d {
		n += int(f) * 5
	}
	return n
}

// storedBits is the size in bits of raw data of length n sent as stored
// blocks, counting the worst-case alignment padding.
func storedBits(n int) int {
	pieces := max(1, (n+65534)/65535)
	return pieces*(3+7+32) + 8*n
}

// blockKind is the BTYPE of a block.
type blockKind uint8

const (
	kindStored  blockKind = 0
	kindFixed   blockKind = 1
	kindDynamic blockKind = 2
)

// bestBits returns the smallest size in bits among the three block types
// (the dynamic one priced as buildDynamic does with effort e) for
// tokens counted in h that cover n input bytes, and that type.
func bestBits(h *histogram, n int, e effort) (int, blockKind) {
	b, k := dynamicBits(h, e), kindDynamic
	if f := fixedBits(h); f <= b {
		b, k = f, kindFixed
	}
	if s := storedBits(n); s < b {
		b, k = s, kindStored
	}
	return b, k
}

// writeStored writes raw as stored blocks of at most 65535 bytes; final sets
// BFINAL on the last of them.
func writeStored(w *bitWriter, raw []byte, final bool) {
	for {
		n := min(len(raw), 65535)
		last := n == len(raw)
		var bf uint64
		if final && last {
			bf = 1
		}
		w.writeBits(bf|uint64(kindStored)<<1, 3)
		w.alignByte()
		w.writeBits(uint64(n)|uint64(^uint16(n))<<16, 32)
		w.out = append(w.out, raw[:n]...)
		raw = raw[n:]
		if last {
			return
		}
	}
}

// writeTokens writes ts and the end-of-block symbol with the given codes.
func writeTokens(w *bitWriter, ts []token, ll, d *huffCode) {
	for _, t := range ts {
		if t.dist == 0 {
			w.writeBits(uint64(ll.codes[t.litLen]), uint(ll.lens[t.litLen]))
			continue
		}
		l := int(t.litLen)
		ls := lengthSym(l)
		w.writeBits(uint64(ll.codes[257+ls]), uint(ll.lens[257+ls]))
		if e := lengthExtra[ls]; e > 0 {
			w.writeBits(uint64(l-int(lengthBase[ls])), uint(e))
		}
		dist := int(t.dist)
		ds := distSym(dist)
		w.writeBits(uint64(d.codes[ds]), uint(d.lens[ds]))
		if e := distExtra[ds]; e > 0 {
			w.writeBits(uint64(dist-int(distBase[ds])), uint(e))
		}
	}
	w.writeBits(uint64(ll.codes[endOfBlock]), uint(ll.lens[endOfBlock]))
}

// writeBlock writes one block of tokens ts, which encode raw, as the given
// type.
func writeBlock(w *bitWriter, kind blockKind, ts []token, raw []byte, final bool) {
	var bf uint64
	if final {
		bf = 1
	}
	switch kind {
	case kindStored:
		writeStored(w, raw, final)
	case kindFixed:
		w.writeBits(bf|uint64(kindFixed)<<1, 3)
		writeTokens(w, ts, &fixedLL, &fixedD)
	default:
		var h histogram
		h.addAll(ts)
		var dc dynamicCode
		buildDynamic(&h, &dc, shaped)
		w.writeBits(bf|uint64(kindDynamic)<<1, 3)
		w.writeBits(uint64(dc.nLL-257), 5)
		w.writeBits(uint64(dc.nD-1), 5)
		w.writeBits(uint64(dc.nCL-4), 4)
		for _, s := range codeLenOrder[:dc.nCL] {
			w.writeBits(uint64(dc.clLens[s]), 3)
		}
		for _, it := range dc.items {
			w.writeBits(uint64(dc.clCodes[it.sym]), uint(dc.clLens[it.sym]))
			if e := clExtraBits[it.sym]; e > 0 {
				w.writeBits(uint64(it.extra), uint(e))
			}
		}
		writeTokens(w, ts, &dc.ll, &dc.d)
	}
}
