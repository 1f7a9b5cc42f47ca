package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/profiler"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/bench/farm"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bench/cmd/benchreport -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./bench/cmd/benchreport -update rewrites it; review the diff):\n%s", path, got)
	}
}

// summaries parses `go test -bench` output from testdata files, as
// env.goBench does with the command's output.
func summaries(t *testing.T, files ...string) []bench.Summary {
	t.Helper()
	var runs []bench.Run
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := bench.ParseBench(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		runs = append(runs, rs...)
	}
	return bench.Summarize(runs)
}

// testEnv is an env for formatting only: nothing runs.
func testEnv() *env {
	return &env{root: ".", count: 2, e2eCount: 3, servers: 1000, idleConns: 10000, benchtime: "100ms", log: io.Discard}
}

// withGoals is a section's text followed by the goals table rows it
// recorded, as run writes them for key "KEY" at "DATE".
func withGoals(body string, e *env) string {
	var b strings.Builder
	b.WriteString(body)
	b.WriteString("\n--- rows of the goals table\n")
	for _, g := range e.goals {
		b.WriteString(mdRow(g.cells("KEY", "DATE")))
	}
	return b.String()
}

var decoderPackets = []bench.Packet{
	{Protocol: "zandronum", Name: "response", Datagrams: [][]byte{make([]byte, 421)}},
	{Protocol: "ogp", Name: "v1", Datagrams: [][]byte{make([]byte, 400), make([]byte, 64)}},
	// Not in the fixtures: left out of every table.
	{Protocol: "gamespy2", Name: "full", Datagrams: [][]byte{make([]byte, 641)}},
}

var decoderArgs = []string{"-test.run", "^$", "-test.bench", "^BenchmarkDecode", "-test.benchmem", "-test.benchtime", "100ms", "-test.count", "1"}

