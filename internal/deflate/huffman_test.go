package deflate

import (
	"container/heap"
	"math/rand/v2"
	"testing"
)

// kraft returns the Kraft sum of lens scaled by 2^maxBits, the longest
// length, and how many symbols have a code.
func kraft(lens []uint8, maxBits int) (sum uint64, longest int, used int) {
	for _, l := range lens {
		if l == 0 {
			continue
		}
		used++
		sum += 1 << (maxBits - int(l))
		longest = max(longest, int(l))
	}
	return
}

// huffmanCost is the cost sum(f*len) of an unrestricted Huffman code, the
// lower bound a length-limited code meets when the limit does not bind.
func huffmanCost(freqs []uint32) uint64 {
	h := &u64heap{}
	for _, f := range freqs {
		if f > 0 {
			*h = append(*h, uint64(f))
		}
	}
	if h.Len() == 1 {
		return (*h)[0] // a lone symbol still needs one bit in DEFLATE
	}
	heap.Init(h)
	var cost uint64
	for h.Len() > 1 {
		a, b := heap.Pop(h).(uint64), heap.Pop(h).(uint64)
		cost += a + b // every merge adds one bit to each symbol below it
		heap.Push(h, a+b)
	}
	return cost
}

type u64heap []uint64

func (h u64heap) Len() int           { return len(h) }
func (h u64heap) Less(i, j int) bool { return h[i] < h[j] }
func (h u64heap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *u64heap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *u64heap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func fibonacci(n int) []uint32 {
	f := make([]uint32, n)
	a, b := uint32(1), uint32(1)
	for i := range f {
		f[i] = a
		a, b = b, a+b
	}
	return f
}

func TestCodeLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	randFreqs := func(n, sparse int) []uint32 {
		f := make([]uint32, n)
		for i := range f {
			if r.IntN(sparse) == 0 {
				f[i] = uint32(r.IntN(1000)) + 1
			}
		}
		return f
	}
	cases := []struct {
		name    string
		freqs   []uint32
		maxBits int
		bound   bool // the limit binds: the cost exceeds the unrestricted Huffman cost
	}{
		{"no symbols", make([]uint32, 30), 15, false},
		{"one symbol", []uint32{0, 0, 5, 0}, 15, false},
		{"symbol 0 alone", []uint32{9, 0, 0}, 15, false},
		{"two symbols", []uint32{1, 1000}, 15, false},
		{"uniform 256", func() []uint32 {
			f := make([]uint32, 256)
			for i := range f {
				f[i] = 10
			}
			return f
		}(), 15, false},
		{"uniform 19 under 7 bits", func() []uint32 {
			f := make([]uint32, 19)
			for i := range f {
				f[i] = 1
			}
			return f
		}(), 7, false},
		{"fibonacci 30 limited to 15", fibonacci(30), 15, true},
		{"fibonacci 19 limited to 7", fibonacci(19), 7, true},
		{"fibonacci 286 limited to 15", fibonacci(286), 15, true},
		{"random dense 286", randFreqs(286, 1), 15, false},
		{"random sparse 286", randFreqs(286, 10), 15, false},
		{"random 19 under 7 bits", randFreqs(19, 2), 7, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lens := make([]uint8, len(tc.freqs))
			codeLengths(tc.freqs, tc.maxBits, lens)
			sum, longest, used := kraft(lens, tc.maxBits)
			if longest > tc.maxBits {
				t.Fatalf("longest code %d bits, limit %d", longest, tc.maxBits)
			}
			// Kraft equality: the code is complete, so every bit pattern
			// decodes (zlib refuses incomplete code-length codes).
			if sum != 1<<tc.maxBits {
				t.Fatalf("Kraft sum %d/%d, want exactly 1", sum, uint64(1)<<tc.maxBits)
			}
			if used < 2 {
				t.Fatalf("%d codes, want at least 2", used)
			}
			for i, f := range tc.freqs {
				if f > 0 && lens[i] == 0 {
					t.Fatalf("symbol %d (frequency %d) has no code", i, f)
				}
			}
			var cost uint64
			for i, f := range tc.freqs {
				cost += uint64(f) * uint64(lens[i])
			}
			opt := huffmanCost(tc.freqs)
			if cost < opt {
				t.Fatalf("cost %d below the Huffman bound %d: lengths are wrong", cost, opt)
			}
			if !tc.bound && cost != opt {
				t.Fatalf("cost %d, unrestricted Huffman %d: not optimal", cost, opt)
			}
			if tc.bound && cost == opt {
				t.Fatalf("the %d-bit limit was expected to bind (cost %d)", tc.maxBits, cost)
			}
		})
	}
}

