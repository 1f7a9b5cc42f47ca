package deflate

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

func TestQuick(t *testing.T) {
	for _, s := range []string{"", "a", "hello hello hello hello", string(bytes.Repeat([]byte{0}, 100000))} {
		g := AppendGzip(nil, []byte(s), Options{Iterations: 3})
		if got := gunzip(t, g); string(got) != s {
			t.Fatalf("round trip of %q failed", s[:min(len(s), 20)])
		}
		t.Logf("%d -> %d", len(s), len(g))
	}
}