// TestReports formats each section from fixed benchmark output and
// compares it, with the goals it recorded, with its golden file.
func TestReports(t *testing.T) {
	for _, tc := range []struct {
		name, golden string
		report       func(t *testing.T, e *env) string
	}{
		{"huffman", "huffman.golden", func(t *testing.T, e *env) string {
			return huffmanReport(e, "go test huffman", summaries(t, "huffman.bench.txt"))
		}},
		{"huffman, no benchmarks", "huffman-empty.golden", func(t *testing.T, e *env) string {
			return huffmanReport(e, "go test huffman", nil)
		}},
		{"codecs", "codecs.golden", func(t *testing.T, e *env) string {
			return codecsReport("go test codecs", summaries(t, "codecs.bench.txt"))
		}},
		{"relay", "relay.golden", func(t *testing.T, e *env) string {
			return relayBenchReport(e, "go test relay", "go test relay memory", summaries(t, "relay.bench.txt"))
		}},
		// While the benchmarks still run the legacy relay beside the
		// shipped one, the report is the same: relay=before is left out.
		{"relay, legacy path still benchmarked", "relay.golden", func(t *testing.T, e *env) string {
			return relayBenchReport(e, "go test relay", "go test relay memory", summaries(t, "relay-legacy.bench.txt"))
		}},
		{"relay, no benchmarks", "relay-empty.golden", func(t *testing.T, e *env) string {
			return relayBenchReport(e, "go test relay", "go test relay memory", nil)
		}},
		{"relay, idle connections", "relay-idle.golden", func(t *testing.T, e *env) string {
			r := func(rss, during float64) idleRound {
				return idleRound{
					before: childStats{HeapStack: 2 << 20, RSS: 10 << 20, Goroutines: 10, Conns: 1},
					during: childStats{HeapStack: 2<<20 + 10000*23000, RSS: rss, Goroutines: 10010, Conns: 10001},
					openMS: 1051, alive: 10000, rttBefore: [2]float64{27, 102}, rttDuring: [2]float64{25, during},
				}
			}
			return idleReport(e, []idleRound{r(250<<20, 89), r(260<<20, 95), r(240<<20, 80)})
		}},
		{"scale", "scale.golden", func(t *testing.T, e *env) string {
			return scaleReport(e, "go test redisstore", "go test redisstore upstream", summaries(t, "scale.bench.txt"), summaries(t, "scale-upstream.bench.txt"))
		}},
		{"scale, no benchmarks", "scale-empty.golden", func(t *testing.T, e *env) string {
			return scaleReport(e, "go test redisstore", "go test redisstore upstream", nil, nil)
		}},
		{"decoder", "decoder.golden", func(t *testing.T, e *env) string {
			return decoderReport(e, decoderPackets, decoderArgs, "100", "",
				summaries(t, "decoder-native.bench.txt"), summaries(t, "decoder-wasm.bench.txt"), summaries(t, "decoder-page.bench.txt"))
		}},
		{"decoder, page's module missing", "decoder-nopage.golden", func(t *testing.T, e *env) string {
			return decoderReport(e, decoderPackets, decoderArgs, "100", "web/static/querylens.wasm is missing.",
				summaries(t, "decoder-native.bench.txt"), summaries(t, "decoder-wasm.bench.txt"), nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv()
			golden(t, tc.golden, withGoals(tc.report(t, e), e))
		})
	}
}

// TestBrowserReport reads the page's statistics as the injected script
// writes them (testdata/browser-page.json) and formats the browser section
// from three quiet and three loaded rounds around them: Zandronum alone,
// and beside A2S rounds whose goal is met, missed on the ratio, and
// missed because the page left rows unanswered that the floor answered.
func TestBrowserReport(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "browser-page.json"))
	if err != nil {
		t.Fatal(err)
	}
	var page pageStats
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatalf("browser-page.json: %v", err)
	}
	round := func(scale, floorMS float64) browserRound {
		p := page
		p.Marks = maps.Clone(page.Marks)
		for k, v := range p.Marks {
			p.Marks[k] = v * scale
		}
		return browserRound{
			page:     p,
			metrics:  map[string]float64{"ScriptDuration": 0.539 * scale, "TaskDuration": 2.037 * scale, "LayoutDuration": 0.5, "RecalcStyleDuration": 0.274},
			serveCPU: 240,
			relayStats: map[string]float64{
				"querylens_relay_queries_forwarded_total":        1012,
				"querylens_relay_replies_total":                  1361,
				"querylens_relay_cache_hits_total":               0,
				`querylens_relay_timeouts_total{rule="timeout"}`: 31,
				`querylens_relay_refusals_total{rule="busy"}`:    0,
			},
			floor: floorRun{masterMS: 0.7, totalMS: floorMS, listed: 1000, out: farm.Outcome{Asked: 1000, Done: 931, Received: 1348}},
		}
	}
	a2s := func(online int, scales ...float64) []browserRound {
		var rs []browserRound
		for _, sc := range scales {
			r := round(sc, 2200)
			r.protocol, r.keptMS = "a2s", 8106
			r.floor.listed, r.floor.out = 1008, farm.Outcome{Asked: 1008, Done: 978, Received: 5883}
			r.page.States = map[string]int{"online": online, "offline": 26, "malformed": 1008 - 26 - online}
			r.page.Details = map[string]int{"offline: No answer before the reply window closed.": 26,
				"malformed: reply at offset 0: incomplete message: no reply to A2S_RULES": 1008 - 26 - online}
			rs = append(rs, r)
		}
		return rs
	}
	// Quake III rounds (1,005 listed: the fleet and the demo's own five)
	// and GameSpy v1 rounds (1,004 configured rows), with online rows.
	other := func(protocol string, listed, online, kept float64, floorMS float64, scales ...float64) []browserRound {
		var rs []browserRound
		for _, sc := range scales {
			r := round(sc, floorMS)
			r.protocol, r.keptMS = protocol, kept
			r.floor.listed, r.floor.out = int(listed), farm.Outcome{Asked: int(listed), Done: int(listed) - 28, Received: int(listed) * 2}
			r.page.States = map[string]int{"online": int(online), "offline": 27, "malformed": int(listed-online) - 27}
			r.page.Details = map[string]int{"offline: No answer before the reply window closed.": 27}
			rs = append(rs, r)
		}
		return rs
	}
	// A stream protocol's rounds: the relay's TCP counters, refused
	// EXCHANGEs filed as relay-limited rows.
	stream := func(rs []browserRound, refused int) []browserRound {
		for i := range rs {
			r := &rs[i]
			r.relayStats = map[string]float64{"querylens_relay_tcp_exchanges_total": float64(1008 - refused), `querylens_relay_refusals_total{rule="tcp-cap"}`: float64(refused)}
			r.page.Worker.Timing = map[string]float64{"conversations": 1008, "relayQueuedMs": 180, "replyWaitMs": 53000}
			if refused > 0 {
				r.page.States["malformed"] -= refused
				r.page.States["relay-limited"] = refused
				r.page.Details["relay-limited: The relay is busy: tcp-cap: HOST:PORT"] = refused
			}
		}
		return rs
	}
	quiet := []browserRound{round(1, 2074), round(1.02, 2100), round(0.95, 2050)}
	loaded := []browserRound{round(1.1, 2107), round(1.2, 2120), round(1.05, 2090)}
	for _, tc := range []struct {
		golden           string
		a2s, a2sLoaded   []browserRound
		q3, q3Loaded     []browserRound
		gs1, gs1Loaded   []browserRound
		samp, sampLoaded []browserRound
		mc, mcLoaded     []browserRound
	}{
		{golden: "browser.golden"},
		{golden: "browser-a2s.golden", a2s: a2s(978, 1.05, 1.1, 1.0), a2sLoaded: a2s(978, 1.1, 1.25, 1.15)},
		{golden: "browser-a2s-slow.golden", a2s: a2s(978, 1.05, 1.1, 1.0), a2sLoaded: a2s(978, 1.6, 1.7, 1.5)},
		{golden: "browser-a2s-unanswered.golden", a2s: a2s(231, 1.05, 1.1, 1.0), a2sLoaded: a2s(66, 1.0, 1.0, 1.0)},
		// Every protocol: Quake III within 1.1× quiet and loaded; GameSpy
		// v1 slower than that quiet, and loaded with rows unanswered that
		// the floor answered.
		{golden: "browser-fleets.golden", a2s: a2s(978, 1.05, 1.1, 1.0), a2sLoaded: a2s(978, 1.1, 1.25, 1.15),
			q3: other("quake3", 1005, 977, 312, 2100, 1.0, 1.05, 1.02), q3Loaded: other("quake3", 1005, 977, 312, 2100, 1.1, 1.2, 1.15),
			gs1: other("gamespy1", 1004, 976, 0, 1900, 1.2, 1.25, 1.3), gs1Loaded: other("gamespy1", 1004, 500, 0, 1900, 1.1, 1.2, 1.15)},
		// A protocol listed from the page's configuration through
		// --demo-more, titled by its codec.
		{golden: "browser-more.golden", samp: other("samp", 1008, 976, 0, 1900, 1.0, 1.05, 1.02), sampLoaded: other("samp", 1008, 976, 0, 1900, 1.1, 1.2, 1.15)},
		// A protocol over TCP (EXCHANGE): its floor over TCP, its own
		// steps, and rows the relay refused past its TCP limits.
		{golden: "browser-tcp.golden", mc: stream(other("minecraft", 1008, 976, 0, 5300, 1.0, 1.05, 1.02), 0), mcLoaded: stream(other("minecraft", 1008, 500, 0, 6300, 1.1, 1.2, 1.15), 476)},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			e := testEnv()
			runs := browserRuns{zan: quiet, zanLoaded: loaded}
			for _, p := range []struct {
				protocol      string
				quiet, loaded []browserRound
			}{{"a2s", tc.a2s, tc.a2sLoaded}, {"quake3", tc.q3, tc.q3Loaded}, {"gamespy1", tc.gs1, tc.gs1Loaded}, {"samp", tc.samp, tc.sampLoaded}, {"minecraft", tc.mc, tc.mcLoaded}} {
				for _, r := range p.quiet {
					runs.add(p.protocol, false, r)
				}
				for _, r := range p.loaded {
					runs.add(p.protocol, true, r)
				}
			}
			got := browserReport(e, runs, firstDecodeRuns{cold: []float64{1018, 558, 768}, warm: []float64{897, 735, 370, 404, 828, 805}})
			// The one line that depends on the machine running the test.
			got = strings.Replace(got, fmt.Sprintf("one of the machine's %d)", runtime.NumCPU()), "one of the machine's N)", 1)
			golden(t, tc.golden, withGoals(got, e))
		})
	}
}