// TestCodeLengthsOptimalSmall checks package-merge against brute force
// on small alphabets: no prefix code within the limit is cheaper.
func TestCodeLengthsOptimalSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		n := 2 + r.IntN(5)
		maxBits := 2 + r.IntN(2)
		if 1<<maxBits < n {
			continue
		}
		freqs := make([]uint32, n)
		for i := range freqs {
			freqs[i] = uint32(1 + r.IntN(50))
		}
		lens := make([]uint8, n)
		codeLengths(freqs, maxBits, lens)
		got := uint64(0)
		for i := range freqs {
			got += uint64(freqs[i]) * uint64(lens[i])
		}
		best := bruteBest(freqs, maxBits, make([]uint8, n), 0)
		if got != best {
			t.Fatalf("freqs %v limit %d: lengths %v cost %d, best %d", freqs, maxBits, lens, got, best)
		}
	}
}

// bruteBest tries every assignment of lengths 1..maxBits satisfying Kraft's
// inequality and returns the least cost.
func bruteBest(freqs []uint32, maxBits int, lens []uint8, i int) uint64 {
	if i == len(freqs) {
		sum, _, _ := kraft(lens, maxBits)
		if sum > 1<<maxBits {
			return ^uint64(0)
		}
		c := uint64(0)
		for k := range freqs {
			c += uint64(freqs[k]) * uint64(lens[k])
		}
		return c
	}
	best := ^uint64(0)
	for l := 1; l <= maxBits; l++ {
		lens[i] = uint8(l)
		best = min(best, bruteBest(freqs, maxBits, lens, i+1))
	}
	return best
}

func TestCanonicalCodesPrefixFree(t *testing.T) {
	lens := make([]uint8, 286)
	codeLengths(fibonacci(286), 15, lens)
	codes := make([]uint16, len(lens))
	canonicalCodes(lens, codes)
	seen := make(map[[2]uint16]int)
	for i, l := range lens {
		// Each code, read in sending order, must not be a prefix of
		// another: compare every prefix of every code with whole codes.
		for k := uint8(1); k <= l; k++ {
			p := [2]uint16{uint16(k), codes[i] & (1<<k - 1)}
			if j, ok := seen[p]; ok && (k == l || lens[j] == k) {
				t.Fatalf("code of %d is a prefix of or equal to code of %d", j, i)
			}
		}
		seen[[2]uint16{uint16(l), codes[i]}] = i
	}
}

func TestRLECodeLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		lens := make([]uint8, 1+r.IntN(316))
		for i := range lens {
			switch r.IntN(4) {
			case 0:
				lens[i] = uint8(r.IntN(16))
			default:
				if i > 0 {
					lens[i] = lens[i-1] // runs
				}
			}
		}
		for flags := range 8 {
			items := rleCodeLengths(nil, lens, flags&1 != 0, flags&2 != 0, flags&4 != 0)
			var got []uint8
			for _, it := range items {
				switch it.sym {
				case 16:
					if flags&1 == 0 || len(got) == 0 || it.extra > 3 {
						t.Fatalf("bad 16 %+v", it)
					}
					for range int(it.extra) + 3 {
						got = append(got, got[len(got)-1])
					}
				case 17:
					if flags&2 == 0 || it.extra > 7 {
						t.Fatalf("bad 17 %+v", it)
					}
					got = append(got, make([]uint8, int(it.extra)+3)...)
				case 18:
					if flags&4 == 0 || it.extra > 127 {
						t.Fatalf("bad 18 %+v", it)
					}
					got = append(got, make([]uint8, int(it.extra)+11)...)
				default:
					got = append(got, it.sym)
				}
			}
			if string(got) != string(lens) {
				t.Fatalf("flags %03b: decoded %v, want %v", flags, got, lens)
			}
		}
	}
}
