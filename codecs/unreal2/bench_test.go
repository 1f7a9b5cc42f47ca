package unreal2_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/unreal2"
)

var (
	_ codecs.QueryKeyer                                             = (*unreal2.Codec)(nil)
	_ func([]byte, unreal2.Response) ([]byte, error)                = unreal2.AppendResponse
	_                                                               = [...]int{unreal2.MaxQueryLen, unreal2.DefaultPort}
	_ func(uint32, uint8, [][]byte, int) [][]byte                   = unreal2.Split
	_ func(*unreal2.Codec, []byte) (codecs.Kind, codecs.Confidence) = (*unreal2.Codec).Detect
)

func BenchmarkDecodeResponse(b *testing.B) {
	d := datagrams(b, "ut2004")[4]
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := unreal2.DecodeResponse(d, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodecDecode decodes a whole conversation into the neutral view,
// as a server list does (NoFields).
func BenchmarkCodecDecode(b *testing.B) {
	ds := datagrams(b, "ut2004")
	n := 0
	for _, d := range ds {
		n += len(d)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&unreal2.Codec{}).Decode(ds, codecs.DecodeOptions{NoFields: true, Query: []byte{0x79, 0, 0, 0, 0}}); err != nil {
			b.Fatal(err)
		}
	}
}
