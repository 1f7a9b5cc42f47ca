package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/querylens/querylens/bench"
)

// decoderSection compares the codecs compiled to wasm with native Go on
// the same packets: the bench package's decode benchmarks built for both
// targets, and the page's own call into web/static/querylens.wasm under
// node. The three run in alternation, one run each per round, so that load
// from other processes falls on both sides alike.
func decoderSection(ctx context.Context, e *env) (string, error) {
	goroot, err := e.command(ctx, nil, "go", "env", "GOROOT")
	if err != nil {
		return "", err
	}
	goroot = strings.TrimSpace(goroot)
	execWasm := filepath.Join(goroot, "lib", "wasm", "go_js_wasm_exec")
	wasmExecJS := filepath.Join(goroot, "lib", "wasm", "wasm_exec.js")
	native := filepath.Join(e.tmp, "bench.test")
	wasm := filepath.Join(e.tmp, "bench.wasm")
	if _, err := e.command(ctx, nil, "go", "test", "-c", "-o", native, "./bench"); err != nil {
		return "", err
	}
	if _, err := e.command(ctx, []string{"GOOS=js", "GOARCH=wasm"}, "go", "test", "-c", "-o", wasm, "./bench"); err != nil {
		return "", err
	}

	// The page's decoder, as `bash scripts/build-wasm.sh` built it.
	pageWasm := filepath.Join(e.root, "web", "static", "querylens.wasm")
	pageNote := ""
	if _, err := os.Stat(pageWasm); err != nil {
		pageNote = "web/static/querylens.wasm is missing (run `bash scripts/build-wasm.sh`): the page's decoder was not measured."
		pageWasm = ""
	}
	ps, err := bench.Corpus(e.root)
	if err != nil {
		return "", err
	}
	packetsFile := filepath.Join(e.tmp, "packets.json")
	if err := writePackets(packetsFile, ps); err != nil {
		return "", err
	}

	benchDir := filepath.Join(e.root, "bench")
	testArgs := []string{"-test.run", "^$", "-test.bench", "^BenchmarkDecode", "-test.benchmem", "-test.benchtime", e.benchtime, "-test.count", "1"}
	minMs := "100"
	if d, err := parseBenchtime(e.benchtime); err == nil {
		minMs = strconv.Itoa(d)
	}
	var nativeRuns, wasmRuns, pageRuns []bench.Run
	for round := range e.count {
		fmt.Fprintf(e.log, "decoder: round %d/%d\n", round+1, e.count)
		out, err := e.commandIn(ctx, benchDir, nil, nil, native, testArgs...)
		if err != nil {
			return "", err
		}
		nativeRuns = append(nativeRuns, mustParse(out)...)
		out, err = e.commandIn(ctx, benchDir, nil, nil, execWasm, append([]string{wasm}, testArgs...)...)
		if err != nil {
			return "", err
		}
		wasmRuns = append(wasmRuns, mustParse(out)...)
		if pageWasm != "" {
			out, err = e.commandIn(ctx, benchDir, nil, nil, e.node, filepath.Join(benchDir, "node", "decode.cjs"), pageWasm, wasmExecJS, packetsFile, minMs)
			if err != nil {
				return "", err
			}
			pageRuns = append(pageRuns, mustParse(out)...)
		}
	}
	return decoderReport(e, ps, testArgs, minMs, pageNote, bench.Summarize(nativeRuns), bench.Summarize(wasmRuns), bench.Summarize(pageRuns)), nil
}

