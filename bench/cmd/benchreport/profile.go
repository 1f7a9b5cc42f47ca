package main

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/chromedp/cdproto/profiler"
)

// profileReport summarises a Chrome CPU profile of the page: where the
// main thread's time went by script, and the page's functions that took
// the most time including what they called.
func profileReport(p *profiler.Profile, st pageStats) string {
	byID := map[int64]*profiler.ProfileNode{}
	parent := map[int64]int64{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
		for _, c := range n.Children {
			parent[c] = n.ID
		}
	}
	// The time of sample i is the delta to the next sample.
	dur := make([]float64, len(p.Samples))
	for i := range p.Samples {
		if i+1 < len(p.TimeDeltas) {
			dur[i] = float64(p.TimeDeltas[i+1]) / 1000
		}
	}
	area := map[string]float64{}
	incl := map[string]float64{}
	total := 0.0
	for i, id := range p.Samples {
		n := byID[id]
		if n == nil {
			continue
		}
		d := dur[i]
		total += d
		area[areaOf(n)] += d
		seen := map[string]bool{}
		for cur, ok := id, true; ok; cur, ok = parent[cur] {
			k := funcKey(byID[cur])
			if !seen[k] && isPageFunc(byID[cur]) {
				seen[k] = true
				incl[k] += d
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Profile of one refresh\n\n"+
		"Chrome's sampling profiler on the page's main thread (every 250 µs) during one more refresh on a fresh demo, untimed: "+
		"%s profiled; this refresh took %s to render every row (the profiler slows it down).\n\n", ms(total), ms(st.Marks["rendered"]))
	for _, tb := range []struct {
		title string
		m     map[string]float64
		most  int
	}{
		{"where the main thread was (self time)", area, 4},
		{"page function (time including callees)", incl, 4},
	} {
		t := newTable(tb.title, "ms", "share")
		for _, kv := range sortedDesc(tb.m)[:min(tb.most, len(tb.m))] {
			t.add(kv.k, ms(kv.v), fmt.Sprintf("%.0f%%", 100*kv.v/total))
		}
		b.WriteString(t.String())
		b.WriteString("\n")
	}
	return b.String()
}

type kv struct {
	k string
	v float64
}

func sortedDesc(m map[string]float64) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].v > out[j].v || out[i].v == out[j].v && out[i].k < out[j].k })
	return out
}

// areaOf names the script a sample's top frame belongs to.
func areaOf(n *profiler.ProfileNode) string {
	u := n.CallFrame.URL
	switch {
	case u == "":
		switch n.CallFrame.FunctionName {
		case "(program)":
			return "(program): the browser's own work — style, layout, paint, parsing, event dispatch"
		case "(idle)":
			return "(idle)"
		case "(garbage collector)":
			return "(garbage collector)"
		}
		return "built-ins: " + n.CallFrame.FunctionName
	case strings.HasPrefix(u, "wasm://"):
		return "querylens.wasm (the Go codecs and runtime)"
	}
	return baseName(u)
}

func baseName(u string) string {
	u, _, _ = strings.Cut(u, "?")
	b := path.Base(u)
	// Hashed asset names: browse.0123abcd.js → browse.js.
	if parts := strings.Split(b, "."); len(parts) == 3 && len(parts[1]) >= 8 {
		b = parts[0] + "." + parts[2]
	}
	return b
}

func funcKey(n *profiler.ProfileNode) string {
	if n == nil {
		return "?"
	}
	f := n.CallFrame
	name := f.FunctionName
	if name == "" {
		name = "(anonymous)"
	}
	if f.URL == "" {
		return name
	}
	if strings.HasPrefix(f.URL, "wasm://") {
		return name + " (wasm)"
	}
	return fmt.Sprintf("%s (%s:%d)", name, baseName(f.URL), f.LineNumber+1)
}

// isPageFunc reports whether n is JavaScript or wasm code (not the root,
// idle or program pseudo-frames).
func isPageFunc(n *profiler.ProfileNode) bool {
	return n != nil && n.CallFrame.URL != ""
}
