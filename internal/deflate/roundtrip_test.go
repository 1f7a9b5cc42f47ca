package deflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fast keeps the tests quick; the defaults only change how hard the parse
// searches, not which code paths run.
var fast = Options{Iterations: 3, MaxChain: 256}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	r.Multistream(false)
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

func inflate(t testing.TB, b []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

func flateBest(t testing.TB, src []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(src)
	w.Close()
	return buf.Len()
}

// text is a deterministic English-like text of about n bytes.
func text(n int) []byte {
	words := strings.Fields("the relay forwards raw datagrams between a browser and game servers " +
		"while the decoder in the page reads each reply and the table shows names maps players and ping")
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		if r.IntN(12) == 0 {
			b = append(b, ".\n"...)
		} else {
			b = append(b, ' ')
		}
	}
	return b[:n]
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// repeatAt is random data in which a 300-byte stretch recurs exactly d bytes
// later, so the only long match is at distance d.
func repeatAt(d int) []byte {
	b := randomBytes(d+600, uint64(d))
	copy(b[d:d+300], b[:300])
	return b
}

// runOf is n copies of a byte between two random stretches.
func runOf(n int) []byte {
	b := randomBytes(100, uint64(n))
	b = append(b, bytes.Repeat([]byte{'x'}, n)...)
	return append(b, randomBytes(100, uint64(n)+7)...)
}

// goldenPackets reads the codecs' test packets: .hex files decoded (text
// after '#' is a comment), every other file as it is.
func goldenPackets(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../../codecs/*/testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a directory (fuzz corpora)
		}
		if strings.HasSuffix(f, ".hex") {
			var digits strings.Builder
			for _, line := range strings.Split(string(b), "\n") {
				line, _, _ = strings.Cut(line, "#")
				digits.WriteString(strings.Join(strings.Fields(line), ""))
			}
			if d, err := hex.DecodeString(digits.String()); err == nil {
				b = d
			}
		}
		out[strings.TrimPrefix(f, "../../")] = b
	}
	if len(out) == 0 {
		t.Fatal("no golden packets found under codecs/*/testdata")
	}
	return out
}

type namedInput struct {
	name string
	data []byte
}

func inputs(t *testing.T) []namedInput {
	in := []namedInput{
		{"empty", nil},
		{"one byte", []byte{'q'}},
		{"two bytes", []byte{0, 255}},
		{"all equal", bytes.Repeat([]byte{7}, 100000)},
		{"random 64KiB", randomBytes(65536, 1)},
		{"random 200KiB (stored blocks over 65535)", randomBytes(200000, 2)},
		{"text", text(150000)},
		{"long runs", bytes.Repeat(append(bytes.Repeat([]byte{0}, 5000), text(3000)...), 8)},
		{"repeat at distance 32767", repeatAt(32767)},
		{"repeat at distance 32768 (largest)", repeatAt(32768)},
		{"repeat at distance 32769 (out of window)", repeatAt(32769)},
	}
	for _, n := range []int{257, 258, 259, 260, 261, 515, 516, 517} {
		in = append(in, namedInput{"run of " + itoa(n), runOf(n)})
	}
	g := goldenPackets(t)
	for name, b := range g {
		in = append(in, namedInput{name, b})
	}
	return in
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// slack allows for inputs where compress/flate's encoding is as good as it
// gets; on anything compressible this encoder is well below it.
const slack = 4

func TestRoundTrip(t *testing.T) {
	for _, tc := range inputs(t) {
		t.Run(tc.name, func(t *testing.T) {
			g := AppendGzip(nil, tc.data, fast)
			if got := gunzip(t, g); !bytes.Equal(got, tc.data) {
				t.Fatalf("round trip differs: %d bytes in, %d out", len(tc.data), len(got))
			}
			ref := flateBest(t, tc.data)
			t.Logf("diff %d (%d vs %d)", len(g)-ref, len(g), ref)
			if len(g) > ref+slack {
				t.Errorf("%d bytes, compress/gzip BestCompression %d", len(g), ref)
			}
		})
	}
}

func TestGzipHeaderDeterministic(t *testing.T) {
	src := text(20000)
	a, b := Gzip(src), Gzip(src)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs gave different bytes")
	}
	want := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff}
	if !bytes.Equal(a[:10], want) {
		t.Fatalf("header % x, want % x", a[:10], want)
	}
	r, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "" || !r.ModTime.IsZero() {
		t.Fatalf("header has name %q, time %v", r.Name, r.ModTime)
	}
}

