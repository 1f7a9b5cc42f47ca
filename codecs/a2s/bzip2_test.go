package a2s_test

import (
	"bytes"
	stdbzip2 "compress/bzip2" // the reference for the differential tests; never in the module
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// bzStream is one stream of testdata/bzip2 and what it decompresses to.
type bzStream struct {
	name   string
	b      []byte
	size   int
	sha256 string
}

// bzStreams reads testdata/bzip2/SUMS and the streams it names.
func bzStreams(t testing.TB) []bzStream {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join("testdata", "bzip2", "SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var out []bzStream
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("SUMS: %q: want name size sha256", line)
		}
		b, err := os.ReadFile(filepath.Join("testdata", "bzip2", f[0]))
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bzStream{f[0], b, n, f[2]})
	}
	return out
}

// TestBunzip2: every stream decompresses to its size and hash with the
// bound at exactly its size, to ErrTooLong with one byte less, and to the
// same bytes as compress/bzip2.
func TestBunzip2(t *testing.T) {
	for _, s := range bzStreams(t) {
		t.Run(s.name, func(t *testing.T) {
			got, err := a2s.Bunzip2(nil, s.b, s.size)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(got)
			if len(got) != s.size || hex.EncodeToString(sum[:]) != s.sha256 {
				t.Fatalf("got %d bytes with SHA-256 %x, want %d bytes, %s", len(got), sum, s.size, s.sha256)
			}
			want, err := io.ReadAll(stdbzip2.NewReader(bytes.NewReader(s.b)))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("compress/bzip2 gives %d bytes (err %v), we give %d", len(want), err, len(got))
			}
			// Appends to dst.
			pre := []byte("before")
			if got, err := a2s.Bunzip2(slices.Clone(pre), s.b, s.size); err != nil || !bytes.Equal(got, append(pre, want...)) {
				t.Errorf("appending to %q: %d bytes, err %v", pre, len(got), err)
			}
			if s.size > 0 {
				_, err := a2s.Bunzip2(nil, s.b, s.size-1)
				codectest.WantError(t, err, codecs.ErrTooLong, "bzip2.output", -1)
			}
		})
	}
}

// TestBunzip2Truncated: every prefix of every stream is an error inside
// the prefix, never a panic. The multi-block stream is cut at every byte
// of its first 200 and last 64 (the end and its CRC) and every 499th
// between. The concatenated
// streams are left out: a prefix of them is a whole stream.
func TestBunzip2Truncated(t *testing.T) {
	for _, s := range bzStreams(t) {
		if s.name == "concatenated.bz2" {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			for i := 0; i < len(s.b); i++ {
				if len(s.b) > 3000 && i > 200 && i < len(s.b)-64 && i%499 != 0 {
					continue
				}
				_, err := a2s.Bunzip2(nil, s.b[:i], s.size)
				e, ok := errors.AsType[*codecs.Error](err)
				if !ok {
					t.Fatalf("prefix of %d bytes: err = %v (%T), want a *codecs.Error", i, err, err)
				}
				if e.Offset > i || !strings.HasPrefix(e.Field, "bzip2.") {
					t.Fatalf("prefix of %d bytes: %v", i, err)
				}
			}
		})
	}
}

// TestBunzip2Corrupt: damaged streams fail naming the field at fault.
// Offsets: "BZh9" (4 bytes), then a block's magic (6) and CRC (4) at 4,
// and the randomised bit at the top of byte 14; the empty stream is
// "BZh9", the end magic and the stream CRC at 10.
func TestBunzip2Corrupt(t *testing.T) {
	streams := map[string][]byte{}
	for _, s := range bzStreams(t) {
		streams[s.name] = s.b
	}
	cases := []struct {
		name     string
		stream   string
		at       int  // byte to change
		xor      byte // with this
		field    string
		sentinel error
		offset   int
	}{
		{"magic", "text-9.bz2", 0, 'B' ^ 'X', "bzip2.header", codecs.ErrBadMagic, 0},
		{"level 0", "text-9.bz2", 3, '9' ^ '0', "bzip2.level", codecs.ErrBadValue, 3},
		{"level past 9", "text-9.bz2", 3, '9' ^ 'A', "bzip2.level", codecs.ErrBadValue, 3},
		{"block magic", "text-9.bz2", 4, 0x01, "bzip2.block_magic", codecs.ErrBadMagic, 4},
		{"block crc", "text-9.bz2", 13, 0x01, "bzip2.block_crc", codecs.ErrBadValue, 10},
		{"randomised", "text-9.bz2", 14, 0x80, "bzip2.randomised", codecs.ErrBadValue, 14},
		{"stream crc", "empty-9.bz2", 13, 0x01, "bzip2.stream_crc", codecs.ErrBadValue, 10},
		{"end magic", "empty-9.bz2", 9, 0x01, "bzip2.block_magic", codecs.ErrBadMagic, 4},
		{"trailing byte", "empty-9.bz2", -1, 'B', "bzip2.header", codecs.ErrShort, 14},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := slices.Clone(streams[tc.stream])
			if tc.at < 0 {
				b = append(b, tc.xor)
			} else {
				b[tc.at] ^= tc.xor
			}
			_, err := a2s.Bunzip2(nil, b, 1<<20)
			codectest.WantError(t, err, tc.sentinel, tc.field, tc.offset)
		})
	}
	// A damaged byte anywhere in a block must be caught, by the CRC at
	// the latest.
	b := streams["text-9.bz2"]
	for i := 14; i < len(b)-10; i++ {
		c := slices.Clone(b)
		c[i] ^= 0x10
		if _, err := a2s.Bunzip2(nil, c, 1<<14); err == nil {
			t.Errorf("flipping a bit of byte %d goes unnoticed", i)
		}
	}
}

