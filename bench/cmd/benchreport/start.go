package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/bench"
)

// startTimeline is where one opening of the browser page spent its time
// until the first decoded rows, in ms since navigation, read in the page
// after qlFirstDecodeMs is set (startScript).
type startTimeline map[string]float64

// startSteps are the steps of startTimeline in the order they happen, with
// what each means.
var startSteps = []struct{ key, text string }{
	{"html", "the page's HTML received"},
	{"css", "app.css received"},
	{"bootAsked", "boot.js requested"},
	{"bootFetched", "boot.js received"},
	{"workerCreated", "worker created (ql-worker-created)"},
	{"workerFetched", "worker.js received"},
	{"wasm", "wasm module received (the page's fetch)"},
	{"wasmCompiled", "wasm module compiled by the page (ql-wasm-compiled)"},
	{"w.script", "worker script running"},
	{"w.module", "worker: compiled module received"},
	{"w.modules", "worker: relay client and helpers imported"},
	{"w.decoder", "worker: decoder instantiated"},
	{"w.open", "worker: relay HELLO"},
	{"hello", "the page hears of the HELLO"},
	{"ready", "the page hears the worker is ready"},
	{"w.firstResults", "worker: first results posted"},
	{"firstDecode", "first decoded rows in the page (qlFirstDecodeMs)"},
}

// startScript reads startTimeline in the page.
const startScript = `(() => {
  const t = {};
  const nav = performance.getEntriesByType("navigation")[0];
  if (nav) t.html = nav.responseEnd;
  for (const r of performance.getEntriesByType("resource")) {
    const name = r.name.split("/").pop() || "";
    if (name.startsWith("app.")) t.css = r.responseEnd;
    if (name.startsWith("boot.")) t.bootAsked = r.startTime, t.bootFetched = r.responseEnd;
    if (name.startsWith("worker.")) t.workerFetched = r.responseEnd;
    if (name.startsWith("querylens") && name.endsWith(".wasm")) t.wasm ??= r.responseEnd; // the combined module or a family's
  }
  const mark = (k, name) => { const m = performance.getEntriesByName(name)[0]; if (m) t[k] = m.startTime; };
  mark("workerCreated", "ql-worker-created");
  mark("wasmCompiled", "ql-wasm-compiled");
  mark("hello", "ql-relay-hello");
  mark("ready", "ql-decoder-ready");
  const times = globalThis.querylensBrowse?.stats?.().times ?? {};
  for (const [k, v] of Object.entries(times)) t["w." + k] = v;
  t.firstDecode = globalThis.qlFirstDecodeMs || 0;
  return JSON.stringify(t);
})()`

// startRun is one binary's openings of the page: cold is each fresh
// browser's first, warm the same browser's next two.
type startRun struct {
	cold, warm []startTimeline
}

// startSection measures the browser page's start alone: the first decode
// on a 20-server demo, cold and warm, with the timeline of each opening.
// With -base, the same runs alternate with another querylens binary (a
// build of the code before a change), in the same run.
func startSection(ctx context.Context, e *env) (string, error) {
	var sides []*startSide
	if e.base != "" {
		for i, bin := range strings.Split(e.base, ",") {
			name := "base (-base)"
			if i > 0 {
				name = fmt.Sprintf("-base %d", i+1)
			}
			sides = append(sides, &startSide{name: name, bin: bin})
		}
	}
	sides = append(sides, &startSide{name: "this build", bin: e.querylens})
	for _, s := range sides {
		srv, err := startServe(ctx, s.bin, 20)
		if err != nil {
			return "", err
		}
		defer srv.stop()
		s.srv = srv
	}
	for round := range e.e2eCount {
		// Alternate which side goes first, so that a busy moment of the
		// machine falls on both.
		order := append([]*startSide(nil), sides...)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			cold, warm, err := e.openStart(ctx, s.srv.url)
			if err != nil {
				return "", fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Fprintf(e.log, "start: round %d %s: cold %.0f ms, warm %.0f, %.0f ms\n", round+1, s.name,
				cold["firstDecode"], warm[0]["firstDecode"], warm[1]["firstDecode"])
			s.run.cold = append(s.run.cold, cold)
			s.run.warm = append(s.run.warm, warm...)
		}
	}
	return startReport(e, sides), nil
}

// startSide is one querylens binary of the start section: the build under
// test last, earlier builds (-base) before it, the first as the base.
type startSide struct {
	name, bin string
	srv       *serveProc
	run       startRun
}

