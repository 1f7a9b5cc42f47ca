package deflate

import (
	"math"
)

// costModel is the price in bits of each literal, match length and distance
// under some code; lengths and distances include their extra bits.
type costModel struct {
	lit  [256]float64
	eob  float64
	len  [maxMatch + 1]float64 // by length 3..258
	dist [numDist]float64      // by distance symbol
}

// symStats are symbol frequencies, fractional so that statistics can be
// blended with weights. The end-of-block symbol counts one.
type symStats struct {
	ll [numLitLen]float64
	d  [numDist]float64
}

func statsOf(ts []token) symStats {
	var h histogram
	h.addAll(ts)
	var s symStats
	for i, c := range h.ll {
		s.ll[i] = float64(c)
	}
	for i, c := range h.d {
		s.d[i] = float64(c)
	}
	s.ll[endOfBlock] = 1
	return s
}

// entropyBits sets bits[i] to -log2(f[i]/sum) for each symbol, the ideal
// code length for those statistics. An unseen symbol costs as much as one
// seen once, log2(sum), so that a pass is not locked out of symbols the
// previous pass happened not to use.
func entropyBits(f []float64, bits []float64) {
	sum := 0.0
	for _, v := range f {
		sum += v
	}
	if sum == 0 {
		sum = float64(len(f))
	}
	l := math.Log2(sum)
	for i, v := range f {
		if v <= 0 {
			bits[i] = l
		} else {
			bits[i] = l - math.Log2(v)
		}
		if bits[i] < 0 {
			bits[i] = 0
		}
	}
}

func (cm *costModel) fromStats(s *symStats) {
	var ll [numLitLen]float64
	var d [numDist]float64
	entropyBits(s.ll[:286], ll[:286])
	entropyBits(s.d[:], d[:])
	cm.set(&ll, &d)
}

// fixedCosts is the cost model of the fixed code.
func fixedCosts() *costModel {
	var ll [numLitLen]float64
	var d [numDist]float64
	for s := range ll {
		ll[s] = float64(fixedLitLenBits(s))
	}
	for s := range d {
		d[s] = 5
	}
	cm := new(costModel)
	cm.set(&ll, &d)
	return cm
}

func (cm *costModel) set(ll *[numLitLen]float64, d *[numDist]float64) {
	copy(cm.lit[:], ll[:256])
	cm.eob = ll[endOfBlock]
	for l := minMatch; l <= maxMatch; l++ {
		s := lengthSym(l)
		cm.len[l] = ll[257+s] + float64(lengthExtra[s])
	}
	for s := range cm.dist {
		cm.dist[s] = d[s] + float64(distExtra[s])
	}
}

// parser holds the buffers of the shortest-path parse, reused across passes.
type parser struct {
	cost []float64
	from []uint32 // the step reaching each position: length<<16 | distance, length 1 for a literal
	rev  []token
}

// optimal returns the cheapest parse of src[start:end] under cm, where
// position start+i of the chunk at chunkStart has staircase i+start-chunkStart
// in st. It is a shortest path over positions 0..n: every position is reached
// from an earlier one by a literal or by a match of any available length at
// the smallest distance offering it.
func (p *parser) optimal(src []byte, chunkStart, start, end int, st *steps, cm *costModel, dst []token) []token {
	n := end - start
	if cap(p.cost) < n+1 {
		p.cost = make([]float64, n+1)
		p.from = make([]uint32, n+1)
	}
	cost, from := p.cost[:n+1], p.from[:n+1]
	for i := range cost {
		cost[i] = math.Inf(1)
	}
	cost[0] = 0
	off := start - chunkStart
	for i := 0; i < n; i++ {
		c := cost[i]
		if lc := c + cm.lit[src[start+i]]; lc < cost[i+1] {
			cost[i+1] = lc
			from[i+1] = 1 << 16
		}
		ss := st.step[st.first[off+i]:st.first[off+i+1]]
		if len(ss) == 0 {
			continue
		}
		room := n - i
		lo := minMatch
		ahead := cost[i:min(n+1, i+maxMatch+1)]
		for _, s := range ss {
			hi := min(stepLen(s), room)
			d := stepDist(s)
			base := c + cm.dist[distSym(d)]
			for l := lo; l <= hi; l++ {
				if v := base + cm.len[l]; v < ahead[l] {
					ahead[l] = v
					from[i+l] = uint32(l)<<16 | uint32(d)
				}
			}
			lo = hi + 1
			if hi == room {
				break
			}
		}
	}
	rev := p.rev[:0]
	for i := n; i > 0; {
		f := from[i]
		l := int(f >> 16)
		if l == 1 {
			rev = append(rev, token{litLen: uint16(src[start+i-1])})
		} else {
			rev = append(rev, token{litLen: uint16(l), dist: uint16(f)})
		}
		i -= l
	}
	p.rev = rev
	for i := len(rev) - 1; i >= 0; i-- {
		dst = append(dst, rev[i])
	}
	return dst
}

