package ogp_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

// Decoding the spec's populated 1.0x answer (201 bytes, 3 players).

func benchDecode(b *testing.B, name string) {
	d := datagram(&testing.T{}, name)
	var a ogp.Response
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Decode(d, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResponse(b *testing.B)     { benchDecode(b, "v1_answer") }
func BenchmarkDecodeResponseFull(b *testing.B) { benchDecode(b, "v1_full_answer") }

func benchCodec(b *testing.B, name string, spans bool) {
	c := &ogp.Codec{}
	dgs := [][]byte{datagram(&testing.T{}, name)}
	b.SetBytes(int64(len(dgs[0])))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(dgs, codecs.DecodeOptions{Spans: spans}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCodecDecode(b *testing.B)      { benchCodec(b, "v1_answer", false) }
func BenchmarkCodecDecodeSpans(b *testing.B) { benchCodec(b, "v1_answer", true) }

func BenchmarkAppendResponse(b *testing.B) {
	a, err := ogp.DecodeResponse(datagram(&testing.T{}, "v1_answer"), nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = ogp.AppendResponse(buf[:0], a)
	}
}

func BenchmarkReassemble(b *testing.B) {
	p := readPacket(b, "testdata/v1_split_answer.hex")
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = ogp.Reassemble(buf[:0], p.datagrams)
	}
}