// decoderReport writes the decoder section from the medians of the native
// (nat) and wasm (wsm) decode benchmarks and of the page's calls under node
// (page), each with the packets ps; testArgs and minMs are what the
// benchmarks ran with, pageNote why the page's call was not measured ("":
// it was).
func decoderReport(e *env, ps []bench.Packet, testArgs []string, minMs, pageNote string, nat, wsm, page []bench.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Commands, alternated %d times (one run of each per round):\n\n", e.count)
	fmt.Fprintf(&b, "- native: %s\n", code("go test -c ./bench && (cd bench && ./bench.test "+strings.Join(quoteArgs(testArgs), " ")+")"))
	fmt.Fprintf(&b, "- wasm: %s\n", code("GOOS=js GOARCH=wasm go test -c ./bench && (cd bench && $(go env GOROOT)/lib/wasm/go_js_wasm_exec bench.wasm "+strings.Join(quoteArgs(testArgs), " ")+")"))
	fmt.Fprintf(&b, "- the page's call: %s\n\n", code("node bench/node/decode.cjs web/static/querylens.wasm $(go env GOROOT)/lib/wasm/wasm_exec.js packets.json "+minMs))
	b.WriteString("Packets: the codecs' golden replies (Zandronum, OGP) and whole conversations with the demo's emulated GameSpy v2 and Bloodmasters servers (bench.Corpus). " +
		"`plain` is Codec.Decode as the server table uses it; `spans` adds the inspector's field map. Native Go uses both cores (its garbage collector runs beside the decoder); wasm runs on one thread.\n\n")

	b.WriteString("Times are **CPU time per decode** (the process's user + system time over the benchmark loop, every thread: Go's collector, V8's compiler and collector), " +
		"which other processes' load on this shared machine inflates far less than wall time; the wall-time ratio is given beside it.\n\n")
	t := newTable("packet", "bytes", "allocs", "native", "wasm", "wasm ÷ native", "(wall)", "allocs, spans", "native, spans", "wasm, spans", "wasm ÷ native", "(wall)")
	worst := 0.0
	worstName := ""
	for _, p := range ps {
		id := p.Protocol + "/" + p.Name
		np, wp := bench.Find(nat, "BenchmarkDecode/"+id+"/plain"), bench.Find(wsm, "BenchmarkDecode/"+id+"/plain")
		ns2, ws2 := bench.Find(nat, "BenchmarkDecode/"+id+"/spans"), bench.Find(wsm, "BenchmarkDecode/"+id+"/spans")
		if np == nil || wp == nil || ns2 == nil || ws2 == nil {
			continue
		}
		r1, r2 := cpuRatio(wp, np), cpuRatio(ws2, ns2)
		for _, r := range []struct {
			v    float64
			name string
		}{{r1, id}, {r2, id + " with spans"}} {
			if r.v > worst {
				worst, worstName = r.v, r.name
			}
		}
		t.add(id, strconv.Itoa(p.Bytes()), num(np.Median["allocs/op"]), ns(cpuOf(np)), ns(cpuOf(wp)), ratio(r1), ratio(wp.Median["ns/op"]/np.Median["ns/op"]),
			num(ns2.Median["allocs/op"]), ns(cpuOf(ns2)), ns(cpuOf(ws2)), ratio(r2), ratio(ws2.Median["ns/op"]/ns2.Median["ns/op"]))
	}
	b.WriteString("### Codec.Decode compiled to wasm against native\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")
	if worst > 0 {
		b.WriteString(goal(worst <= 3, fmt.Sprintf("within 3× of native (CPU time); the slowest is %s at %s.", worstName, ratio(worst))) + "\n\n")
		e.addGoal(worst <= 3, "Codec.Decode compiled to wasm (node) against native, CPU time, every packet", "≤ 3× native",
			fmt.Sprintf("slowest %s at %s", worstName, ratio(worst)))
	}

	if pageNote != "" {
		b.WriteString(pageNote + "\n")
		return b.String()
	}
	t = newTable("packet", "native Decode + AppendJSON", "page: querylens.decode()", "page ÷ native", "(wall)", "page, spans", "÷ native Decode with spans", "(wall)")
	worst, worstName = 0, ""
	for _, p := range ps {
		id := p.Protocol + "/" + p.Name
		nj, ns2 := bench.Find(nat, "BenchmarkDecodeJSON/"+id), bench.Find(nat, "BenchmarkDecode/"+id+"/spans")
		pp, pspan := bench.Find(page, "BenchmarkPageDecode/"+id+"/plain"), bench.Find(page, "BenchmarkPageDecode/"+id+"/spans")
		if nj == nil || ns2 == nil || pp == nil || pspan == nil {
			continue
		}
		r := cpuRatio(pp, nj)
		if r > worst {
			worst, worstName = r, id
		}
		t.add(id, ns(cpuOf(nj)), ns(cpuOf(pp)), ratio(r), ratio(pp.Median["ns/op"]/nj.Median["ns/op"]),
			ns(cpuOf(pspan)), ratio(cpuRatio(pspan, ns2)), ratio(pspan.Median["ns/op"]/ns2.Median["ns/op"]))
	}
	b.WriteString("### The page's call: querylens.decode() in web/static/querylens.wasm under node, against the same work natively\n\n")
	b.WriteString("The page's number includes copying the datagrams into Go, the JSON the codecs write and the engine's JSON.parse of it; " +
		"the native side is Decode plus Message.AppendJSON (what `querylens decode` does). The spans columns compare with native Decode with spans (no JSON). CPU time per call.\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")
	if worst > 0 {
		b.WriteString(goal(worst <= 3, fmt.Sprintf("within 3× of native (CPU time); the slowest is %s at %s.", worstName, ratio(worst))) + "\n\n")
	}

	// What the server browser's worker asks of the decoder per server.
	t = newTable("packet", "native: NewQuery … Result + Summary JSON", "page: one server per call", "page ÷ native", "(wall)",
		"page: "+strconv.Itoa(pageBatch)+" servers per call", "page ÷ native", "(wall)")
	worst, worstName = 0, ""
	worstAlone, worstAloneName := 0.0, ""
	for _, p := range ps {
		id := p.Protocol + "/" + p.Name
		nc := bench.Find(nat, "BenchmarkDecodeConversation/"+id)
		pc, pb := bench.Find(page, "BenchmarkPageDecode/"+id+"/conversation"), bench.Find(page, "BenchmarkPageDecode/"+id+"/conversation-batch")
		if nc == nil || pc == nil || pb == nil {
			continue
		}
		r, rb := cpuRatio(pc, nc), cpuRatio(pb, nc)
		if rb > worst {
			worst, worstName = rb, id
		}
		if r > worstAlone {
			worstAlone, worstAloneName = r, id
		}
		t.add(id, ns(cpuOf(nc)), ns(cpuOf(pc)), ratio(r), ratio(pc.Median["ns/op"]/nc.Median["ns/op"]),
			ns(cpuOf(pb)), ratio(rb), ratio(pb.Median["ns/op"]/nc.Median["ns/op"]))
	}
	b.WriteString("### The server browser's whole call per server: a conversation in web/static/querylens.wasm under node, against the same work natively\n\n")
	b.WriteString("What web/static/worker.js has the decoder do for each server, run by the page's own code (web/static/relay.js `Batch`): " +
		"an OPEN request (the conversation and its first datagrams) and a STEP per reply, the last returning the table's row (codecs.AppendSummaryJSON), " +
		"written into `querylens.in` and run by `querylens.batch`, whose JSON array of results is read from `querylens.out` and parsed. " +
		"The worker batches the requests made while it is busy, so one call carries every server whose reply arrived together; " +
		"the first columns are one server per call (two crossings of the Go↔JS boundary for a one-datagram reply), the others " + strconv.Itoa(pageBatch) + " servers per call. " +
		"The native side is NewQuery, Start, Feed per reply, Result and codecs.AppendSummaryJSON (bench.BenchmarkDecodeConversation). CPU time per conversation.\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")
	if worst > 0 {
		b.WriteString(goal(worst <= 2.5, fmt.Sprintf("the page's whole decode call within 2.5× of native (CPU time), %d servers per call; the slowest is %s at %s (one server per call: %s at %s).",
			pageBatch, worstName, ratio(worst), worstAloneName, ratio(worstAlone))) + "\n")
		e.addGoal(worst <= 2.5, fmt.Sprintf("the page's whole decode call per server (node, %d servers per call) against native, CPU time", pageBatch), "≤ 2.5× native",
			fmt.Sprintf("slowest %s at %s", worstName, ratio(worst)))
	}
	return b.String()
}

