package quake2_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake2"
)

// The replies a server list reads (Quake II's, QuakeWorld's with Quake
// characters) and a master's list; the Codec.Decode pair measures what
// spans cost the inspector.
var benchPackets = []struct {
	name string
	d    quake2.Dialect
}{{"q2-print", quake2.Quake2}, {"qw-n", quake2.QuakeWorld}, {"qw-master-list", quake2.QuakeWorld}}

func BenchmarkDecodeResponse(b *testing.B) {
	for _, p := range benchPackets {
		d := packet(b, p.name)
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := quake2.DecodeResponse(d, p.d, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCodecDecode builds the neutral view, as a server list does
// (nospans: NoFields), and the inspector's field map (spans).
func BenchmarkCodecDecode(b *testing.B) {
	for _, p := range benchPackets {
		ds := [][]byte{packet(b, p.name)}
		for _, mode := range []struct {
			name string
			opt  codecs.DecodeOptions
		}{{"nospans", codecs.DecodeOptions{NoFields: true}}, {"spans", codecs.DecodeOptions{Spans: true}}} {
			b.Run(p.name+"/"+mode.name, func(b *testing.B) {
				b.SetBytes(int64(len(ds[0])))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := (&quake2.Codec{Dialect: p.d}).Decode(ds, mode.opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestDecodeAllocs bounds what decoding a status reply allocates without
// spans: the strings it returns (a key, a value, a name and a skin each,
// at most) and the slices that hold them, nothing per byte.
func TestDecodeAllocs(t *testing.T) {
	d := packet(t, "qw-n")
	r, err := quake2.DecodeResponse(d, quake2.QuakeWorld, nil)
	if err != nil {
		t.Fatal(err)
	}
	max := float64(2*len(r.Vars) + 2*len(r.Players) + 12)
	if n := testing.AllocsPerRun(50, func() { quake2.DecodeResponse(d, quake2.QuakeWorld, nil) }); n > max {
		t.Errorf("%v allocations, want at most %v", n, max)
	}
}
