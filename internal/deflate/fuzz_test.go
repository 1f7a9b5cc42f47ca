package deflate

import (
	"bytes"
	"testing"
)

// FuzzGzip checks that whatever the input, the output inflates back to it
// and is deterministic.
func FuzzGzip(f *testing.F) {
	f.Add([]byte{})                                  // empty: one empty fixed block
	f.Add([]byte("a"))                               // one literal
	f.Add(bytes.Repeat([]byte("ab"), 200))           // overlapping matches at distance 2
	f.Add(bytes.Repeat([]byte{0}, 1000))             // a long run, lengths at 258
	f.Add(text(3000))                                // text: dynamic blocks
	f.Add(randomBytes(2000, 1))                      // incompressible: a stored block
	f.Add(append(text(500), randomBytes(500, 2)...)) // a split between two kinds
	// Little effort, so that many inputs are tried; every code path still
	// runs (splitting, segmenting, all three block kinds).
	o := Options{Iterations: 2, MaxChain: 64, MaxBlocks: 4, Rounds: 1}
	f.Fuzz(func(t *testing.T, src []byte) {
		g := AppendGzip(nil, src, o)
		if got := gunzip(t, g); !bytes.Equal(got, src) {
			t.Fatalf("round trip differs: %d bytes in, %d out", len(src), len(got))
		}
		if again := AppendGzip(nil, src, o); !bytes.Equal(again, g) {
			t.Fatal("two runs gave different bytes")
		}
	})
}