// pageBatch is bench/node/decode.cjs's BATCH: the servers per call in the
// batched conversation form.
const pageBatch = 16

// cpuOf is the median CPU time per operation, or wall time where the
// benchmark did not report CPU time.
func cpuOf(s *bench.Summary) float64 {
	if v, ok := s.Median["cpu-ns/op"]; ok && v > 0 {
		return v
	}
	return s.Median["ns/op"]
}

func cpuRatio(a, b *bench.Summary) float64 { return cpuOf(a) / cpuOf(b) }

func mustParse(out string) []bench.Run {
	runs, _ := bench.ParseBench(strings.NewReader(out))
	return runs
}

// parseBenchtime turns "100ms"/"1s" into milliseconds.
func parseBenchtime(s string) (int, error) {
	if v, ok := strings.CutSuffix(s, "ms"); ok {
		return strconv.Atoi(v)
	}
	if v, ok := strings.CutSuffix(s, "s"); ok {
		n, err := strconv.Atoi(v)
		return n * 1000, err
	}
	return 0, fmt.Errorf("benchtime %q", s)
}

func writePackets(path string, ps []bench.Packet) error {
	type jp struct {
		Protocol  string   `json:"protocol"`
		Name      string   `json:"name"`
		Datagrams []string `json:"datagrams"`
		Query     string   `json:"query,omitempty"`
	}
	var out []jp
	for _, p := range ps {
		j := jp{Protocol: p.Protocol, Name: p.Name, Query: hex.EncodeToString(p.Query)}
		for _, d := range p.Datagrams {
			j.Datagrams = append(j.Datagrams, hex.EncodeToString(d))
		}
		out = append(out, j)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
