package doom3_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/doom3"
)

// The benchmarks decode etqw (the demo's ETQW reply: 13 players with clan
// tags and a bot flag, the longest layout) and doom3.

func benchPacket(b *testing.B, name string) []byte {
	p := packet(b, name)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	return p
}

func BenchmarkDecodeResponse(b *testing.B) {
	p := benchPacket(b, "etqw")
	for b.Loop() {
		if _, err := doom3.DecodeResponse(p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDetect(b *testing.B) {
	p := benchPacket(b, "etqw")
	for b.Loop() {
		(&doom3.Codec{}).Detect(p)
	}
}

// BenchmarkCodecDecode is the CLI's path: the Message with fields and the
// neutral view, spans off.
func BenchmarkCodecDecode(b *testing.B) {
	p := benchPacket(b, "doom3")
	for b.Loop() {
		if _, err := (&doom3.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodecDecodeSpans is the inspector's path: the same with spans.
func BenchmarkCodecDecodeSpans(b *testing.B) {
	p := benchPacket(b, "doom3")
	for b.Loop() {
		if _, err := (&doom3.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	p := benchPacket(b, "etqw")
	r, err := doom3.DecodeResponse(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 1024)
	for b.Loop() {
		if dst, err = doom3.AppendResponse(dst[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}
