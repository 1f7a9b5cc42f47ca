package deflate

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// TestGolden pins the exact output for fixed inputs and options. The
// encoder uses integer arithmetic only, so these hashes must match on every
// architecture (run it with GOARCH=386 or under wasm to check); a change to
// the algorithm that changes them is regenerated with -update.
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		src  []byte
		o    Options
	}{
		{"text-i3", text(60000), Options{Iterations: 3, MaxChain: 512}},
		{"mixed-i8", append(append(text(20000), randomBytes(5000, 3)...), runOf(3000)...), Options{Iterations: 8}},
		{"empty", nil, Options{}},
	}
	var got strings.Builder
	for _, tc := range cases {
		g := AppendGzip(nil, tc.src, tc.o)
		sum := sha256.Sum256(g)
		got.WriteString(tc.name + " " + itoa(len(g)) + " " + hex.EncodeToString(sum[:]) + "\n")
	}
	const path = "testdata/golden.txt"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test -run Golden -update)", err)
	}
	if got.String() != string(want) {
		t.Errorf("output changed:\ngot\n%swant\n%s", got.String(), want)
	}
}

func TestLog2Fixed(t *testing.T) {
	prev := cost(-1)
	for _, x := range []uint64{1, 2, 3, 5, 7, 10, 100, 1000, 12345, 65535, 65536, 1 << 20, 3 << 30, 1 << 32, 1<<32 + 1, 1 << 40, 1<<63 + 12345} {
		got := float64(log2Fixed(x)) / float64(costOne)
		if want := math.Log2(float64(x)); math.Abs(got-want) > 2.0/float64(costOne) {
			t.Errorf("log2(%d) = %.6f, want %.6f", x, got, want)
		}
		if c := log2Fixed(x); c < prev {
			t.Errorf("log2Fixed not monotonic at %d", x)
		} else {
			prev = c
		}
	}
}
