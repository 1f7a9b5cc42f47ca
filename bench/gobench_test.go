package bench

import (
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/querylens/querylens/huffman
cpu: AMD EPYC
BenchmarkDecode/response275/table-2         	  911646	      1310 ns/op	 209.88 MB/s	       0 B/op	       0 allocs/op
BenchmarkDecode/response275/table-2         	  911646	      1290 ns/op	 213.10 MB/s	       0 B/op	       0 allocs/op
BenchmarkDecode/response275/table-2         	  911646	      1400 ns/op	 196.40 MB/s	       0 B/op	       0 allocs/op
BenchmarkSpeedup/large8192/decode-2         	     100	     51000 ns/op	         4.25 x
--- BENCH: BenchmarkSomething
    bench_test.go:12: a log line
PASS
ok  	github.com/querylens/querylens/huffman	3.1s
pkg: github.com/querylens/querylens/codecs/gamespy2
BenchmarkDecodeResponse/1400-2   	  100000	     10450 ns/op	 134.0 MB/s	     768 B/op	       8 allocs/op
BenchmarkWasm   	  100	     10 ns/op
`

func TestParseAndSummarize(t *testing.T) {
	runs, err := ParseBench(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs: %+v", len(runs), runs)
	}
	ss := Summarize(runs)
	if len(ss) != 4 {
		t.Fatalf("%d summaries: %+v", len(ss), ss)
	}
	d := ss[0]
	if d.Pkg != "github.com/querylens/querylens/huffman" || d.Name != "BenchmarkDecode/response275/table" || d.Runs != 3 {
		t.Fatalf("%+v", d)
	}
	if d.Median["ns/op"] != 1310 || d.Median["MB/s"] != 209.88 || d.Median["allocs/op"] != 0 {
		t.Errorf("medians %v", d.Median)
	}
	if got, want := d.Spread["ns/op"], 110.0/1310; got != want {
		t.Errorf("spread %v, want %v", got, want)
	}
	if s := Find(ss, "BenchmarkSpeedup/large8192/decode"); s == nil || s.Median["x"] != 4.25 {
		t.Errorf("custom unit: %+v", s)
	}
	if s := Find(ss, "BenchmarkDecodeResponse/1400"); s == nil || s.Pkg != "github.com/querylens/querylens/codecs/gamespy2" || s.Median["B/op"] != 768 {
		t.Errorf("second package: %+v", s)
	}
	if s := Find(ss, "BenchmarkWasm"); s == nil || s.Median["ns/op"] != 10 {
		t.Errorf("no procs suffix: %+v", s)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if s := Spread([]float64{1}); s != 0 {
		t.Errorf("one value: spread %v", s)
	}
}
