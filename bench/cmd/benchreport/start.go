package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/wasmmodule"
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
	{"wasmCompiled", "wasm module compiled by the page (ql-wasm-compiled; the combined module and the floor's only)"},
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

// startRun is one side's openings of the page: cold is each fresh
// browser's first, warm the same browser's next two, again a new browser on
// the same profile (its HTTP cache and V8's code cache on disk), noCode the
// same with the profile's wasm code cache removed first (its HTTP cache
// kept).
type startRun struct {
	cold, warm, again, noCode []startTimeline
}

// startSection measures the browser page's start alone: the first decode
// on a 20-server demo, cold and warm, with the timeline of each opening,
// against a floor measured in the same run (floorSite: the same chain with
// an empty Go program) and beside the same page with a module of twelve
// more protocol families (familiesModule). With -base, the same runs
// alternate with other querylens binaries (builds of the code before a
// change).
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
	st := startSet{}
	st.this = &startSide{name: "this build", bin: e.querylens}
	if size, br, err := e.moduleSizes(); err == nil {
		st.this.size, st.this.br = size, br
	}
	if e.startModule != "" {
		m, err := e.embedModule(ctx, e.startModule, filepath.Join(e.tmp, "start-module"))
		if err != nil {
			return "", fmt.Errorf("-start-module: %w", err)
		}
		st.this.name = "this build (-start-module)"
		st.this.bin, st.this.size, st.this.br = m.bin, m.size, m.br
	}
	sides = append(sides, st.this)
	if e.familiesModule != "off" {
		today := len(wasmmodule.Families(codecs.Protocols()))
		st.today = today
		var m *servedModule
		var err error
		if e.familiesModule == "" {
			m, err = e.buildFamiliesModule(ctx)
		} else {
			m, err = e.embedModule(ctx, e.familiesModule, filepath.Join(e.tmp, "families-module"))
		}
		if err != nil {
			return "", fmt.Errorf("the module of %d families: %w", today+len(extraFamilies), err)
		}
		st.families = &startSide{name: fmt.Sprintf("%d families", today+len(extraFamilies)), bin: m.bin, size: m.size, br: m.br}
		sides = append(sides, st.families)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	floor, err := e.newFloorSite(ctx, ln)
	if err != nil {
		ln.Close()
		return "", fmt.Errorf("floor: %w", err)
	}
	defer floor.stop()
	for _, s := range sides {
		var extra []string
		if s == st.this {
			extra = []string{"--allow-origin", ln.Addr().String()}
		}
		srv, err := startServe(ctx, s.bin, 20, extra...)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s.name, err)
		}
		defer srv.stop()
		s.url = srv.url
		if s == st.this {
			if err := floor.setTarget("ws"+strings.TrimPrefix(srv.url, "http")+"relay", srv.master); err != nil {
				return "", fmt.Errorf("floor: %w", err)
			}
		}
	}
	// The page of one family: the same binaries and demo, the page
	// listing the demo's Zandronum master alone (--demo-only), which loads
	// Zandronum's family module.
	oneSides := []*startSide{{name: "this build, " + oneFamilyTitle + "'s page", bin: st.this.bin}}
	st.one = oneSides[0]
	if st.families != nil {
		st.oneFamilies = &startSide{name: st.families.name + ", " + oneFamilyTitle + "'s page", bin: st.families.bin}
		oneSides = append(oneSides, st.oneFamilies)
	}
	for _, s := range oneSides {
		srv, err := startServe(ctx, s.bin, 20, "--demo-only", oneFamily)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s.name, err)
		}
		defer srv.stop()
		s.url = srv.url
		if s.module, err = firstModuleOf(ctx, s.url); err != nil {
			return "", fmt.Errorf("%s: %w", s.name, err)
		}
		if want := "querylens-" + oneFamily + "."; !strings.Contains(s.module, want) {
			return "", fmt.Errorf("%s: the page starts with %s, not %s's family module", s.name, s.module, oneFamily)
		}
		sides = append(sides, s)
	}
	st.floor = &startSide{name: "floor (empty Go program)", url: floor.url, size: floor.wasm, br: floor.br}
	sides = append(sides, st.floor)
	st.sides = sides
	for round := range e.e2eCount {
		// Alternate the order, so that a busy moment of the machine falls
		// on every side.
		order := append([]*startSide(nil), sides...)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			r, err := e.openStart(ctx, s.url)
			if err != nil && ctx.Err() == nil {
				// Once more: a failed opening is most often the
				// browser's, on a busy machine.
				fmt.Fprintf(e.log, "start: round %d %s: %v; once more\n", round+1, s.name, err)
				r, err = e.openStart(ctx, s.url)
			}
			if err != nil {
				return "", fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Fprintf(e.log, "start: round %d %s: cold %.0f ms, warm %.0f, %.0f ms, new browser %.0f ms, without the wasm code cache %.0f ms\n", round+1, s.name,
				r.cold[0]["firstDecode"], r.warm[0]["firstDecode"], r.warm[1]["firstDecode"], r.again[0]["firstDecode"], r.noCode[0]["firstDecode"])
			s.run.cold = append(s.run.cold, r.cold...)
			s.run.warm = append(s.run.warm, r.warm...)
			s.run.again = append(s.run.again, r.again...)
			s.run.noCode = append(s.run.noCode, r.noCode...)
		}
	}
	return startReport(e, st), nil
}

