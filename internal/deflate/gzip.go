package deflate

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
)

// Defaults of Options.
const (
	DefaultIterations = 15
	DefaultMaxChain   = 8192
	DefaultMaxBlocks  = 30
	DefaultRounds     = 2
	// ChunkSize is how much input is matched, parsed and split at a time.
	// Working memory is proportional to it, not to the input: measured
	// peaks (one pass) were 80 MB for a 2.9 MB input and 94 MB for
	// 5.8 MB, the difference being the input and output themselves.
	ChunkSize = 1 << 20
)

// Options tune the effort spent. The zero value means the defaults.
type Options struct {
	// Iterations is the number of optimal-parse passes per block, each
	// priced by the statistics of the one before; more passes give smaller
	// output, slowly (15, the default, is thorough; 1 saves about a third
	// of the time on the browser module, for 0.2 % more output).
	Iterations int
	// MaxChain bounds the candidates examined per position by the match
	// finder; larger finds more (older, longer) matches.
	MaxChain int
	// MaxBlocks bounds the blocks the split search makes per chunk. The
	// other layouts compared with it (a segmentation with about 256
	// candidate boundaries, equal cuts) may have more blocks when that is
	// smaller.
	MaxBlocks int
	// Rounds bounds how many times the blocks are optimised and split
	// again; rounds stop early once one no longer helps.
	Rounds int

	chunk int // ChunkSize unless set (by tests, to cross chunks cheaply)
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
	if o.Rounds <= 0 {
		o.Rounds = DefaultRounds
	}
	if o.chunk <= 0 {
		o.chunk = ChunkSize
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
	for cs := 0; cs < len(src); cs += o.chunk {
		ce := min(cs+o.chunk, len(src))
		mf.find(cs, ce, &st)
		compressChunk(w, src, cs, ce, &st, &p, o, ce == len(src))
	}
	return w.finish()
}

// plan is a parse of a chunk cut into blocks: block k is
// ts[starts[k]:starts[k+1]] (the last one runs to the end), sp prices it and
// bits is the estimated size of all its blocks.
type plan struct {
	ts     []token
	starts []int
	sp     *splitter
	bits   int
}

func (pl *plan) block(k int) (a, b int) {
	a, b = pl.starts[k], len(pl.ts)
	if k+1 < len(pl.starts) {
		b = pl.starts[k+1]
	}
	return a, b
}

func (pl *plan) price() {
	pl.bits = 0
	for k := range pl.starts {
		a, b := pl.block(k)
		pl.bits += pl.sp.cost(a, b, exact)
	}
}

// resplit prices pl as it is, split afresh (splitter.split), segmented
// (splitter.segment) and cut into equal runs of tokens of a few sizes, keeps
// the smallest, then merges neighbouring blocks where one block is smaller
// than two. Segmenting and equal cuts catch layouts where no single split
// point pays on its own but several together do.
func (pl *plan) resplit(maxBlocks int) {
	pl.price()
	try := func(starts []int) {
		other := plan{ts: pl.ts, starts: starts, sp: pl.sp}
		other.price()
		if other.bits < pl.bits {
			*pl = other
		}
	}
	try(append([]int{0}, pl.sp.split(maxBlocks)...))
	// About 256 boundaries, blocks up to 32 steps long: ~8,000 prices.
	seg := pl.sp.segment(max(128, len(pl.ts)/256), 32)
	pl.sp.refine(seg)
	try(seg)
	for _, size := range []int{4096, 8192, 16384} {
		if n := len(pl.ts) / size; n >= 2 && n <= maxBlocks {
			starts := make([]int, n)
			for k := range starts {
				starts[k] = k * len(pl.ts) / n
			}
			try(starts)
		}
	}
	pl.merge()
}

// merge joins neighbouring blocks while that makes the plan smaller, the
// best join first. gain[k] is what joining blocks k-1 and k saves; a join
// only changes the gains of its new neighbours.
func (pl *plan) merge() {
	gain := make([]int, len(pl.starts))
	joinGain := func(k int) int {
		a, _ := pl.block(k - 1)
		_, b := pl.block(k)
		m := pl.starts[k]
		return pl.sp.cost(a, m, exact) + pl.sp.cost(m, b, exact) - pl.sp.cost(a, b, exact)
	}
	for k := 1; k < len(gain); k++ {
		gain[k] = joinGain(k)
	}
	for {
		best := -1
		for k := 1; k < len(gain); k++ {
			if gain[k] > 0 && (best < 0 || gain[k] > gain[best]) {
				best = k
			}
		}
		if best < 0 {
			return
		}
		pl.bits -= gain[best]
		pl.starts = slices.Delete(pl.starts, best, best+1)
		gain = slices.Delete(gain, best, best+1)
		if best-1 >= 1 {
			gain[best-1] = joinGain(best - 1)
		}
		if best < len(gain) {
			gain[best] = joinGain(best)
		}
	}
}

// compressChunk parses, splits and writes src[cs:ce].
//
// The first split is made on a greedy parse. Each block is then optimised on
// its own and the result split again, since the optimised tokens have other
// statistics than the greedy ones; the rounds repeat, each block seeded with
// the previous round's tokens, while they make the chunk smaller.
func compressChunk(w *bitWriter, src []byte, cs, ce int, st *steps, p *parser, o Options, final bool) {
	g := greedy(src, cs, cs, ce, st, nil)
	cur := plan{ts: g, starts: []int{0}, sp: newSplitter(g, cs)}
	cur.starts = append(cur.starts, cur.sp.split(o.MaxBlocks)...)
	cur.price()
	for round := 0; round < o.Rounds; round++ {
		next := plan{starts: make([]int, 0, len(cur.starts))}
		for k := range cur.starts {
			a, b := cur.block(k)
			next.starts = append(next.starts, len(next.ts))
			next.ts = append(next.ts, p.optimizeBlock(src, cs, cur.sp.pos[a], cur.sp.pos[b], st, cur.ts[a:b], o.Iterations)...)
		}
		next.sp = newSplitter(next.ts, cs)
		next.resplit(o.MaxBlocks)
		if next.bits >= cur.bits {
			break
		}
		cur = next
	}
	all, blockStarts, os := cur.ts, cur.starts, cur.sp

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
		bits, kind := bestBits(&h, be-bs, shaped)
		// A fixed-code block is priced differently from a dynamic one, so
		// a parse made for the fixed code can beat the dynamic block; worth
		// trying where the fixed code is already close or the block is small.
		if kind == kindFixed || len(ts) < 1000 || 10*fixedBits(&h) < 11*bits {
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
