package gamespy2

import (
	"testing"

	"github.com/querylens/querylens/codecs"
)

func benchReply(b *testing.B) ([]byte, Request) {
	req := FullRequest(id1020)
	reply, err := AppendResponse(nil, sample(), req)
	if err != nil {
		b.Fatal(err)
	}
	return reply, req
}

func BenchmarkDecodeResponse(b *testing.B) {
	reply, req := benchReply(b)
	cut, _ := AppendResponse(nil, bigServer(), req)
	for _, bc := range []struct {
		name  string
		reply []byte
		req   *Request
		spans bool
	}{
		{"request", reply, &req, false},
		{"inferred", reply, nil, false},
		{"spans", reply, &req, true},
		{"1400", cut, &req, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.reply)))
			b.ReportAllocs()
			var spans []codecs.Span
			for b.Loop() {
				if bc.spans {
					spans = spans[:0]
					decodeResponse(bc.reply, bc.req, &spans, 0)
				} else {
					DecodeResponse(bc.reply, bc.req)
				}
			}
		})
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	_, req := benchReply(b)
	resp := sample()
	buf := make([]byte, 0, MaxReply)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendResponse(buf[:0], resp, req)
	}
}

func BenchmarkCodecDecode(b *testing.B) {
	reply, _ := benchReply(b)
	dgs := [][]byte{reply}
	b.ReportAllocs()
	for b.Loop() {
		(&Codec{}).Decode(dgs, codecs.DecodeOptions{})
	}
}

// TestDecodeAllocs: with spans off, decoding allocates only what it
// returns: one string holding the ASCII text, the rules, and per table its
// names, its values and its row headers (8 for a reply with all three
// sections), plus one string per value that is not ASCII.
func TestDecodeAllocs(t *testing.T) {
	req := FullRequest(id1020)
	ascii := sample()
	ascii.Rules[0].Value = "Cafe Conquest"
	ascii.Players.Rows[0][0] = "Zoe"
	latin, _ := AppendResponse(nil, sample(), req)
	plain, _ := AppendResponse(nil, ascii, req)
	cut, _ := AppendResponse(nil, bigServer(), req)
	for _, tc := range []struct {
		name  string
		b     []byte
		req   *Request
		allow float64
	}{
		{"ascii", plain, &req, 8},
		{"ascii inferred", plain, nil, 8},
		{"two latin-1 values", latin, &req, 10},
		{"1400-byte cut", cut, &req, 8},
		{"header only", plain[:headerLen], &Request{ID: id1020}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testing.AllocsPerRun(50, func() {
				if _, err := DecodeResponse(tc.b, tc.req); err != nil {
					t.Fatal(err)
				}
			})
			if got > tc.allow {
				t.Errorf("allocs = %v, budget %v", got, tc.allow)
			}
		})
	}
}