// startSide is one page of the start section: a querylens binary's
// browser page (url, served by bin) or the floor's page.
type startSide struct {
	name, bin string
	url       string
	size, br  int    // the module's bytes, uncompressed and brotli (0: unknown)
	module    string // the module the page starts with, when read (firstModuleOf)
	run       startRun
}

// oneFamily is the family of the start section's page of one family, a
// protocol of it, and oneFamilyTitle its name in the report.
const (
	oneFamily      = "zandronum"
	oneFamilyTitle = "Zandronum"
)

// firstModuleOf reads the page at url and returns the browser module it
// starts with: <html data-boot>'s wasm (a family's module, which the
// decoding worker compiles, or the combined one, which boot.js compiles).
func firstModuleOf(ctx context.Context, url string) (string, error) {
	page, err := getPage(ctx, url)
	if err != nil {
		return "", err
	}
	_, attr, _ := strings.Cut(page, ` data-boot="`)
	attr, _, ok := strings.Cut(attr, `"`)
	var boot struct {
		WASM string `json:"wasm"`
	}
	if !ok || json.Unmarshal([]byte(html.UnescapeString(attr)), &boot) != nil || boot.WASM == "" {
		return "", fmt.Errorf("the page at %s names no first module in its data-boot", url)
	}
	return boot.WASM, nil
}

// startSet is the start section's sides: -base binaries first (the first
// as the base), this build, the module of more families, the floor.
type startSet struct {
	sides                 []*startSide
	this, families, floor *startSide // families is nil when not measured
	// one and oneFamilies are this build's and the module of more
	// families' binaries serving the page of one family (oneFamily).
	one, oneFamilies *startSide
	today            int // the families of this build (the registry's, as the size section counts them)
}

// startCaches are the openings of startRun, as the report names them.
var startCaches = []struct {
	name string
	set  func(startRun) []startTimeline
}{
	{"cold", func(r startRun) []startTimeline { return r.cold }},
	{"warm", func(r startRun) []startTimeline { return r.warm }},
	{"warm, new browser", func(r startRun) []startTimeline { return r.again }},
	{"warm, no wasm code cache", func(r startRun) []startTimeline { return r.noCode }},
}