// startReport writes the start section from every side's openings.
func startReport(e *env, sides []*startSide) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Per side and round: %s; a fresh headless Chromium opens the browser page (cold), then opens it twice more (warm: HTTP cache and V8's code cache). "+
		"%d rounds; medians. Every step is in ms since navigation, from the page's own timeline (the worker's steps from its clock).\n\n",
		code("querylens serve --demo --demo-servers 20 --addr 127.0.0.1:0 --history=false"), e.e2eCount)
	if len(sides) > 1 {
		b.WriteString("The builds ran side by side, alternating in every round.\n\n")
	}
	head := []string{"step (ms since navigation, medians)"}
	for _, s := range sides {
		head = append(head, s.name+", cold", s.name+", warm")
	}
	t := newTable(head...)
	for _, st := range startSteps {
		row := []string{st.text}
		seen := false
		for _, s := range sides {
			for _, set := range [][]startTimeline{s.run.cold, s.run.warm} {
				v := medianStep(set, st.key)
				if v > 0 {
					seen = true
				}
				row = append(row, ms(v))
			}
		}
		if seen {
			t.add(row...)
		}
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, s := range sides {
		fmt.Fprintf(&b, "- %s: first decode cold %s (runs %s), warm %s (runs %s).\n", s.name,
			ms(medianStep(s.run.cold, "firstDecode")), msList(steps(s.run.cold, "firstDecode")),
			ms(medianStep(s.run.warm, "firstDecode")), msList(steps(s.run.warm, "firstDecode")))
	}
	for _, s := range sides[1:] {
		for _, set := range []struct {
			name string
			f    func(startRun) []startTimeline
		}{{"cold", func(r startRun) []startTimeline { return r.cold }}, {"warm", func(r startRun) []startTimeline { return r.warm }}} {
			a, c := set.f(sides[0].run), set.f(s.run)
			r := medianStep(c, "firstDecode") / medianStep(a, "firstDecode")
			fmt.Fprintf(&b, "- %s ÷ base, %s: %s (per run %s).\n", s.name, set.name,
				ratio(r), perRound(steps(c, "firstDecode"), steps(a, "firstDecode")))
			if s == sides[len(sides)-1] {
				e.addGoal(r <= 1.05, "first decode, "+set.name+", against the previous build (-base), alternated", "within 5 % or faster",
					fmt.Sprintf("%s (%d runs each)", ratio(r), len(c)))
			}
		}
	}
	this := sides[len(sides)-1].run
	cold, warm := medianStep(this.cold, "firstDecode"), medianStep(this.warm, "firstDecode")
	e.addGoal(cold <= 250, "first decode after navigation, cold cache (20-server demo)", "≤ 250 ms", ms(cold))
	e.addGoal(warm <= 120, "first decode after navigation, warm cache (20-server demo)", "≤ 120 ms", ms(warm))
	return b.String()
}

// openStart opens url in a fresh browser three times and returns the
// timeline of the first (cold) and of the two others (warm).
func (e *env) openStart(ctx context.Context, url string) (startTimeline, []startTimeline, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	bctx, stop, err := startBrowser(ctx, e.browserOpts())
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	var all []startTimeline
	for range 3 {
		if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
			return nil, nil, err
		}
		if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
			return nil, nil, err
		}
		// A poll that starts as the document's context changes fails with
		// "Cannot find context with specified id"; poll again then.
		for try := 0; ; try++ {
			_, err := chromedp.Run(bctx, chromedp.Poll[float64](`globalThis.qlFirstDecodeMs`,
				chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
			if err == nil {
				break
			}
			if try > 0 || !strings.Contains(err.Error(), "Cannot find context") {
				return nil, nil, fmt.Errorf("first decode: %w", err)
			}
		}
		// The worker's times of its first results come with that batch;
		// give the page's handler a moment after qlFirstDecodeMs.
		time.Sleep(50 * time.Millisecond)
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](startScript))
		if err != nil {
			return nil, nil, err
		}
		tl := startTimeline{}
		if err := json.Unmarshal([]byte(raw), &tl); err != nil {
			return nil, nil, err
		}
		all = append(all, tl)
	}
	return all[0], all[1:], nil
}

// steps returns the key's values in set, leaving out missing ones.
func steps(set []startTimeline, key string) []float64 {
	var vs []float64
	for _, t := range set {
		if v, ok := t[key]; ok && v > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

func medianStep(set []startTimeline, key string) float64 {
	return bench.Median(steps(set, key))
}