// TestConfigServers reads the configured servers of a protocol from the
// browser page's HTML, as the GameSpy v1 floor does.
func TestConfigServers(t *testing.T) {
	page := func(cfg string) string {
		return `<html><head><script id="ql-config" type="application/json">` + cfg + `</script></head></html>`
	}
	for _, tc := range []struct {
		name, html string
		want       []configServer
		err        string
	}{
		{"gamespy1 only", page(`{"servers":[{"protocol":"gamespy1","addr":"127.0.0.1:1","options":null},{"protocol":"ogp","addr":"127.0.0.1:2"},{"protocol":"gamespy1","addr":"127.0.0.1:3"}]}`),
			[]configServer{{addr: "127.0.0.1:1"}, {addr: "127.0.0.1:3"}}, ""},
		{"no config", "<html></html>", nil, "no ql-config script"},
		{"bad JSON", page(`{"servers":[`), nil, "ql-config: unexpected end of JSON input"},
		{"none of the protocol", page(`{"servers":[{"protocol":"ogp","addr":"127.0.0.1:2"}]}`), nil, "lists no gamespy1 servers"},
		// A server's own options: the floor asks it with them, as the page does.
		{"options", page(`{"servers":[{"protocol":"gamespy1","addr":"127.0.0.1:1","options":{"query":"info"}},{"protocol":"gamespy1","addr":"127.0.0.1:3","options":{}}]}`),
			[]configServer{{addr: "127.0.0.1:1", options: map[string]string{"query": "info"}}, {addr: "127.0.0.1:3"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := configServers(tc.html, "gamespy1")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.EqualFunc(got, tc.want, func(a, b configServer) bool { return a.addr == b.addr && maps.Equal(a.options, b.options) }) {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

// TestStartReport formats the start section from fixed openings: the
// build beside the module of more families and the floor, and against an
// earlier build (-base) too, which adds the within-5 % goal.
func TestStartReport(t *testing.T) {
	openings := func(first ...float64) []startTimeline {
		var set []startTimeline
		for i, f := range first {
			set = append(set, startTimeline{"html": 24 + float64(i), "workerCreated": 75, "w.decoder": f - 60, "hello": f - 90, "firstDecode": f})
		}
		return set
	}
	run := func(scale float64) startRun {
		s := func(vs ...float64) []startTimeline {
			for i := range vs {
				vs[i] *= scale
			}
			return openings(vs...)
		}
		return startRun{cold: s(646, 520, 552), warm: s(341, 374, 367, 324, 542, 356), again: s(400, 420, 380), noCode: s(450, 470, 430)}
	}
	set := func(base bool) startSet {
		st := startSet{
			this:     &startSide{name: "this build", size: 3847019, br: 799962, run: run(1)},
			families: &startSide{name: "20 families", size: 5644845, br: 862926, run: run(1.04)},
			today:    8,
			floor:    &startSide{name: "floor (empty Go program)", size: 1927487, br: 420000, run: run(0.5)},
			one: &startSide{name: "this build, Zandronum's page", module: "/static/querylens-zandronum.0123456789ab.wasm",
				run: run(0.8)},
			oneFamilies: &startSide{name: "20 families, Zandronum's page", module: "/static/querylens-zandronum.0123456789ab.wasm",
				run: run(0.81)},
		}
		if base {
			st.sides = append(st.sides, &startSide{name: "base (-base)", bin: "/tmp/querylens-old", run: run(0.95)})
		}
		st.sides = append(st.sides, st.this, st.families, st.one, st.oneFamilies, st.floor)
		return st
	}
	for _, tc := range []struct {
		name, golden string
		st           startSet
	}{
		{"this build beside the floor", "start.golden", set(false)},
		{"against the previous build", "start-base.golden", set(true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv()
			golden(t, tc.golden, withGoals(startReport(e, tc.st), e))
		})
	}
}

// TestProfileReport summarises a small Chrome CPU profile
// (testdata/profile.json, as Profiler.stop returns it): where the main
// thread was, by script, and the page's functions with their callees.
func TestProfileReport(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p profiler.Profile
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("profile.json: %v", err)
	}
	golden(t, "profile.golden", profileReport(&p, pageStats{Marks: map[string]float64{"rendered": 3774}}))

	// An empty profile gives empty tables, not a division by zero.
	if got := profileReport(&profiler.Profile{}, pageStats{}); strings.Contains(got, "NaN") {
		t.Errorf("empty profile:\n%s", got)
	}
}

// TestGameDigReport formats the GameDig section from fixed rounds of two
// protocols: one where every reply was read, and one where querylens lost
// replies in a loaded round, which fails that protocol's goal however fast
// it was.
func TestGameDigReport(t *testing.T) {
	side := func(wall, ok, players, perServer float64, lastGot float64) gamedigSide {
		n := perServer * 1000
		return gamedigSide{
			wall: []float64{wall, wall * 1.05, wall * 0.97}, ok: []float64{ok, ok, ok}, players: []float64{players, players, players},
			sent: []float64{n, n, n}, got: []float64{n, n, lastGot}, queries: []float64{n, n, n}, errs: map[string]int{},
		}
	}
	gd := side(776, 1000, 16055, 3, 3000)
	gd.errs = map[string]int{"timeout": 2, "ECONNREFUSED": 1, "bad reply": 3}
	gd.ok[2] = 994 // six failed in the last round
	for _, tc := range []struct {
		name, golden string
		lastGot      float64
	}{
		{"every reply read", "gamedig.golden", 7000},
		{"replies lost", "gamedig-lost.golden", 6990},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv()
			runs := []gdRun{
				{p: gdProtocols[0], native: side(78.3, 1000, 16053, 1, 1000), gd: gd, nativeH: side(120, 1000, 16053, 1, 1000), gdH: side(1400, 1000, 16055, 3, 3000)},
				{p: gdProtocols[1], native: side(150, 1000, 9000, 7, 7000), gd: side(2100, 1000, 9000, 7, 7000),
					nativeH: side(260, 1000, 9000, 7, tc.lastGot), gdH: side(3900, 1000, 9000, 7, 7000)},
			}
			got := gamedigReport(e, "5.3.3", runs, []float64{5.8, 6.1, 5.5}, []float64{360, 372, 351}, 10)
			golden(t, tc.golden, withGoals(got, e))
		})
	}
	// A protocol over TCP: its replies counted in bytes; every byte read,
	// but a few replies did not decode (the goal is not met, and says
	// why).
	t.Run("tcp", func(t *testing.T) {
		e := testEnv()
		mc, err := gdSelected("minecraft")
		if err != nil || len(mc) != 1 || mc[0].stream == nil {
			t.Fatalf("gdSelected(minecraft) = %+v, %v", mc, err)
		}
		native := side(61.2, 992, 3980, 760, 760000)
		native.queries = []float64{1000, 1000, 1000}
		native.errs = map[string]int{"minecraft: legacy.payload at offset 2: not a query": 24}
		nativeH := native
		nativeH.wall = []float64{95, 99, 93}
		gdm := side(410, 1000, 4012, 760, 760000)
		gdm.queries = native.queries
		gdmH := gdm
		gdmH.wall = []float64{820, 845, 790}
		runs := []gdRun{{p: mc[0], native: native, gd: gdm, nativeH: nativeH, gdH: gdmH}}
		got := gamedigReport(e, "5.3.3", runs, []float64{5.8, 6.1, 5.5}, []float64{360, 372, 351}, 10)
		golden(t, "gamedig-tcp.golden", withGoals(got, e))
	})
}

// TestBrowserRunsComplete: a cut-short browser section reports only when
// every protocol it runs has a quiet and a loaded round.
func TestBrowserRunsComplete(t *testing.T) {
	var runs browserRuns
	protos := []string{"zandronum", "a2s"}
	runs.add("zandronum", false, browserRound{})
	runs.add("zandronum", true, browserRound{})
	runs.add("a2s", false, browserRound{})
	if runs.complete(protos) {
		t.Error("A2S without a loaded round: complete")
	}
	if !runs.complete(protos[:1]) {
		t.Error("Zandronum alone, quiet and loaded: not complete")
	}
	runs.add("a2s", true, browserRound{})
	if !runs.complete(protos) {
		t.Error("both protocols, quiet and loaded: not complete")
	}
}
