package bench

import (
	"errors"
	"sync"
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
// querylens.decode() does in the browser. BenchmarkDecodeConversation is
// the native side of the server browser's whole call per server.

// warm runs f untimed for a while first: V8 compiles wasm functions on
// their first call and optimises hot ones later, in the background, so
// without it a short wasm benchmark times the compiler.
func warm(f func()) {
	start := time.Now()
	for i := 0; i < 100000 && time.Since(start) < 50*time.Millisecond; i++ {
		f()
	}
}

// reportCPU adds the process's CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration, n int) {
	if d := ProcessCPU() - start; n > 0 && start > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

var warmAll sync.Once

// corpus loads the packets and, once per process, decodes all of them in
// every form until that costs a steady amount of CPU: V8 optimises a wasm
// function in the background some time after it becomes hot, later still
// on a busy machine, and the first benchmarks of a run would otherwise time
// that compiler's work and the unoptimised code.
func corpus(b *testing.B) []Packet {
	ps, err := Corpus("..")
	if err != nil {
		b.Fatal(err)
	}
	warmAll.Do(func() {
		// Until one pass over the corpus costs the same CPU time as the
		// one before (the engine's background compiles count: they are
		// this process's threads), for at most 5 s.
		start := time.Now()
		prev := time.Duration(0)
		for time.Since(start) < 5*time.Second {
			c0 := ProcessCPU()
			for range 20 {
				for _, p := range ps {
					c, _ := codecs.Lookup(p.Protocol)
					for _, spans := range []bool{false, true} {
						if m, err := c.Decode(p.Datagrams, codecs.DecodeOptions{Query: p.Query, Spans: spans}); err == nil {
							m.AppendJSON(nil)
						}
					}
				}
			}
			d := ProcessCPU() - c0
			if prev > 0 && time.Since(start) > 500*time.Millisecond && d < prev*115/100 && prev < d*115/100 {
				break
			}
			prev = d
		}
	})
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
				n, cpu := 0, ProcessCPU()
				for b.Loop() {
					if _, err := c.Decode(p.Datagrams, opt); err != nil {
						b.Fatal(err)
					}
					n++
				}
				reportCPU(b, cpu, n)
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
			n, cpu := 0, ProcessCPU()
			for b.Loop() {
				m, err := c.Decode(p.Datagrams, opt)
				if err != nil {
					b.Fatal(err)
				}
				buf = m.AppendJSON(buf[:0])
				n++
			}
			reportCPU(b, cpu, n)
		})
	}
}

// conversationOptions are the query options the packet's conversation
// needs: a master's list answers a master query.
func conversationOptions(p Packet) map[string]string {
	if p.Protocol == "zandronum" && p.Name == "master-list" {
		return map[string]string{"master": "true"}
	}
	return nil
}

// converse is what the browser page's worker has Go do for one server
// (web/static/worker.js, conversation.step): start a conversation, feed
// every reply, decode the result against the query sent, and write the
// table's row (codecs.AppendSummaryJSON) as JSON.
func converse(c codecs.Codec, p Packet, buf []byte) ([]byte, error) {
	q, err := c.NewQuery(conversationOptions(p))
	if err != nil {
		return buf, err
	}
	start := q.Start()
	done := false
	for _, d := range p.Datagrams {
		_, done, _ = q.Feed(d)
	}
	if !done {
		return buf, errors.New("the conversation did not complete")
	}
	m, err := q.Result(codecs.DecodeOptions{Query: start[len(start)-1], NoFields: true})
	return codecs.AppendSummaryJSON(buf, m, err), err
}

func BenchmarkDecodeConversation(b *testing.B) {
	for _, p := range corpus(b) {
		c, err := codecs.Lookup(p.Protocol)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := converse(c, p, nil); err != nil {
			b.Fatalf("%s/%s: %v", p.Protocol, p.Name, err)
		}
		b.Run(p.Protocol+"/"+p.Name, func(b *testing.B) {
			warm(func() { converse(c, p, nil) })
			b.SetBytes(int64(p.Bytes()))
			b.ReportAllocs()
			var buf []byte
			n, cpu := 0, ProcessCPU()
			for b.Loop() {
				buf, _ = converse(c, p, buf[:0])
				n++
			}
			reportCPU(b, cpu, n)
		})
	}
}
