package deflate

import (
	"encoding/binary"
	"math/bits"
)

// Match finding. For every position of a chunk the finder records the
// staircase of matches available there: a list of steps (length, distance)
// with increasing lengths and increasing distances, meaning that every match
// length from the previous step's length + 1 (or 3) up to this step's length
// is available at this step's distance, and that distance is the smallest
// one at which that length is available (within the chain limit). The
// shortest-path parse needs nothing else: it tries every length at the
// cheapest (smallest) distance offering it.

// maxHashBits sizes the hash table for large inputs; small inputs get a
// smaller one (see newMatchFinder), which keeps short inputs cheap.
const maxHashBits = 16

// matchFinder holds hash chains over the window: head[h] is the latest
// position whose three bytes hash to h, plus one (0 means none), and
// prev[p&mask] the position before p with the same hash, plus one.
type matchFinder struct {
	src      []byte
	head     []int
	prev     []int
	mask     int    // len(prev)-1
	shift    uint32 // 32 - hash bits
	next     int    // next position to insert
	maxChain int
}

// newMatchFinder sizes its tables to the input: prev needs no more slots than
// there are positions (or window), and head about as many as positions.
func newMatchFinder(src []byte, maxChain int) *matchFinder {
	hb := min(max(bits.Len(uint(len(src))), 8), maxHashBits)
	prevSize := windowSize
	for prevSize/2 >= len(src) && prevSize > 256 {
		prevSize /= 2
	}
	return &matchFinder{
		src:      src,
		head:     make([]int, 1<<hb),
		prev:     make([]int, prevSize),
		mask:     prevSize - 1,
		shift:    uint32(32 - hb),
		maxChain: maxChain,
	}
}

// hash3 hashes the three bytes at b into the table: a multiplicative hash,
// whose top bits mix all the input bits.
func (m *matchFinder) hash3(b []byte) uint32 {
	v := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	return (v * 0x9E3779B1) >> m.shift
}

// insert adds every position before end to the chains.
func (m *matchFinder) insert(end int) {
	for ; m.next < end; m.next++ {
		p := m.next
		if p+minMatch > len(m.src) {
			continue
		}
		h := m.hash3(m.src[p:])
		m.prev[p&m.mask] = m.head[h]
		m.head[h] = p + 1
	}
}

// steps is the staircase of every position of a chunk: the steps of position
// i are step[first[i]:first[i+1]], each packed as length<<16 | distance.
type steps struct {
	first []int32
	step  []uint32
}

func stepLen(s uint32) int  { return int(s >> 16) }
func stepDist(s uint32) int { return int(s & 0xffff) }

// find fills st with the staircases of positions [start, end). Positions
// before start must already be inserted (they are, when chunks are found in
// order). Matches never reach past end, so a chunk can be parsed alone.
func (m *matchFinder) find(start, end int, st *steps) {
	src := m.src
	st.first = append(st.first[:0], 0)
	st.step = st.step[:0]
	for p := start; p < end; p++ {
		m.insert(p)
		limit := min(maxMatch, end-p)
		if limit >= minMatch {
			best := minMatch - 1
			cur := src[p : p+limit]
			h := m.hash3(cur)
			cand := m.head[h] - 1
			for chain := m.maxChain; cand >= 0 && chain > 0; chain-- {
				dist := p - cand
				if dist > windowSize {
					break
				}
				// A candidate can only improve on best if it agrees at
				// byte best; checking that first rejects most at once.
				c := src[cand : cand+limit]
				if c[best] == cur[best] {
					l := matchLen(c, cur)
					if l > best {
						st.step = append(st.step, uint32(l)<<16|uint32(dist))
						best = l
						if l == limit {
							break
						}
					}
				}
				nextCand := m.prev[cand&m.mask] - 1
				if nextCand >= cand {
					break // the slot was reused by a newer position: the chain ends
				}
				cand = nextCand
			}
		}
		st.first = append(st.first, int32(len(st.step)))
	}
	m.insert(end)
}

// matchLen returns the length of the common prefix of a and b, which have
// the same length, comparing eight bytes at a time: the lowest set bit of
// the XOR of two little-endian words is in the first byte that differs.
func matchLen(a, b []byte) int {
	n := 0
	for len(a)-n >= 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n
}
