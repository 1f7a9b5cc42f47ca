package huffman

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// benchPayloads are the realistic 275-byte server response of the vectors
// and an 8192-byte payload (Zandronum's MAX_UDP_PACKET) made by repeating
// it, both of which encode to the Huffman form.
func benchPayloads(b *testing.B) []struct {
	name  string
	plain []byte
} {
	var response []byte
	for _, v := range loadVectors(b) {
		if strings.HasPrefix(v.Name, "realistic") {
			response = v.plain
		}
	}
	large := bytes.Repeat(response, 8192/len(response)+1)[:8192]
	return []struct {
		name  string
		plain []byte
	}{{"response275", response}, {"large8192", large}}
}

// The table-driven codec against the spec-literal tree walk of
// reference_test.go, in the same run. Throughput counts payload bytes.
func BenchmarkDecode(b *testing.B) {
	for _, p := range benchPayloads(b) {
		src := Encode(nil, p.plain)
		if src[0] == rawMarker {
			b.Fatalf("%s encodes to the raw form", p.name)
		}
		for _, impl := range []struct {
			name   string
			decode func(dst, src []byte) ([]byte, error)
		}{{"table", Decode}, {"treewalk", refDecode}} {
			b.Run(p.name+"/"+impl.name, func(b *testing.B) {
				buf := make([]byte, 0, MaxDecoded)
				b.SetBytes(int64(len(p.plain)))
				b.ReportAllocs()
				for b.Loop() {
					buf, _ = impl.decode(buf[:0], src)
				}
				if !bytes.Equal(buf, p.plain) {
					b.Fatal("wrong output")
				}
			})
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, p := range benchPayloads(b) {
		for _, impl := range []struct {
			name   string
			encode func(dst, src []byte) []byte
		}{
			{"table", Encode},
			{"bitwise", func(dst, src []byte) []byte { return refEncode(dst, src, false) }},
		} {
			b.Run(p.name+"/"+impl.name, func(b *testing.B) {
				buf := make([]byte, 0, len(p.plain)+1)
				b.SetBytes(int64(len(p.plain)))
				b.ReportAllocs()
				for b.Loop() {
					buf = impl.encode(buf[:0], p.plain)
				}
				if !bytes.Equal(buf, refEncode(nil, p.plain, false)) {
					b.Fatal("wrong output")
				}
			})
		}
	}
}

// BenchmarkSpeedup reports the table codec's speed as a multiple of the
// spec-literal one on the same payload. The two alternate in short timed
// rounds and the fastest round of each counts, so load from other
// processes, which comes and goes, affects both alike.
func BenchmarkSpeedup(b *testing.B) {
	for _, p := range benchPayloads(b) {
		src := Encode(nil, p.plain)
		buf := make([]byte, 0, MaxDecoded)
		for _, c := range []struct {
			name      string
			fast, ref func()
		}{
			{"decode", func() { buf, _ = Decode(buf[:0], src) }, func() { buf, _ = refDecode(buf[:0], src) }},
			{"encode", func() { buf = Encode(buf[:0], p.plain) }, func() { buf = refEncode(buf[:0], p.plain, false) }},
		} {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				const reps = 16
				best := func(f func(), cur time.Duration) time.Duration {
					start := time.Now()
					for range reps {
						f()
					}
					if d := time.Since(start); cur == 0 || d < cur {
						return d
					}
					return cur
				}
				var fast, ref time.Duration
				for b.Loop() {
					fast = best(c.fast, fast)
					ref = best(c.ref, ref)
				}
				b.ReportMetric(float64(ref)/float64(fast), "x")
				b.ReportMetric(float64(len(p.plain)*reps)/fast.Seconds()/1e6, "MB/s-best")
				b.ReportMetric(float64(len(p.plain)*reps)/ref.Seconds()/1e6, "MB/s-ref-best")
			})
		}
	}
}

// BenchmarkMultiTable measures building the 16-bit multi-code table, the
// one-time cost of the first Decode.
func BenchmarkMultiTable(b *testing.B) {
	var mt multiTable
	for b.Loop() {
		if err := buildMultiTable(&mt, &decTable, &encTable); err != nil {
			b.Fatal(err)
		}
	}
}
