package deflate

import (
	"math/bits"
	"slices"
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
	clear(lens)
	// Leaves are sorted by weight, ties by symbol, so the result is
	// deterministic. A leaf packs weight<<16 | symbol: weights are at most
	// 2^32 and symbols below 2^16, so comparing packed values compares
	// weights first.
	var leafBuf [numLitLen]uint64
	leaves := leafBuf[:0]
	for i, f := range freqs {
		if f > 0 {
			leaves = append(leaves, uint64(f)<<16|uint64(i))
		}
	}
	switch len(leaves) {
	case 0:
		lens[0], lens[1] = 1, 1
		return
	case 1:
		sym := int(leaves[0] & 0xffff)
		other := 0
		if sym == 0 {
			other = 1
		}
		lens[sym], lens[other] = 1, 1
		return
	}
	slices.Sort(leaves)
	n := len(leaves) // callers keep n <= 1<<maxBits: 288 <= 1<<15, 19 <= 1<<7
	weight := func(i int) uint64 { return leaves[i] >> 16 }

	// Most alphabets fit the limit with an unrestricted Huffman code, which
	// is then optimal under the limit too and much cheaper to find.
	var depthBuf [numLitLen]uint64
	depth := depthBuf[:n]
	for i := range depth {
		depth[i] = weight(i)
	}
	huffmanDepths(depth)
	if depth[0] <= uint64(maxBits) {
		for i, d := range depth {
			lens[leaves[i]&0xffff] = uint8(d)
		}
		return
	}

	// Package-merge builds one list per code length, from the longest
	// (maxBits) to 1. The list for the longest length is the leaves; each
	// shorter list is the leaves merged with the pairs ("packages") of the
	// list below it, by weight. An optimal code takes the first 2n-2 items of
	// the length-1 list; a symbol's code length is the number of lists in
	// which its leaf is among the items taken. The items taken from a list are
	// always a prefix of it, and the leaves among them a prefix of the sorted
	// leaves, so it is enough to record, per list, how many of its first k
	// items are leaves: leavesBefore[d][k] for the list of length d+1.
	stride := 2*n + 1
	flat := make([]uint16, maxBits*stride)
	leavesBefore := func(d int) []uint16 { return flat[d*stride : (d+1)*stride] }
	var wBuf [2][2 * numLitLen]uint64
	prevW, cur := wBuf[0][:0], 1
	for i := range n {
		prevW = append(prevW, weight(i))
		leavesBefore(maxBits - 1)[i+1] = uint16(i + 1)
	}
	for d := maxBits - 2; d >= 0; d-- {
		curW := wBuf[cur][:0]
		cur ^= 1
		lb := leavesBefore(d)
		li, pi := 0, 0
		np := len(prevW) / 2
		for li < n || pi < np {
			if pi >= np || (li < n && weight(li) <= prevW[2*pi]+prevW[2*pi+1]) {
				curW = append(curW, weight(li))
				li++
			} else {
				curW = append(curW, prevW[2*pi]+prevW[2*pi+1])
				pi++
			}
			lb[len(curW)] = uint16(li)
		}
		prevW = curW
	}
	take := 2*n - 2
	for d := 0; d < maxBits && take > 0; d++ {
		leavesTaken := int(leavesBefore(d)[take])
		for i := range leavesTaken {
			lens[leaves[i]&0xffff]++
		}
		take = 2 * (take - leavesTaken)
	}
}

// huffmanDepths replaces the weights in a, sorted ascending (at least two),
// by the code lengths of an optimal unrestricted prefix code, in place and in
// linear time (Moffat and Katajainen's method). The result does not
// increase: the lightest symbol gets the longest code, a[0].
//
// The first phase builds the tree bottom up, as Huffman's algorithm does,
// using a itself as the queue of internal nodes: a[next] becomes the weight
// of the next internal node while a[root:next] hold the parents' indices of
// the nodes already merged. The second turns parent indices into depths of
// internal nodes, root first. The third hands out leaf depths: at each depth,
// the slots not taken by internal nodes are leaves, assigned from the
// heaviest (last) symbol down.
func huffmanDepths(a []uint64) {
	n := len(a)
	a[0] += a[1]
	root, leaf := 0, 2
	for next := 1; next < n-1; next++ {
		// First child: the lighter of the oldest unmerged internal node
		// and the next leaf.
		if leaf >= n || a[root] < a[leaf] {
			a[next] = a[root]
			a[root] = uint64(next)
			root++
		} else {
			a[next] = a[leaf]
			leaf++
		}
		// Second child, likewise.
		if leaf >= n || (root < next && a[root] < a[leaf]) {
			a[next] += a[root]
			a[root] = uint64(next)
			root++
		} else {
			a[next] += a[leaf]
			leaf++
		}
	}
	a[n-2] = 0 // the root has depth 0
	for next := n - 3; next >= 0; next-- {
		a[next] = a[a[next]] + 1 // one deeper than the parent
	}
	avail, used, d := 1, 0, uint64(0)
	r, next := n-2, n-1
	for avail > 0 {
		for r >= 0 && a[r] == d {
			used++ // internal nodes at depth d
			r--
		}
		for avail > used {
			a[next] = d // the remaining slots at depth d are leaves
			next--
			avail--
		}
		avail, used, d = 2*used, 0, d+1
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