// startReport writes the start section from every side's openings.
func startReport(e *env, st startSet) string {
	sides := st.sides
	var b strings.Builder
	fmt.Fprintf(&b, "Per side and round: %s; a fresh headless Chromium with a new profile, once settled (%s), opens the page (cold) and stays until the page has done what a visitor's first look at it does (every row final; the floor's page: its one decode), then opens it twice more (warm: HTTP cache, V8's code cache and the renderer's own caches); "+
		"then a new Chromium on the same profile opens it once (warm, new browser: the HTTP cache and V8's code cache on disk), and once more after the profile's wasm code cache (`Code Cache/wasm`) is removed (the HTTP cache kept). "+
		"%d rounds, the sides alternating in every round (the order reversed every other); medians. Every step is in ms since navigation, from the page's own timeline (the worker's steps from its clock).\n\n",
		code("querylens serve --demo --demo-servers 20 --addr 127.0.0.1:0 --history=false"), browserSettles.String(), e.e2eCount)
	b.WriteString("Sides:\n\n")
	for _, s := range sides {
		switch s {
		case st.this:
			fmt.Fprintf(&b, "- %s: the browser page of the querylens under test", s.name)
			if e.startModule != "" {
				fmt.Fprintf(&b, ", serving %s (`-start-module`; embedded with `go build -overlay`)", code(filepath.Base(e.startModule)))
			}
			b.WriteString(moduleText(s) + ".\n")
		case st.families:
			fmt.Fprintf(&b, "- %s: the same page with a browser module of %d more protocol families, built for this run: renamed copies of %s (each package copied under codecs/<name>x<n> with its Protocol constant renamed, and imported by codecs/all, by `go build -overlay`; nothing written in the tree) and embedded in a querylens built likewise%s.\n",
				s.name, len(extraFamilies), code(strings.Join(extraFamilies, ", ")), moduleText(s))
		case st.one:
			fmt.Fprintf(&b, "- %s: the same querylens and demo, the page listing the demo's %s master alone (%s), so that it shows one family: it starts with %s, its family's module, which its decoding worker fetches and compiles.\n",
				s.name, oneFamilyTitle, code("querylens serve --demo --demo-servers 20 --demo-only "+oneFamily+" --addr 127.0.0.1:0 --history=false"), code(path.Base(s.module)))
		case st.oneFamilies:
			fmt.Fprintf(&b, "- %s: the querylens of the module of %d more families serving that page. A family's module links its own family alone (scripts/build-wasm.sh replaces codecs/all by the family's import), so more families registered elsewhere leave it byte for byte the same: the page starts with %s, as this build's. The two sides measure whether anything else on the page's way to its first decode grows with the families; their ratio is the goal's.\n",
				s.name, len(extraFamilies), code(path.Base(s.module)))
		case st.floor:
			fmt.Fprintf(&b, "- %s: the floor. A minimal page and module worker served by the benchmark on 127.0.0.1 (startfloor.go), that do what the browser page does before its first decode with an empty Go js/wasm program (bench/internal/floorwasm: one decode function exported through syscall/js) in place of the browser module: "+
				"the page creates the worker and compiles the preloaded module while it downloads (compileStreaming, brotli, immutable caching, as the browser page), posts it to the worker; the worker imports wasm_exec.js, instantiates the module and runs Go, and meanwhile opens the relay WebSocket of this build's serve (`--allow-origin` for the floor's origin); "+
				"once both are ready it sends the browser page's first query (the demo master's list) through the relay, hands the first reply to the Go decode and posts its result to the page, which sets qlFirstDecodeMs%s.\n", s.name, moduleText(s))
		default:
			fmt.Fprintf(&b, "- %s: %s.\n", s.name, code(s.bin))
		}
	}
	b.WriteString("\n")
	head := []string{"step (ms since navigation, medians)"}
	for _, s := range sides {
		head = append(head, s.name+", cold", s.name+", warm")
	}
	t := newTable(head...)
	for _, step := range startSteps {
		row := []string{step.text}
		seen := false
		for _, s := range sides {
			for _, set := range [][]startTimeline{s.run.cold, s.run.warm} {
				v := medianStep(set, step.key)
				cell := ""
				if v > 0 {
					seen = true
					cell = ms(v)
				}
				row = append(row, cell)
			}
		}
		if seen {
			t.add(row...)
		}
	}
	b.WriteString(t.String())
	b.WriteString("\n")

	head = []string{"first decode (ms since navigation, medians)"}
	for _, c := range startCaches {
		head = append(head, c.name)
	}
	head = append(head, "HELLO to first decode, cold / warm")
	t = newTable(head...)
	for _, s := range sides {
		row := []string{s.name}
		for _, c := range startCaches {
			row = append(row, ms(medianStep(c.set(s.run), "firstDecode")))
		}
		row = append(row, ms(medianAfter(s.run.cold, "hello", "firstDecode"))+" / "+ms(medianAfter(s.run.warm, "hello", "firstDecode")))
		t.add(row...)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, s := range sides {
		fmt.Fprintf(&b, "- %s: first decode cold %s (runs %s), warm %s (runs %s).\n", s.name,
			ms(medianStep(s.run.cold, "firstDecode")), msList(steps(s.run.cold, "firstDecode")),
			ms(medianStep(s.run.warm, "firstDecode")), msList(steps(s.run.warm, "firstDecode")))
	}
	// Ratios of first decodes, per cache state, with the per-run ratios of
	// the openings made in the same rounds.
	quot := func(a, c *startSide, set func(startRun) []startTimeline) (float64, string) {
		x, y := set(a.run), set(c.run)
		return medianStep(x, "firstDecode") / medianStep(y, "firstDecode"), perRound(steps(x, "firstDecode"), steps(y, "firstDecode"))
	}
	b.WriteString("\n")
	for _, c := range startCaches {
		r, per := quot(st.this, st.floor, c.set)
		fmt.Fprintf(&b, "- %s ÷ floor, %s: %s (per run %s).\n", st.this.name, c.name, ratio(r), per)
		if c.name == "cold" || c.name == "warm" {
			e.addGoal(r <= 1.2, "first decode ÷ the floor's (empty Go program, same chain), "+c.name+", alternated", "≤ 1.2×",
				fmt.Sprintf("%s (%s against %s, %d runs each)", ratio(r), ms(medianStep(c.set(st.this.run), "firstDecode")), ms(medianStep(c.set(st.floor.run), "firstDecode")), len(c.set(st.this.run))))
		}
	}
	if st.one != nil {
		for _, c := range startCaches[:2] {
			r, per := quot(st.one, st.floor, c.set)
			fmt.Fprintf(&b, "- %s ÷ floor, %s: %s (per run %s).\n", st.one.name, c.name, ratio(r), per)
		}
	}
	// oneFamilies is set with one and families.
	if f, one := st.families, st.oneFamilies; one != nil {
		for _, c := range startCaches {
			r, per := quot(one, st.one, c.set)
			fmt.Fprintf(&b, "- %s ÷ %s, %s: %s (per run %s).\n", one.name, st.one.name, c.name, ratio(r), per)
			if c.name == "cold" || c.name == "warm" {
				e.addGoal(r <= 1.05, fmt.Sprintf("first decode of a page of one family (%s) with %d more families built in ÷ today's, %s, alternated", oneFamilyTitle, len(extraFamilies), c.name), "≤ 1.05×",
					fmt.Sprintf("%s (%s against %s)", ratio(r), ms(medianStep(c.set(one.run), "firstDecode")), ms(medianStep(c.set(st.one.run), "firstDecode"))))
			}
		}
		// The page of every family (the 20-server demo) loads the
		// combined module, which does grow: said, not a goal.
		for _, c := range startCaches {
			r, per := quot(f, st.this, c.set)
			fmt.Fprintf(&b, "- %s ÷ %s (the page of every family, which loads the combined module), %s: %s (per run %s).\n", f.name, st.this.name, c.name, ratio(r), per)
		}
		if f.br > 0 && st.this.br > 0 {
			fmt.Fprintf(&b, "- The module of %d families: %s bytes, %s brotli; today's: %s, %s brotli (%s and %s more per family). "+
				"Brotli's window (16 MiB) finds each copy's code again in its original, so the copies cost far less brotli than a new family would: this measures the start's cost of a bigger module, not a family's download (the size section gives each package's code).\n",
				st.today+len(extraFamilies), groupDigits(f.size), groupDigits(f.br), groupDigits(st.this.size), groupDigits(st.this.br),
				groupDigits((f.size-st.this.size)/len(extraFamilies)), groupDigits((f.br-st.this.br)/len(extraFamilies)))
		}
	}
	// Further -base binaries against the first.
	for _, s := range sides[1:] {
		if s == st.this || s == st.families || s == st.floor {
			continue
		}
		for _, c := range startCaches[:2] {
			r, per := quot(s, sides[0], c.set)
			fmt.Fprintf(&b, "- %s ÷ %s, %s: %s (per run %s).\n", s.name, sides[0].name, c.name, ratio(r), per)
		}
	}
	if sides[0] != st.this {
		for _, c := range startCaches[:2] {
			r, per := quot(st.this, sides[0], c.set)
			fmt.Fprintf(&b, "- %s ÷ base, %s: %s (per run %s).\n", st.this.name, c.name, ratio(r), per)
			e.addGoal(r <= 1.05, "first decode, "+c.name+", against the previous build (-base), alternated", "within 5 % or faster",
				fmt.Sprintf("%s (%d runs each)", ratio(r), len(c.set(st.this.run))))
		}
	}
	cold, warm := medianStep(st.this.run.cold, "firstDecode"), medianStep(st.this.run.warm, "firstDecode")
	e.addGoal(cold <= 250, "first decode after navigation, cold cache (20-server demo)", "≤ 250 ms", ms(cold))
	e.addGoal(warm <= 120, "first decode after navigation, warm cache (20-server demo)", "≤ 120 ms", ms(warm))
	return b.String()
}

// moduleText says a side's module sizes, if known.
func moduleText(s *startSide) string {
	if s.size == 0 {
		return ""
	}
	return fmt.Sprintf(" (module %s bytes, %s brotli)", groupDigits(s.size), groupDigits(s.br))
}

// medianAfter is the median of to − from over the openings that have both.
func medianAfter(set []startTimeline, from, to string) float64 {
	var vs []float64
	for _, t := range set {
		if t[from] > 0 && t[to] > 0 {
			vs = append(vs, t[to]-t[from])
		}
	}
	return bench.Median(vs)
}

// openStart opens url in a fresh browser with a new profile three times
// (cold, then twice warm), then once in a new browser on the same profile,
// then once more in another after removing the profile's wasm code cache.
func (e *env) openStart(ctx context.Context, url string) (startRun, error) {
	var r startRun
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	profile, err := os.MkdirTemp(e.tmp, "profile-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(profile)
	opts := append(e.browserOpts(), chromedp.UserDataDir(profile))
	all, err := openPage(ctx, opts, url, 3)
	if err != nil {
		return r, err
	}
	r.cold, r.warm = all[:1], all[1:]
	if r.again, err = openPage(ctx, opts, url, 1); err != nil {
		return r, fmt.Errorf("new browser on the same profile: %w", err)
	}
	wasmCache := filepath.Join(profile, "Default", "Code Cache", "wasm")
	if _, err := os.Stat(wasmCache); err != nil {
		fmt.Fprintf(e.log, "start: no wasm code cache in the profile (%v)\n", err)
	}
	if err := os.RemoveAll(wasmCache); err != nil {
		return r, err
	}
	if r.noCode, err = openPage(ctx, opts, url, 1); err != nil {
		return r, fmt.Errorf("new browser without the wasm code cache: %w", err)
	}
	return r, nil
}

// settledScript is true once the page has done what a visitor's first
// look at it does: every row final on the browser page (a visitor leaves
// after reading the list, not at its first row), at once on the floor's
// page, whose one decode is all it does. What the first opening compiled
// meanwhile is what a returning visitor's browser has.
const settledScript = `(() => {
  const b = globalThis.querylensBrowse;
  if (typeof b?.view !== "function") return true; // the floor's page
  const v = b.view();
  return v.length > 0 && v.every((r) => r.state !== "pending" && r.state !== "querying");
})()`

// openPage starts a browser with opts and opens url in it n times, each
// until its first decode, and returns their timelines. An opening another
// follows in the same browser stays until the page has settled
// (settledScript, at most 15 s).
func openPage(ctx context.Context, opts []chromedp.ExecAllocatorOption, url string, n int) ([]startTimeline, error) {
	bctx, stop, err := startBrowser(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer stop()
	var all []startTimeline
	for range n {
		if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
			return nil, err
		}
		if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
			return nil, err
		}
		// A poll that starts as the document's context changes fails with
		// "Cannot find context with specified id"; poll again then (on a
		// busy machine more than once).
		for try := 0; ; try++ {
			_, err := chromedp.Run(bctx, chromedp.Poll[float64](`globalThis.qlFirstDecodeMs`,
				chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
			if err == nil {
				break
			}
			if try >= 4 || !strings.Contains(err.Error(), "Cannot find context") {
				failure, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`String(globalThis.qlFloorFailure ?? "")`))
				if failure != "" {
					err = fmt.Errorf("%w (the page: %s)", err, failure)
				}
				return nil, fmt.Errorf("first decode: %w", err)
			}
		}
		// The worker's times of its first results come with that batch;
		// give the page's handler a moment after qlFirstDecodeMs.
		time.Sleep(50 * time.Millisecond)
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](startScript))
		if err != nil {
			return nil, err
		}
		tl := startTimeline{}
		if err := json.Unmarshal([]byte(raw), &tl); err != nil {
			return nil, err
		}
		all = append(all, tl)
		if len(all) == 1 && n > 1 {
			if _, err := chromedp.Run(bctx, chromedp.Poll[bool](settledScript,
				chromedp.WithPollingTimeout(15*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
				return nil, fmt.Errorf("the first opening did not settle: %w", err)
			}
		}
	}
	return all, nil
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
