package gamespy1_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
)

// The shared shape (codecs/all/shape_test.go lists the registered
// packages; this package checks itself until it is listed there).
var (
	_ codecs.Codec      = (*gamespy1.Codec)(nil)
	_ codecs.QueryKeyer = (*gamespy1.Codec)(nil)
	_                   = [...]int{gamespy1.MaxQueryLen, gamespy1.DefaultPort}

	_ func([]byte, gamespy1.Request) ([]byte, error)                                 = gamespy1.AppendRequest
	_ func([]byte) (gamespy1.Request, error)                                         = gamespy1.DecodeRequest
	_ func([]byte, *gamespy1.Request) (gamespy1.Response, error)                     = gamespy1.DecodeResponse
	_ func([]byte, gamespy1.Response) ([]byte, error)                                = gamespy1.AppendResponse
	_ func(*gamespy1.Codec, [][]byte, codecs.DecodeOptions) (*codecs.Message, error) = (*gamespy1.Codec).Decode
)

func BenchmarkDecodeResponse(b *testing.B) {
	d := datagrams(b, "ut451-status")[1]
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := gamespy1.DecodeResponse(d, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodecDecode reassembles UT99's five out-of-order datagrams and
// builds the neutral view, as a server list does (NoFields).
func BenchmarkCodecDecode(b *testing.B) {
	ds := datagrams(b, "ut99-status")
	n := 0
	for _, d := range ds {
		n += len(d)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&gamespy1.Codec{}).Decode(ds, codecs.DecodeOptions{NoFields: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCodecDecodeSpans(b *testing.B) {
	ds := datagrams(b, "ut99-status")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&gamespy1.Codec{}).Decode(ds, codecs.DecodeOptions{Spans: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuery is a server list's conversation: UT99's five datagrams
// fed as they came (out of order), then the neutral view (Result with
// NoFields), which reuses what Feed read.
func BenchmarkQuery(b *testing.B) {
	ds := datagrams(b, "ut99-status")
	c := &gamespy1.Codec{}
	b.ReportAllocs()
	for b.Loop() {
		q, err := c.NewQuery(nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range ds {
			if _, _, err := q.Feed(d); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := q.Result(codecs.DecodeOptions{NoFields: true}); err != nil {
			b.Fatal(err)
		}
	}
}
