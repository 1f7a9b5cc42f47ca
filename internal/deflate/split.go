package deflate

import "slices"

// Block splitting: a new block costs a header but lets each part have a code
// fitted to its own statistics. Split points are chosen on a parse (a token
// sequence): the best single split of a block is the point where the two
// halves' estimated sizes sum lowest; if that is below the unsplit size the
// split is kept and the halves are considered in turn, largest first.

const checkEvery = 256 // tokens between prefix histograms

// splitter answers "how many bits would tokens [a, b) take as one block"
// quickly, from prefix histograms every checkEvery tokens.
type splitter struct {
	ts    []token
	pos   []int // pos[i] is the byte offset of token i; pos[len(ts)] the end
	marks []histogram
}

func newSplitter(ts []token, startPos int) *splitter {
	s := &splitter{ts: ts, pos: make([]int, len(ts)+1)}
	p := startPos
	var h histogram
	for i, t := range ts {
		if i%checkEvery == 0 {
			s.marks = append(s.marks, h)
		}
		s.pos[i] = p
		if t.dist == 0 {
			p++
		} else {
			p += int(t.litLen)
		}
		h.add(t)
	}
	s.pos[len(ts)] = p
	return s
}

// prefix sets h to the counts of tokens [0, i).
func (s *splitter) prefix(i int, h *histogram) {
	m := i / checkEvery
	if m >= len(s.marks) {
		m = len(s.marks) - 1
	}
	*h = s.marks[m]
	h.addAll(s.ts[m*checkEvery : i])
}

// cost is the size in bits of tokens [a, b) as the best block type, the
// dynamic header found with effort e.
func (s *splitter) cost(a, b int, e effort) int {
	if a == b {
		return 0
	}
	var ha, hb histogram
	s.prefix(a, &ha)
	s.prefix(b, &hb)
	for i := range hb.ll {
		hb.ll[i] -= ha.ll[i]
	}
	for i := range hb.d {
		hb.d[i] -= ha.d[i]
	}
	bits, _ := bestBits(&hb, s.pos[b]-s.pos[a], e)
	return bits
}

// bestSplit returns the split point p in (a, b) minimising
// cost(a, p) + cost(p, b) as quickly estimated. Long ranges are searched by
// sampling evenly spaced points and narrowing to the neighbours of the best
// one; the sum is not convex, so this finds a good point, not always the best.
func (s *splitter) bestSplit(a, b int) int {
	const samples = 9
	f := func(p int) int { return s.cost(a, p, quick) + s.cost(p, b, quick) }
	lo, hi := a+1, b // candidates in [lo, hi)
	bestP, bestC := -1, 0
	for hi-lo > 2*samples {
		step := (hi - lo) / (samples + 1)
		var pts [samples]int
		bi := -1
		bc := 0
		for k := range pts {
			pts[k] = lo + (k+1)*step
			if c := f(pts[k]); bi < 0 || c < bc {
				bi, bc = k, c
			}
		}
		if bestP >= 0 && bc > bestC {
			return bestP
		}
		bestP, bestC = pts[bi], bc
		if bi > 0 {
			lo = pts[bi-1]
		}
		if bi < samples-1 {
			hi = pts[bi+1]
		}
	}
	for p := lo; p < hi; p++ {
		if c := f(p); bestP < 0 || c < bestC {
			bestP, bestC = p, c
		}
	}
	return bestP
}

// split returns the token indices where blocks start after the first, in
// increasing order, making at most maxBlocks blocks.
func (s *splitter) split(maxBlocks int) []int {
	type span struct {
		a, b int
		done bool
	}
	spans := []span{{0, len(s.ts), false}}
	for len(spans) < maxBlocks {
		k := -1
		for i, sp := range spans {
			if !sp.done && sp.b-sp.a >= 10 && (k < 0 || sp.b-sp.a > spans[k].b-spans[k].a) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		a, b := spans[k].a, spans[k].b
		// The point is found with quick estimates; whether to split is
		// decided on the exact sizes.
		p := s.bestSplit(a, b)
		if p <= a || p >= b || s.cost(a, p, exact)+s.cost(p, b, exact) >= s.cost(a, b, exact) {
			spans[k].done = true
			continue
		}
		spans[k] = span{a, p, false}
		spans = append(spans, span{})
		copy(spans[k+2:], spans[k+1:])
		spans[k+1] = span{p, b, false}
	}
	cuts := make([]int, 0, len(spans)-1)
	for _, sp := range spans[1:] {
		cuts = append(cuts, sp.a)
	}
	return cuts
}

// segment returns block starts for tokens [0, n) chosen by dynamic
// programming over boundaries every step tokens: the cheapest cover of the
// tokens by blocks of at most span steps, each priced quickly. Greedy
// splitting only takes a split that pays on its own; this also finds
// layouts where only several boundaries together pay, such as a short
// compressible stretch inside incompressible data (stored, coded, stored).
// It makes O(n/step * span) price evaluations.
func (s *splitter) segment(step, span int) []int {
	n := len(s.ts)
	k := (n + step - 1) / step // boundaries 0..k, boundary i at min(i*step, n)
	at := func(i int) int { return min(i*step, n) }
	best := make([]int, k+1)
	from := make([]int, k+1)
	for j := 1; j <= k; j++ {
		best[j] = -1
		for i := max(0, j-span); i < j; i++ {
			if c := best[i] + s.cost(at(i), at(j), quick); best[j] < 0 || c < best[j] {
				best[j], from[j] = c, i
			}
		}
	}
	var starts []int
	for j := k; j > 0; j = from[j] {
		starts = append(starts, at(from[j]))
	}
	slices.Reverse(starts)
	return starts
}

// refine moves each boundary of starts to the best point between its
// neighbours, in place.
func (s *splitter) refine(starts []int) {
	for k := 1; k < len(starts); k++ {
		a, b := starts[k-1], len(s.ts)
		if k+1 < len(starts) {
			b = starts[k+1]
		}
		if b-a < 3 {
			continue
		}
		if p := s.bestSplit(a, b); p > a && p < b &&
			s.cost(a, p, exact)+s.cost(p, b, exact) < s.cost(a, starts[k], exact)+s.cost(starts[k], b, exact) {
			starts[k] = p
		}
	}
}
