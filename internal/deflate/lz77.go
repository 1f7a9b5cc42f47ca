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

const (
	hashBits = 16
	hashSize = 1 << hashBits
	winMask  = windowSize - 1
)

// matchFinder holds hash chains over the window: head[h] is the latest
// position whose three bytes hash to h, plus one (0 means none), and
// prev[p&winMask] the position before p with the same hash, plus one.
type matchFinder struct {
	src      []byte
	head     []int
	prev     []int
	next     int // next position to insert
	maxChain int
}

func newMatchFinder(src []byte, maxChain int) *matchFinder {
	return &matchFinder{
		src:      src,
		head:     make([]int, hashSize),
		prev:     make([]int, windowSize),
		maxChain: maxChain,
	}
}

func hash3(b []byte) uint32 {
	v := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	return (v * 0x9E3779B1) >> (32 - hashBits)
}

// insert adds every position before end to the chains.
func (m *matchFinder) insert(end int) {
	for ; m.next < end; m.next++ {
		p := m.next
		if p+minMatch > len(m.src) {
			continue
		}
		h := hash3(m.src[p:])
		m.prev[p&winMask] = m.head[h]
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
			h := hash3(cur)
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
				nextCand := m.prev[cand&winMask] - 1
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
