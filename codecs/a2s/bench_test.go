package a2s_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
)

func benchCodec(b *testing.B, name string, spans bool) {
	c := &a2s.Codec{}
	dgs := fixture(b, name)
	n := 0
	for _, d := range dgs {
		n += len(d)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(dgs, codecs.DecodeOptions{Spans: spans}); err != nil {
			b.Fatal(err)
		}
	}
}

// A whole conversation's replies: challenge, info with every extra field,
// three players, three rules.
func BenchmarkCodecDecode(b *testing.B)      { benchCodec(b, "conversation", false) }
func BenchmarkCodecDecodeSpans(b *testing.B) { benchCodec(b, "conversation", true) }

// Rules in three Source parts, out of order with a duplicate.
func BenchmarkCodecDecodeSplit(b *testing.B) { benchCodec(b, "rules_split_source", false) }

// Rules compressed with bzip2 in four parts.
func BenchmarkCodecDecodeBzip2(b *testing.B) { benchCodec(b, "rules_split_bzip2", false) }

func BenchmarkDecodeResponse(b *testing.B) {
	d := fixture(b, "info_source_full")[0]
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a2s.DecodeResponse(d, nil); err != nil {
			b.Fatal(err)
		}
	}
}
