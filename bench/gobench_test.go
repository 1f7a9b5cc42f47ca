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

func TestParseBenchLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		ok         bool
		want       Run
	}{
		{"procs suffix", "BenchmarkDecode/zandronum/response/plain-2 \t 1000 \t 13300 ns/op \t 68 allocs/op", true,
			Run{Name: "BenchmarkDecode/zandronum/response/plain", N: 1000, Metrics: map[string]float64{"ns/op": 13300, "allocs/op": 68}}},
		{"a sub-benchmark with a dash", "BenchmarkRelayProcess/load=quiet/relay=now-2 1000 1000000 ns/op 97557 exchanges/s@2cpu", true,
			Run{Name: "BenchmarkRelayProcess/load=quiet/relay=now", N: 1000, Metrics: map[string]float64{"ns/op": 1e6, "exchanges/s@2cpu": 97557}}},
		{"a dash not followed by digits stays", "BenchmarkX/a-b 10 5 ns/op", true,
			Run{Name: "BenchmarkX/a-b", N: 10, Metrics: map[string]float64{"ns/op": 5}}},
		{"units with µ", "BenchmarkRoundTrip 5000 240000 ns/op 26.00 added-p50-µs", true,
			Run{Name: "BenchmarkRoundTrip", N: 5000, Metrics: map[string]float64{"ns/op": 240000, "added-p50-µs": 26}}},
		{"node's form, decimals", "BenchmarkPageDecode/ogp/v1/plain 300 410000.0 ns/op 383000.0 cpu-ns/op", true,
			Run{Name: "BenchmarkPageDecode/ogp/v1/plain", N: 300, Metrics: map[string]float64{"ns/op": 410000, "cpu-ns/op": 383000}}},
		{"a value without its unit", "BenchmarkX-2 10 5 ns/op 7", false, Run{}},
		{"iterations not a number", "BenchmarkX-2 many 5 ns/op", false, Run{}},
		{"value not a number", "BenchmarkX-2 10 fast ns/op", false, Run{}},
		{"a failure line", "--- FAIL: BenchmarkX-2", false, Run{}},
		{"the header of a log", "BenchmarkX-2 --- BENCH", false, Run{}},
		{"not a benchmark", "ok  \tgithub.com/querylens/querylens/huffman\t3.1s", false, Run{}},
		{"empty", "", false, Run{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseBenchLine(tc.line)
			if ok != tc.ok {
				t.Fatalf("parseBenchLine(%q) ok = %v, want %v (%+v)", tc.line, ok, tc.ok, got)
			}
			if !ok {
				return
			}
			if got.Name != tc.want.Name || got.N != tc.want.N || len(got.Metrics) != len(tc.want.Metrics) {
				t.Fatalf("parseBenchLine(%q) = %+v, want %+v", tc.line, got, tc.want)
			}
			for u, v := range tc.want.Metrics {
				if got.Metrics[u] != v {
					t.Errorf("%s = %v, want %v", u, got.Metrics[u], v)
				}
			}
		})
	}
}

// Summarize keeps benchmarks of the same name in different packages apart,
// in the order first seen, and counts runs by the metric seen most.
func TestSummarizeByPackage(t *testing.T) {
	runs, err := ParseBench(strings.NewReader(`pkg: a
BenchmarkX-2 10 100 ns/op
pkg: b
BenchmarkX-2 10 300 ns/op
pkg: a
BenchmarkX-2 10 200 ns/op 5 extra/op
`))
	if err != nil {
		t.Fatal(err)
	}
	ss := Summarize(runs)
	if len(ss) != 2 || ss[0].Pkg != "a" || ss[1].Pkg != "b" {
		t.Fatalf("summaries %+v", ss)
	}
	if ss[0].Runs != 2 || ss[0].Median["ns/op"] != 150 || ss[0].Median["extra/op"] != 5 || ss[0].Spread["extra/op"] != 0 {
		t.Errorf("package a: %+v", ss[0])
	}
	if ss[1].Runs != 1 || ss[1].Median["ns/op"] != 300 {
		t.Errorf("package b: %+v", ss[1])
	}
	if got, want := ss[0].Spread["ns/op"], 100.0/150; got != want {
		t.Errorf("spread %v, want %v", got, want)
	}
}