// FuzzBzip2 compares the decoder with compress/bzip2: where both succeed
// they give the same bytes, and whatever compress/bzip2 decodes within
// the bound this decoder decodes too, but for one leniency of
// compress/bzip2: a group's Huffman code that leaves codes unassigned (an
// incomplete code) fails here, as in libbzip2 (BZ_DATA_ERROR), when the
// stream uses an unassigned code, while compress/bzip2 skips a tree level
// whose one side is empty and so reads such a code as an assigned one.
// Seeds: testdata/bzip2's streams but the multi-block one (and
// testdata/fuzz/FuzzBzip2's, one such stream among them).
func FuzzBzip2(f *testing.F) {
	for _, s := range bzStreams(f) {
		if len(s.b) < 4096 { // not the 34 KB of multiblock: too slow to mutate
			f.Add(s.b)
		}
	}
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := a2s.Bunzip2(nil, b, limit)
		if err != nil {
			if _, ok := errors.AsType[*codecs.Error](err); !ok {
				t.Fatalf("err = %v (%T), want a *codecs.Error", err, err)
			}
		}
		if len(got) > limit {
			t.Fatalf("%d bytes out, bound %d", len(got), limit)
		}
		want, werr := io.ReadAll(io.LimitReader(stdbzip2.NewReader(bytes.NewReader(b)), limit+1))
		switch {
		case err == nil && werr == nil && !bytes.Equal(got, want):
			t.Fatalf("we give %d bytes, compress/bzip2 %d", len(got), len(want))
		case err != nil && werr == nil && len(want) <= limit && !unassignedCode(err):
			t.Fatalf("compress/bzip2 decodes %d bytes, we fail: %v", len(want), err)
		}
	})
}

// unassignedCode says err is the decoder meeting a Huffman code that its
// group's code lengths assign to no symbol (see FuzzBzip2).
func unassignedCode(err error) bool {
	e, ok := errors.AsType[*codecs.Error](err)
	return ok && e.Field == "bzip2.symbols" && errors.Is(err, codecs.ErrBadValue) && strings.Contains(err.Error(), "assigned to no symbol")
}

// The decoder against compress/bzip2 on a 8 KB text (testdata/bzip2's
// text-9.bz2) and a rules reply (the stream of the compressed split
// fixture).
func BenchmarkBzip2(b *testing.B) {
	var text []byte
	for _, s := range bzStreams(b) {
		if s.name == "text-9.bz2" {
			text = s.b
		}
	}
	var rules []byte
	for _, d := range slices.Backward(fixture(b, "rules_split_bzip2")) { // stored in reverse: packet 0 first
		if len(rules) == 0 {
			rules = append(rules, d[20:]...) // packet 0: size and CRC32 too
		} else {
			rules = append(rules, d[12:]...)
		}
	}
	for _, in := range []struct {
		name string
		b    []byte
	}{{"text", text}, {"rules", rules}} {
		want, err := io.ReadAll(stdbzip2.NewReader(bytes.NewReader(in.b)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(in.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(want)))
			b.ReportAllocs()
			dst := make([]byte, 0, len(want))
			for b.Loop() {
				if _, err := a2s.Bunzip2(dst, in.b, len(want)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/compress-bzip2", func(b *testing.B) {
			b.SetBytes(int64(len(want)))
			b.ReportAllocs()
			dst := make([]byte, len(want))
			for b.Loop() {
				if _, err := io.ReadFull(stdbzip2.NewReader(bytes.NewReader(in.b)), dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
