package bench

import (
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
)

// The decode benchmarks run natively and, compiled with GOOS=js
// GOARCH=wasm, under node (go_js_wasm_exec): the same code on the same
// packets, so their ratio is what compiling the codecs to WebAssembly costs.
//
// BenchmarkDecode is Codec.Decode alone (the table view, spans off) and with
// spans (the inspector's view). BenchmarkDecodeJSON adds the JSON the page
// receives (Message.AppendJSON): the native side of what
// querylens.decode() does in the browser.

// warm runs f untimed for a while first: V8 compiles wasm functions on
// their first call and optimises hot ones later, in the background, so
// without it a short wasm benchmark times the compiler.
func warm(f func()) {
	start := time.Now()
	for i := 0; i < 100000 && time.Since(start) < 50*time.Millisecond; i++ {
		f()
	}
}

func corpus(b *testing.B) []Packet {
	ps, err := Corpus("..")
	if err != nil {
		b.Fatal(err)
	}
	return ps
}

func BenchmarkDecode(b *testing.B) {
	for _, p := range corpus(b) {
		c, err := codecs.Lookup(p.Protocol)
		if err != nil {
			b.Fatal(err)
		}
		for _, spans := range []bool{false, true} {
			name := p.Protocol + "/" + p.Name + "/plain"
			if spans {
				name = p.Protocol + "/" + p.Name + "/spans"
			}
			opt := codecs.DecodeOptions{Query: p.Query, Spans: spans}
			b.Run(name, func(b *testing.B) {
				warm(func() { c.Decode(p.Datagrams, opt) })
				b.SetBytes(int64(p.Bytes()))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Decode(p.Datagrams, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	for _, p := range corpus(b) {
		c, err := codecs.Lookup(p.Protocol)
		if err != nil {
			b.Fatal(err)
		}
		opt := codecs.DecodeOptions{Query: p.Query}
		b.Run(p.Protocol+"/"+p.Name, func(b *testing.B) {
			warm(func() {
				if m, err := c.Decode(p.Datagrams, opt); err == nil {
					m.AppendJSON(nil)
				}
			})
			b.SetBytes(int64(p.Bytes()))
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				m, err := c.Decode(p.Datagrams, opt)
				if err != nil {
					b.Fatal(err)
				}
				buf = m.AppendJSON(buf[:0])
			}
		})
	}
}
