package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/querylens/querylens/bench"
)

// goBench runs `go test -bench` on pkgs and returns the command line and
// the medians.
func (e *env) goBench(ctx context.Context, pattern string, pkgs ...string) (string, []bench.Summary, error) {
	args := []string{"test", "-vet=off", "-run", "^$", "-bench", pattern, "-benchmem", "-count", strconv.Itoa(e.count), "-benchtime", e.benchtime}
	args = append(args, pkgs...)
	cmdline := "go " + strings.Join(quoteArgs(args), " ")
	out, err := e.command(ctx, nil, "go", args...)
	runs, perr := bench.ParseBench(strings.NewReader(out))
	if err == nil {
		err = perr
	}
	if err == nil && len(runs) == 0 {
		err = fmt.Errorf("%s printed no benchmark", cmdline)
	}
	return cmdline, bench.Summarize(runs), err
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$*() ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

// shortPkg trims the module path.
func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/querylens/querylens/")
}

// allTable lists every benchmark with its medians.
func allTable(ss []bench.Summary) string {
	t := newTable("package", "benchmark", "ns/op", "MB/s", "B/op", "allocs/op", "other", "runs", "spread of ns/op")
	for _, s := range ss {
		var other []string
		var units []string
		for u := range s.Median {
			switch u {
			case "ns/op", "MB/s", "B/op", "allocs/op":
			default:
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			other = append(other, num(s.Median[u])+" "+u)
		}
		mbs := "–"
		if v, ok := s.Median["MB/s"]; ok {
			mbs = num(v)
		}
		t.add(shortPkg(s.Pkg), strings.TrimPrefix(s.Name, "Benchmark"), ns(s.Median["ns/op"]), mbs,
			num(s.Median["B/op"]), num(s.Median["allocs/op"]), strings.Join(other, ", "), strconv.Itoa(s.Runs), pct(s.Spread["ns/op"]))
	}
	return t.String()
}

func huffmanSection(ctx context.Context, e *env) (string, error) {
	cmdline, ss, err := e.goBench(ctx, ".", "./huffman")
	return huffmanReport(e, cmdline, ss), err
}

// huffmanReport writes the Huffman section from huffman's benchmarks.
func huffmanReport(e *env, cmdline string, ss []bench.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s\n\n", code(cmdline))
	// Pairs: the table codec against its baseline on the same payload, in
	// the same run (BenchmarkDecode/<payload>/table vs .../treewalk,
	// BenchmarkEncode/<payload>/table vs .../bitwise).
	t := newTable("operation", "payload", "table codec", "MB/s", "baseline", "baseline MB/s", "speedup (median ns/op)", "speedup (best interleaved rounds)")
	var decode, decodeBest []float64 // decode speedups by payload
	for _, s := range ss {
		prefix, impl, ok := cutLast(s.Name)
		if !ok || impl != "table" {
			continue
		}
		op, payload, _ := cutLast(prefix)
		for _, base := range []string{"treewalk", "bitwise"} {
			bs := bench.Find(ss, prefix+"/"+base)
			if bs == nil {
				continue
			}
			opName := strings.ToLower(strings.TrimPrefix(op, "Benchmark"))
			inter := "–"
			sp := bench.Find(ss, "BenchmarkSpeedup/"+payload+"/"+opName)
			if sp != nil {
				inter = ratio(sp.Median["x"])
			}
			r := bs.Median["ns/op"] / s.Median["ns/op"]
			if opName == "decode" && base == "treewalk" {
				decode = append(decode, r)
				if sp != nil {
					decodeBest = append(decodeBest, sp.Median["x"])
				}
			}
			t.add(opName, payload, ns(s.Median["ns/op"]), num(s.Median["MB/s"]), ns(bs.Median["ns/op"])+" ("+base+")", num(bs.Median["MB/s"]), ratio(r), inter)
		}
	}
	if len(t.rows) > 0 {
		b.WriteString("The table-driven codec against the spec-literal tree walk (decode) and bit-by-bit encoder, same payloads, same run. " +
			"The last column is huffman's BenchmarkSpeedup: the two alternate in short rounds and the fastest round of each counts, which load from other processes distorts least.\n\n")
		b.WriteString(t.String())
		b.WriteString("\n")
	}
	if len(decode) > 0 {
		lo := slices.Min(decode)
		result := "decode " + ratioRange(decode) + " the tree walk by median ns/op"
		if len(decodeBest) > 0 {
			result += ", " + ratioRange(decodeBest) + " by best interleaved rounds"
		}
		b.WriteString(goal(lo >= 10, "decode at least 10× the tree walk on every payload: "+result+".") + "\n\n")
		e.addGoal(lo >= 10, "Huffman decode against the spec-literal tree walk", "≥ 10× on every payload", result)
	}
	b.WriteString("<details><summary>Every Huffman benchmark (medians)</summary>\n\n")
	b.WriteString(allTable(ss))
	b.WriteString("\n</details>\n")
	return b.String()
}

// ratioRange formats the smallest and largest of vs as "8.73×–11×".
func ratioRange(vs []float64) string {
	lo, hi := slices.Min(vs), slices.Max(vs)
	if ratio(lo) == ratio(hi) {
		return ratio(lo)
	}
	return ratio(lo) + "–" + ratio(hi)
}

// cutLast splits "a/b/c" into "a/b" and "c".
func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func codecsSection(ctx context.Context, e *env) (string, error) {
	cmdline, ss, err := e.goBench(ctx, ".", "./codecs/...")
	return codecsReport(cmdline, ss), err
}

// codecsReport writes the codec section from the codec packages' benchmarks.
func codecsReport(cmdline string, ss []bench.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s\n\n", code(cmdline))
	b.WriteString("Each codec package's own benchmarks. Spans are the inspector's field map (DecodeOptions.Spans); " +
		"every protocol decoded with and without them on one shared corpus, natively and in wasm, is in the decoder section above.\n\n")
	// Spans against plain where a package has both forms.
	t := newTable("package", "plain", "ns/op", "allocs/op", "with spans", "ns/op", "allocs/op", "spans cost")
	for _, s := range ss {
		for _, pair := range [][2]string{{"Spans", ""}, {"/spans", "/request"}, {"/spans", "/nospans"}, {"/spans", "/plain"}} {
			base, ok := strings.CutSuffix(s.Name, pair[0])
			if !ok {
				continue
			}
			// The plain form in the same package: packages share
			// benchmark names (BenchmarkCodecDecode), so the first of a
			// name is often another package's.
			var p *bench.Summary
			for i := range ss {
				if ss[i].Pkg == s.Pkg && ss[i].Name == base+pair[1] {
					p = &ss[i]
				}
			}
			if p == nil {
				continue
			}
			t.add(shortPkg(s.Pkg), strings.TrimPrefix(p.Name, "Benchmark"), ns(p.Median["ns/op"]), num(p.Median["allocs/op"]),
				strings.TrimPrefix(s.Name, "Benchmark"), ns(s.Median["ns/op"]), num(s.Median["allocs/op"]), ratio(s.Median["ns/op"]/p.Median["ns/op"]))
		}
	}
	if len(t.rows) > 0 {
		b.WriteString(t.String())
		b.WriteString("\n")
	}
	b.WriteString("<details><summary>Every codec benchmark (medians)</summary>\n\n")
	b.WriteString(allTable(ss))
	b.WriteString("\n</details>\n")
	return b.String()
}