// greedy parses src[start:end] taking the longest match at each position,
// unless the next position has a longer one (one step of lazy matching). It
// only seeds the statistics of the first optimal pass and the first split.
func greedy(src []byte, chunkStart, start, end int, st *steps, dst []token) []token {
	longest := func(i int) (int, int) {
		ss := st.step[st.first[i-chunkStart]:st.first[i-chunkStart+1]]
		if len(ss) == 0 {
			return 0, 0
		}
		s := ss[len(ss)-1]
		return min(stepLen(s), end-i), stepDist(s)
	}
	for i := start; i < end; {
		l, d := longest(i)
		if l >= minMatch && i+1 < end {
			if l2, _ := longest(i + 1); l2 > l+1 {
				l = 0
			}
		}
		if l < minMatch {
			dst = append(dst, token{litLen: uint16(src[i])})
			i++
			continue
		}
		dst = append(dst, token{litLen: uint16(l), dist: uint16(d)})
		i += l
	}
	return dst
}

// rng is a small deterministic generator (xorshift) for perturbing
// statistics; the fixed seed keeps the output reproducible.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rng(x)
	return x
}

// perturb replaces about a third of the frequencies with those of random
// other symbols, to knock the iteration out of a fixed point.
func (s *symStats) perturb(r *rng) {
	mix := func(f []float64) {
		for i := range f {
			if r.next()%3 == 0 {
				f[i] = f[r.next()%uint64(len(f))]
			}
		}
	}
	mix(s.ll[:286])
	mix(s.d[:])
	s.ll[endOfBlock] = 1
}

// optimizeBlock runs iters passes of the optimal parse over src[start:end],
// each priced by the statistics of the pass before (the first by those of
// seed), and returns the parse whose dynamic block is smallest.
//
// Iterating converges to a parse that fits its own code; when the size stops
// changing the statistics are perturbed from the best ones, and from then on
// each pass blends in half of the previous statistics, which settles slower
// but lower.
func (p *parser) optimizeBlock(src []byte, chunkStart, start, end int, st *steps, seed []token, iters int) []token {
	stats := statsOf(seed)
	var cm costModel
	var best, cur []token
	bestBits := math.MaxInt
	var bestStats, lastStats symStats
	lastBits := -1
	perturbed := false
	r := rng(0x9E3779B97F4A7C15)
	for it := 0; it < max(1, iters); it++ {
		cm.fromStats(&stats)
		cur = p.optimal(src, chunkStart, start, end, st, &cm, cur[:0])
		var h histogram
		h.addAll(cur)
		b := dynamicBits(&h, false)
		if b < bestBits {
			best = append(best[:0], cur...)
			bestBits = b
			bestStats = stats
		}
		lastStats = stats
		stats = statsOf(cur)
		if perturbed {
			for i := range stats.ll {
				stats.ll[i] += 0.5 * lastStats.ll[i]
			}
			for i := range stats.d {
				stats.d[i] += 0.5 * lastStats.d[i]
			}
		}
		if it > 5 && b == lastBits {
			stats = bestStats
			stats.perturb(&r)
			perturbed = true
		}
		lastBits = b
	}
	return best
}
