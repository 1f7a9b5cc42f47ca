package quake3_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake3"
)

// The decoders on the statusResponse a server list reads most (ioquake3's,
// with colour codes and a bot), DarkPlaces' (Xonotic's) and a master's
// getserversResponse; the Codec.Decode pair measures what spans cost the
// inspector.
var benchPackets = []string{"status-ioq3", "status-xonotic", "servers"}

func BenchmarkDecodeResponse(b *testing.B) {
	for _, name := range benchPackets {
		d := packet(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := quake3.DecodeResponse(d, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCodecDecode builds the neutral view, as a server list does
// (nospans: NoFields), and the inspector's field map (spans).
func BenchmarkCodecDecode(b *testing.B) {
	for _, name := range benchPackets {
		ds := [][]byte{packet(b, name)}
		for _, mode := range []struct {
			name string
			opt  codecs.DecodeOptions
		}{{"nospans", codecs.DecodeOptions{NoFields: true}}, {"spans", codecs.DecodeOptions{Spans: true}}} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				b.SetBytes(int64(len(ds[0])))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := (&quake3.Codec{}).Decode(ds, mode.opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	resp, err := quake3.DecodeResponse(packet(b, "status-ioq3"), nil)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = quake3.AppendResponse(dst[:0], resp); err != nil {
			b.Fatal(err)
		}
	}
}
