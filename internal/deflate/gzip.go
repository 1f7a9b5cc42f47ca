package deflate

import (
	"encoding/binary"
	"hash/crc32"
)

// Defaults of Options.
const (
	DefaultIterations = 15
	DefaultMaxChain   = 8192
	DefaultMaxBlocks  = 30
	// ChunkSize is how much input is matched, parsed and split at a time;
	// it bounds the memory used to a few tens of bytes per input byte of
	// one chunk, whatever the input's size.
	ChunkSize = 1 << 20
)

// Options tune the effort spent. The zero value means the defaults.
type Options struct {
	// Iterations is the number of optimal-parse passes per block, each
	// priced by the statistics of the one before; more passes give smaller
	// output, slowly (15 is thorough, 1 is fast).
	Iterations int
	// MaxChain bounds the candidates examined per position by the match
	// finder; larger finds more (older, longer) matches.
	MaxChain int
	// MaxBlocks bounds the blocks each chunk is split into.
	MaxBlocks int
}

func (o Options) withDefaults() Options {
	if o.Iterations <= 0 {
		o.Iterations = DefaultIterations
	}
	if o.MaxChain <= 0 {
		o.MaxChain = DefaultMaxChain
	}
	if o.MaxBlocks <= 0 {
		o.MaxBlocks = DefaultMaxBlocks
	}
	return o
}

// Gzip returns src compressed as a gzip member (RFC 1952) with default
// Options. The header carries no file name and a zero time, so the output
// depends on src alone.
func Gzip(src []byte) []byte { return AppendGzip(nil, src, Options{}) }

// AppendGzip appends the gzip member of src, compressed with o, to dst.
func AppendGzip(dst, src []byte, o Options) []byte {
	dst = append(dst,
		0x1f, 0x8b, // magic
		8,          // CM: deflate
		0,          // FLG: no text flag, CRC16, extra field, name or comment
		0, 0, 0, 0, // MTIME: none
		2,    // XFL: slowest algorithm, maximum compression
		0xff, // OS: unknown, so that the bytes do not depend on the machine
	)
	dst = AppendDeflate(dst, src, o)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.ChecksumIEEE(src))
	return binary.LittleEndian.AppendUint32(dst, uint32(len(src))) // ISIZE: length mod 2^32
}

// AppendDeflate appends src compressed as a raw DEFLATE stream (RFC 1951),
// ending in a final block, to dst.
func AppendDeflate(dst, src []byte, o Options) []byte {
	o = o.withDefaults()
	w := &bitWriter{out: dst}
	if len(src) == 0 {
		w.writeBits(1|uint64(kindFixed)<<1, 3)
		writeTokens(w, nil, &fixedLL, &fixedD)
		return w.finish()
	}
	mf := newMatchFinder(src, o.MaxChain)
	var st steps
	var p parser
	for cs := 0; cs < len(src); cs += ChunkSize {
		ce := min(cs+ChunkSize, len(src))
		mf.find(cs, ce, &st)
		compressChunk(w, src, cs, ce, &st, &p, o, ce == len(src))
	}
	return w.finish()
}

// compressChunk parses, splits and writes src[cs:ce].
func compressChunk(w *bitWriter, src []byte, cs, ce int, st *steps, p *parser, o Options, final bool) {
	g := greedy(src, cs, cs, ce, st, nil)
	gs := newSplitter(g, cs)
	cuts := gs.split(o.MaxBlocks)

	// Optimise each block of the first split on its own, seeded by the
	// greedy tokens of that block.
	var all []token
	blockStarts := []int{0} // token indices in all
	prevTok := 0
	for k := 0; k <= len(cuts); k++ {
		endTok := len(g)
		if k < len(cuts) {
			endTok = cuts[k]
		}
		bs, be := gs.pos[prevTok], gs.pos[endTok]
		all = append(all, p.optimizeBlock(src, cs, bs, be, st, g[prevTok:endTok], o.Iterations)...)
		if k < len(cuts) {
			blockStarts = append(blockStarts, len(all))
		}
		prevTok = endTok
	}

	// Split the optimised tokens again: their statistics differ from the
	// greedy ones the first split saw. Keep whichever split is smaller.
	os := newSplitter(all, cs)
	total := func(starts []int) int {
		n := 0
		for k, a := range starts {
			b := len(all)
			if k+1 < len(starts) {
				b = starts[k+1]
			}
			n += os.cost(a, b)
		}
		return n
	}
	second := append([]int{0}, os.split(o.MaxBlocks)...)
	if total(second) < total(blockStarts) {
		blockStarts = second
	}

	fixed := fixedCosts()
	for k, a := range blockStarts {
		b := len(all)
		if k+1 < len(blockStarts) {
			b = blockStarts[k+1]
		}
		ts := all[a:b]
		bs, be := os.pos[a], os.pos[b]
		var h histogram
		h.addAll(ts)
		bits, kind := bestBits(&h, be-bs)
		// A fixed-code block is priced differently from a dynamic one, so
		// a parse made for the fixed code can beat the dynamic block; worth
		// trying where the fixed code is already close or the block is small.
		if kind == kindFixed || len(ts) < 1000 || float64(fixedBits(&h)) < 1.1*float64(bits) {
			fts := p.optimal(src, cs, bs, be, st, fixed, nil)
			var fh histogram
			fh.addAll(fts)
			if fb := fixedBits(&fh); fb < bits {
				ts, bits, kind = fts, fb, kindFixed
			}
		}
		writeBlock(w, kind, ts, src[bs:be], final && b == len(all))
	}
}
