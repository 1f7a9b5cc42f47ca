package huffman

import (
	"bytes"
	"strings"
	"testing"
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
