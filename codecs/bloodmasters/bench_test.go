package bloodmasters_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
)

// The benchmarks decode tdm-teams (140 bytes, 4 clients) and
// dm-3-clients (the published vector, 150 bytes, 3 clients).

func benchPacket(b *testing.B, name string) []byte {
	p := packet(b, name)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	return p
}

func BenchmarkDecodeResponse(b *testing.B) {
	p := benchPacket(b, "tdm-teams")
	for b.Loop() {
		if _, err := bloodmasters.DecodeResponse(p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDetect(b *testing.B) {
	p := benchPacket(b, "tdm-teams")
	for b.Loop() {
		(&bloodmasters.Codec{}).Detect(p)
	}
}

// BenchmarkCodecDecode is the CLI's path: the Message with fields and the
// neutral view, spans off.
func BenchmarkCodecDecode(b *testing.B) {
	p := benchPacket(b, "dm-3-clients")
	for b.Loop() {
		if _, err := (&bloodmasters.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodecDecodeSpans is the inspector's path: the same with spans.
func BenchmarkCodecDecodeSpans(b *testing.B) {
	p := benchPacket(b, "dm-3-clients")
	for b.Loop() {
		if _, err := (&bloodmasters.Codec{}).Decode([][]byte{p}, codecs.DecodeOptions{Spans: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	p := benchPacket(b, "tdm-teams")
	r, err := bloodmasters.DecodeResponse(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 512)
	for b.Loop() {
		if dst, err = bloodmasters.AppendResponse(dst[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}
