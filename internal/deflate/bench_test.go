package deflate

import (
	"bytes"
	"compress/gzip"
	"os"
	"slices"
	"testing"
	"time"
)

// benchCorpus is deterministic: generated text, the codecs' test packets in
// name order, and runs of zeros such as binaries hold.
func benchCorpus(b *testing.B) []byte {
	packets := goldenPackets(b)
	names := make([]string, 0, len(packets))
	for n := range packets {
		names = append(names, n)
	}
	slices.Sort(names)
	var c []byte
	c = append(c, text(300000)...)
	for _, n := range names {
		c = append(c, packets[n]...)
	}
	for i := range 50 {
		c = append(c, bytes.Repeat([]byte{0}, 100+37*i)...)
		c = append(c, randomBytes(200, uint64(i))...)
	}
	return c
}

// reportCPU reports the process CPU time per operation since start: on the
// shared, loaded machine it is steadier than ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 {
		b.ReportMetric((processCPU()-start).Seconds()/float64(b.N), "cpu-s/op")
	}
}

// BenchmarkGzip compares this encoder with compress/gzip at
// BestCompression on the same inputs in the same run. Each sub-benchmark
// reports the compressed size (bytes) and its ratio to compress/gzip's
// (ratio, below 1 is smaller), and the CPU seconds per operation. With the browser module built
// (web/static/querylens.wasm) it is measured too.
//
//	go test -run '^$' -bench Gzip -benchtime 1x ./internal/deflate
func BenchmarkGzip(b *testing.B) {
	inputs := []struct {
		name string
		src  []byte
	}{{"corpus", benchCorpus(b)}}
	if w, err := os.ReadFile("../../web/static/querylens.wasm"); err == nil {
		inputs = append(inputs, struct {
			name string
			src  []byte
		}{"wasm", w})
	}
	for _, in := range inputs {
		var ref int
		b.Run(in.name+"/compress-gzip-9", func(b *testing.B) {
			b.SetBytes(int64(len(in.src)))
			cpu := processCPU()
			for b.Loop() {
				var buf bytes.Buffer
				w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
				w.Write(in.src)
				w.Close()
				ref = buf.Len()
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(ref), "bytes")
			b.ReportMetric(1, "ratio")
		})
		for _, o := range []struct {
			name string
			opt  Options
		}{
			{"deflate-i1", Options{Iterations: 1}},
			{"deflate-i15", Options{}},
		} {
			b.Run(in.name+"/"+o.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.src)))
				var n int
				cpu := processCPU()
				for b.Loop() {
					n = len(AppendGzip(nil, in.src, o.opt))
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(n), "bytes")
				if ref > 0 {
					b.ReportMetric(float64(n)/float64(ref), "ratio")
				}
			})
		}
	}
}
