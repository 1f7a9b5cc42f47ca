package bench

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Run is one line of `go test -bench` output: one benchmark, one run.
type Run struct {
	Pkg     string             // import path from the preceding "pkg:" line
	Name    string             // "BenchmarkDecode/response275/table", GOMAXPROCS suffix removed
	N       int64              // iterations
	Metrics map[string]float64 // unit → value: "ns/op", "B/op", "allocs/op", "MB/s", custom units
}

// ParseBench reads `go test -bench` output (any number of packages, -count
// runs) and returns the benchmark lines in order. Lines that are not
// benchmark results (PASS, ok, logs) are skipped.
func ParseBench(r io.Reader) ([]Run, error) {
	var runs []Run
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if run, ok := parseBenchLine(line); ok {
			run.Pkg = pkg
			runs = append(runs, run)
		}
	}
	return runs, sc.Err()
}

// parseBenchLine parses "BenchmarkX-2  1000  123 ns/op  4 B/op ...".
func parseBenchLine(line string) (Run, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return Run{}, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Run{}, false
	}
	run := Run{Name: trimProcs(f[0]), N: n, Metrics: make(map[string]float64, (len(f)-2)/2)}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Run{}, false
		}
		run.Metrics[f[i+1]] = v
	}
	return run, true
}

// trimProcs removes the "-N" GOMAXPROCS suffix the testing package adds.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}

// Summary is every run of one benchmark reduced to medians.
type Summary struct {
	Pkg, Name string
	Runs      int
	Median    map[string]float64 // unit → median over the runs
	Spread    map[string]float64 // unit → (max-min)/median, 0 for one run
}

// Summarize groups runs by package and name, in first-seen order, and
// takes the median of every metric.
func Summarize(runs []Run) []Summary {
	type key struct{ pkg, name string }
	var order []key
	vals := map[key]map[string][]float64{}
	for _, r := range runs {
		k := key{r.Pkg, r.Name}
		m, ok := vals[k]
		if !ok {
			m = map[string][]float64{}
			vals[k] = m
			order = append(order, k)
		}
		for unit, v := range r.Metrics {
			m[unit] = append(m[unit], v)
		}
	}
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		s := Summary{Pkg: k.pkg, Name: k.name, Median: map[string]float64{}, Spread: map[string]float64{}}
		for unit, vs := range vals[k] {
			s.Runs = max(s.Runs, len(vs))
			s.Median[unit] = Median(vs)
			s.Spread[unit] = Spread(vs)
		}
		out = append(out, s)
	}
	return out
}

// Find returns the summary named name (any package), or nil.
func Find(ss []Summary, name string) *Summary {
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i]
		}
	}
	return nil
}

// Median returns the median of vs (the mean of the middle two for an even
// count), or 0 for none. vs is not modified.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Spread is (max-min)/median: how far apart the runs were, as a fraction
// of the median. 0 for fewer than two values or a zero median.
func Spread(vs []float64) float64 {
	if len(vs) < 2 {
		return 0
	}
	lo, hi := vs[0], vs[0]
	for _, v := range vs {
		lo, hi = min(lo, v), max(hi, v)
	}
	m := Median(vs)
	if m == 0 {
		return 0
	}
	return (hi - lo) / m
}
