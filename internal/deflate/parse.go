package deflate

import (
	"math"
	"math/bits"
)

// Costs are fixed-point bits: costOne is one bit. Integer arithmetic keeps
// the parse, and so the output, identical on every architecture; floating
// point would not (the compiler may fuse a multiply and add on some).
type cost = int64

const (
	costFrac = 16
	costOne  = cost(1) << costFrac
	costInf  = cost(1) << 62
)

// costModel is the price of each literal, match length and distance under
// some code; lengths and distances include their extra bits.
type costModel struct {
	lit  [256]cost
	len  [maxMatch + 1]cost // by length 3..258
	dist [numDist]cost      // by distance symbol
}

// symStats are symbol frequencies. The end-of-block symbol counts one.
type symStats struct {
	ll [numLitLen]uint64
	d  [numDist]uint64
}

func statsOf(ts []token) symStats {
	var h histogram
	h.addAll(ts)
	var s symStats
	for i, c := range h.ll {
		s.ll[i] = uint64(c)
	}
	for i, c := range h.d {
		s.d[i] = uint64(c)
	}
	s.ll[endOfBlock] = 1
	return s
}

// log2Fixed returns log2(x) for x >= 1 in fixed point (costFrac fraction
// bits), by the bit-by-bit method: with the mantissa m in [1, 2), squaring
// doubles the logarithm, so each squaring that lands at 2 or above yields
// the next fraction bit (and m is halved back into [1, 2)).
func log2Fixed(x uint64) cost {
	n := bits.Len64(x) - 1
	// m is x / 2^n as a fixed-point number with 32 fraction bits, in
	// [2^32, 2^33); bits below the 32nd are dropped, which for counts
	// above 2^32 costs far less than the precision kept.
	var m uint64
	if n <= 32 {
		m = x << (32 - n)
	} else {
		m = x >> (n - 32)
	}
	frac := cost(0)
	for i := costFrac - 1; i >= 0; i-- {
		hi, lo := bits.Mul64(m, m)
		m = hi<<32 | lo>>32 // m*m / 2^32: the square, still 32 fraction bits
		if m >= 1<<33 {
			frac |= 1 << i
			m >>= 1
		}
	}
	return cost(n)<<costFrac | frac
}

// entropyBits sets out[i] to -log2(f[i]/sum), the ideal code length for
// those statistics. An unseen symbol costs as much as one seen once,
// log2(sum), so that a pass is not locked out of symbols the previous pass
// happened not to use.
func entropyBits(f []uint64, out []cost) {
	sum := uint64(0)
	for _, v := range f {
		sum += v
	}
	if sum == 0 {
		sum = uint64(len(f))
	}
	l := log2Fixed(sum)
	for i, v := range f {
		out[i] = l
		if v > 0 {
			out[i] = max(0, l-log2Fixed(v))
		}
	}
}

func (cm *costModel) fromStats(s *symStats) {
	var ll [numLitLen]cost
	var d [numDist]cost
	entropyBits(s.ll[:286], ll[:286])
	entropyBits(s.d[:], d[:])
	cm.set(&ll, &d)
}

// fixedCosts is the cost model of the fixed code.
func fixedCosts() *costModel {
	var ll [numLitLen]cost
	var d [numDist]cost
	for s := range ll {
		ll[s] = cost(fixedLitLenBits(s)) * costOne
	}
	for s := range d {
		d[s] = 5 * costOne
	}
	cm := new(costModel)
	cm.set(&ll, &d)
	return cm
}

func (cm *costModel) set(ll *[numLitLen]cost, d *[numDist]cost) {
	copy(cm.lit[:], ll[:256])
	for l := minMatch; l <= maxMatch; l++ {
		s := lengthSym(l)
		cm.len[l] = ll[257+s] + cost(lengthExtra[s])*costOne
	}
	for s := range cm.dist {
		cm.dist[s] = d[s] + cost(distExtra[s])*costOne
	}
}

// parser holds the buffers of the shortest-path parse, reused across passes.
type parser struct {
	cost []cost
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
		p.cost = make([]cost, n+1)
		p.from = make([]uint32, n+1)
	}
	costs, from := p.cost[:n+1], p.from[:n+1]
	for i := range costs {
		costs[i] = costInf
	}
	costs[0] = 0
	off := start - chunkStart
	for i := 0; i < n; i++ {
		c := costs[i]
		if lc := c + cm.lit[src[start+i]]; lc < costs[i+1] {
			costs[i+1] = lc
			from[i+1] = 1 << 16
		}
		ss := st.step[st.first[off+i]:st.first[off+i+1]]
		if len(ss) == 0 {
			continue
		}
		room := n - i
		lo := minMatch
		ahead := costs[i:min(n+1, i+maxMatch+1)] // ahead[l]: the best cost of position i+l so far
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
	mix := func(f []uint64) {
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
		b := dynamicBits(&h, exact)
		if b < bestBits {
			best = append(best[:0], cur...)
			bestBits = b
			bestStats = stats
		}
		lastStats = stats
		stats = statsOf(cur)
		if perturbed {
			for i := range stats.ll {
				stats.ll[i] += lastStats.ll[i] / 2
			}
			for i := range stats.d {
				stats.d[i] += lastStats.d[i] / 2
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
