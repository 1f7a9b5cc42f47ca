package deflate

import (
	"math/bits"
	"sort"
)

// codeLengths sets lens[i] to the length of an optimal prefix code for
// symbol i with frequency freqs[i], no code longer than maxBits, using the
// package-merge algorithm (Larmore and Hirschberg). Symbols of frequency zero
// get length zero. When fewer than two symbols have a nonzero frequency,
// symbols are added with length 1 so that the code is always complete and has
// two codes: inflaters (zlib) refuse an incomplete code-length code, and a
// one-code literal/length or distance code is a special case best avoided.
//
// lens must be as long as freqs, and 1<<maxBits must be at least len(freqs).
func codeLengths(freqs []uint32, maxBits int, lens []uint8) {
	for i := range lens {
		lens[i] = 0
	}
	type leaf struct {
		w   uint64
		sym int
	}
	var leaves []leaf
	for i, f := range freqs {
		if f > 0 {
			leaves = append(leaves, leaf{uint64(f), i})
		}
	}
	switch len(leaves) {
	case 0:
		lens[0], lens[1] = 1, 1
		return
	case 1:
		other := 0
		if leaves[0].sym == 0 {
			other = 1
		}
		lens[leaves[0].sym], lens[other] = 1, 1
		return
	}
	sort.Slice(leaves, func(a, b int) bool {
		if leaves[a].w != leaves[b].w {
			return leaves[a].w < leaves[b].w
		}
		return leaves[a].sym < leaves[b].sym
	})
	n := len(leaves) // callers keep n <= 1<<maxBits: 288 <= 1<<15, 19 <= 1<<7

	// Package-merge builds one list per code length, from the longest
	// (maxBits) to 1. The list for the longest length is the leaves; each
	// shorter list is the leaves merged with the pairs ("packages") of the
	// list below it, by weight. An optimal code takes the first 2n-2 items of
	// the length-1 list; a symbol's code length is the number of lists in
	// which its leaf is among the items taken. The items taken from a list are
	// always a prefix of it, and the leaves among them a prefix of the sorted
	// leaves, so it is enough to record, per list, whether each item is a leaf.
	//
	// isLeaf[d] describes the list for length d+1; weights are only needed
	// while the lists are built.
	isLeaf := make([][]bool, maxBits)
	prevW := make([]uint64, 0, 2*n)
	curW := make([]uint64, 0, 2*n)
	for i := range leaves {
		prevW = append(prevW, leaves[i].w)
	}
	isLeaf[maxBits-1] = make([]bool, n)
	for i := range isLeaf[maxBits-1] {
		isLeaf[maxBits-1][i] = true
	}
	for d := maxBits - 2; d >= 0; d-- {
		curW = curW[:0]
		flags := make([]bool, 0, 2*n)
		li, pi := 0, 0
		np := len(prevW) / 2
		for li < n || pi < np {
			if pi >= np || (li < n && leaves[li].w <= prevW[2*pi]+prevW[2*pi+1]) {
				curW = append(curW, leaves[li].w)
				flags = append(flags, true)
				li++
			} else {
				curW = append(curW, prevW[2*pi]+prevW[2*pi+1])
				flags = append(flags, false)
				pi++
			}
		}
		isLeaf[d] = flags
		prevW, curW = curW, prevW
	}
	take := 2*n - 2
	for d := 0; d < maxBits && take > 0; d++ {
		leavesTaken := 0
		for _, l := range isLeaf[d][:take] {
			if l {
				leavesTaken++
			}
		}
		for i := 0; i < leavesTaken; i++ {
			lens[leaves[i].sym]++
		}
		take = 2 * (take - leavesTaken)
	}
}

// canonicalCodes returns the canonical code (RFC 1951 section 3.2.2) of each
// symbol from its length, bit-reversed so that bitWriter, which sends the
// least significant bit first, sends the code's first bit first.
func canonicalCodes(lens []uint8, codes []uint16) {
	var count [maxCodeBits + 2]uint16
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [maxCodeBits + 2]uint16
	code := uint16(0)
	for b := 1; b <= maxCodeBits+1; b++ {
		code = (code + count[b-1]) << 1
		next[b] = code
	}
	for i, l := range lens {
		if l == 0 {
			codes[i] = 0
			continue
		}
		c := next[l]
		next[l]++
		codes[i] = bits.Reverse16(c) >> (16 - l)
	}
}