// TestChunks crosses chunk boundaries, where matches must still reach back
// into the previous chunk and the final block comes last. Small chunks take
// the same path as ChunkSize ones, far faster.
func TestChunks(t *testing.T) {
	small := append(text(50000), randomBytes(3000, 9)...)
	small = append(small, text(20000)...)
	for _, tc := range []struct {
		name string
		src  []byte
		o    Options
	}{
		{"4KiB chunks", small, Options{Iterations: 2, chunk: 4096}},
		{"one byte over a 64KiB chunk", small[:65537], Options{Iterations: 2, chunk: 65536}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := AppendGzip(nil, tc.src, tc.o)
			if got := gunzip(t, g); !bytes.Equal(got, tc.src) {
				t.Fatal("round trip across chunks differs")
			}
			if ref := flateBest(t, tc.src); len(g) > ref {
				t.Errorf("%d bytes, compress/gzip BestCompression %d", len(g), ref)
			}
		})
	}
}

// TestBlockKinds writes each block type for the same tokens and inflates it.
func TestBlockKinds(t *testing.T) {
	src := text(5000)
	mf := newMatchFinder(src, 64)
	var st steps
	mf.find(0, len(src), &st)
	ts := greedy(src, 0, 0, len(src), &st, nil)
	var h histogram
	h.addAll(ts)
	for _, k := range []struct {
		kind blockKind
		bits int
	}{{kindStored, storedBits(len(src))}, {kindFixed, fixedBits(&h)}, {kindDynamic, dynamicBits(&h, shaped)}} {
		var w bitWriter
		writeBlock(&w, k.kind, ts, src, true)
		got := w.bitLen()
		out := w.finish()
		if !bytes.Equal(inflate(t, out), src) {
			t.Fatalf("kind %d: round trip differs", k.kind)
		}
		// The estimate is exact for coded blocks and an upper bound for
		// stored ones (it counts the worst-case padding).
		if (k.kind != kindStored && got != k.bits) || got > k.bits {
			t.Errorf("kind %d: wrote %d bits, estimated %d", k.kind, got, k.bits)
		}
	}
}

func TestSymbols(t *testing.T) {
	for l := minMatch; l <= maxMatch; l++ {
		s := lengthSym(l)
		lo := int(lengthBase[s])
		hi := lo + 1<<lengthExtra[s] - 1
		if l < lo || l > hi || (l == maxMatch && s != 28) || (l < maxMatch && s == 28) {
			t.Fatalf("length %d: symbol %d covers %d..%d", l, 257+s, lo, hi)
		}
	}
	for d := 1; d <= windowSize; d++ {
		s := distSym(d)
		lo := int(distBase[s])
		hi := lo + 1<<distExtra[s] - 1
		if d < lo || d > hi {
			t.Fatalf("distance %d: symbol %d covers %d..%d", d, s, lo, hi)
		}
	}
}

// TestWindowEdge checks that a repeat exactly 32768 bytes back, the largest
// distance DEFLATE has, is used, and that one a byte further is not (it
// would not decode).
func TestWindowEdge(t *testing.T) {
	for _, tc := range []struct {
		dist   int
		inside bool
	}{{32767, true}, {32768, true}, {32769, false}} {
		src := repeatAt(tc.dist)
		g := AppendGzip(nil, src, fast)
		if !bytes.Equal(gunzip(t, g), src) {
			t.Fatalf("distance %d: round trip differs", tc.dist)
		}
		// The data is random but for the 300-byte repeat: only the match
		// makes the output smaller than the input.
		saved := len(src) - len(g)
		if tc.inside && saved < 250 {
			t.Errorf("distance %d: %d bytes saved, the repeat was not matched", tc.dist, saved)
		}
		if !tc.inside && saved > 50 {
			t.Errorf("distance %d: %d bytes saved, more than random data allows", tc.dist, saved)
		}
	}
}
