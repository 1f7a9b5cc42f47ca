package gamespy3_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy3"
)

// BenchmarkDecode decodes the three packets of testdata/ut3-split.hex, as
// a conversation's Result does, without and with spans.
func BenchmarkDecode(b *testing.B) {
	dgs := conversation(b, "ut3-split")[3:]
	n := 0
	for _, d := range dgs {
		n += len(d)
	}
	for _, bc := range []struct {
		name string
		opt  codecs.DecodeOptions
	}{{"plain", codecs.DecodeOptions{}}, {"nofields", codecs.DecodeOptions{NoFields: true}}, {"spans", codecs.DecodeOptions{Spans: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (&gamespy3.Codec{}).Decode(dgs, bc.opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeResponse decodes Minecraft's one-packet reply.
func BenchmarkDecodeResponse(b *testing.B) {
	d := conversation(b, "minecraft")[3]
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := gamespy3.DecodeResponse(d, nil); err != nil {
			b.Fatal(err)
		}
	}
}
