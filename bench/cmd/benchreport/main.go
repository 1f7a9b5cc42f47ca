// Command benchreport runs querylens's measurements and rewrites the tables
// of BENCHMARKS.md. `go tool task bench` runs it through scripts/bench.sh:
//
//	go run ./bench/cmd/benchreport [-only browser,start,gamedig,...] [-count 5] [-e2e-count 3] [-base old-querylens]
//
// For work on one part, the browser section runs fewer refreshes with
// -protocols a2s (Zandronum's always run, the others are measured against
// them) and skips its first-decode and profiled rounds with -rounds-only:
//
//	go tool task bench -- -only browser -protocols a2s -rounds-only -out /tmp/browser.md
//
// -protocols narrows the GameDig section too; a narrowed run keeps the
// goals rows of the protocols it did not measure, and the section's
// earlier text, folded beneath the new one.
//
// BENCHMARKS.md opens with a table of every goal (measure, goal, result,
// command, date), then one section per measurement. Every section is
// rewritten from its own measurement and says when, on what machine and
// with which command it was measured; a section adds its rows to the goals
// table with env.addGoal. With -only, the sections not run are kept as they
// were, with their rows of the goals table. Text between the "notes" markers
// is written by hand and kept: it holds the goals measured outside this
// suite.
//
// Everything it starts listens on and talks to 127.0.0.1 only, and stops
// when the run ends; each step has its own deadline. The browser and GameDig sections'
// loaded rounds also keep one core busy with a busy loop in this process
// (hog.go), which each round stops, and which stops by itself after the
// round's deadline in any case.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// env is what every section sees.
type env struct {
	root      string // repository root
	tmp       string // scratch directory, removed at the end
	count     int    // runs of each micro-benchmark (medians over these)
	e2eCount  int    // runs of each end-to-end measurement
	servers   int    // servers in the end-to-end measurements
	idleConns int    // idle relay connections held
	querylens string // the querylens binary
	base      string // querylens binaries the start section compares with, comma-separated ("": none)
	node      string
	chromium  string
	benchtime string
	whatIf    bool   // the browser section also times its what-if variants (lab runs, not results)
	protocols string // the browser section's protocols, comma-separated ("": all)
	// startModule is a browser module (.wasm) the start section's page
	// serves instead of the one built into querylens ("": that one).
	startModule string
	// familiesModule is the module of more families the start section
	// compares with: "" builds it (buildFamiliesModule), "off" skips it.
	familiesModule string
	noTail         bool // the browser section skips its first-decode and profiled rounds
	log            io.Writer
	goals          []goalRow // the goals the running section checked (addGoal)
}

// addGoal records a goal the running section checked, for the goals table
// at the top of BENCHMARKS.md. The section still says it in its own text.
func (e *env) addGoal(met bool, measure, target, result string) {
	e.goals = append(e.goals, goalRow{measure: measure, goal: target, result: result, met: met})
}

type section struct {
	key, title string
	limit      time.Duration
	run        func(ctx context.Context, e *env) (string, error)
}

// byProtocol are the sections -protocols narrows: a narrowed run keeps the
// goals rows of the protocols it did not measure and the earlier run's
// text (keptEarlier).
var byProtocol = map[string]bool{"browser": true, "gamedig": true}

var sections = []section{
	{"browser", "Refreshing 1,000 Zandronum, A2S, Quake III, GameSpy v1, All-Seeing Eye, SA-MP and Minecraft Java servers in the browser", 20 * time.Minute, browserSection},
	{"start", "The browser page's start: first decode", 20 * time.Minute, startSection},
	{"gamedig", "GameDig against querylens: GameSpy v2, A2S, Quake III, GameSpy v1, All-Seeing Eye, SA-MP, Minecraft Java", 15 * time.Minute, gamedigSection},
	{"decoder", "The browser decoder: wasm against native", 8 * time.Minute, decoderSection},
	{"relay", "The relay", 10 * time.Minute, relaySection},
	{"scale", "Several instances sharing Redis", 3 * time.Minute, scaleSection},
	{"huffman", "Huffman: table codec against the tree walk", 2 * time.Minute, huffmanSection},
	{"codecs", "Codec benchmarks", 3 * time.Minute, codecsSection},
	{"size", "The browser module's size, by package", 20 * time.Minute, sizeSection},
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "relay-child" {
		relayChild()
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "relay-tcp-child" {
		relayTCPChild()
		return
	}
	var (
		only = flag.String("only", "", "comma-separated sections to run (default all: "+sectionKeys()+")")
		out  = flag.String("out", "BENCHMARKS.md", "the file to rewrite")
		e    = env{log: os.Stderr}
	)
	flag.StringVar(&e.root, "root", ".", "the repository root")
	flag.IntVar(&e.count, "count", 5, "runs of each micro-benchmark")
	flag.IntVar(&e.e2eCount, "e2e-count", 3, "runs of each end-to-end measurement")
	flag.IntVar(&e.servers, "servers", 1000, "servers in the end-to-end measurements")
	flag.IntVar(&e.idleConns, "idle-conns", 10000, "idle relay connections to hold")
	flag.StringVar(&e.querylens, "querylens", "", "the querylens binary (default: build it)")
	flag.StringVar(&e.base, "base", "", "querylens binaries (earlier builds, comma-separated) the start section alternates with, the first as the base")
	flag.StringVar(&e.node, "node", "node", "node")
	flag.StringVar(&e.chromium, "chromium", "/usr/bin/chromium", "headless Chromium")
	flag.StringVar(&e.benchtime, "benchtime", "100ms", "-benchtime of each micro-benchmark run")
	flag.BoolVar(&e.whatIf, "whatif", false, "the browser section also times the page with one change at a time (what-if runs, for docs/benchmarks-notes.md)")
	flag.StringVar(&e.protocols, "protocols", "", "the browser and GameDig sections' protocols, comma-separated (default all; the browser section always runs Zandronum's, as the others are measured against it);\n"+
		"a narrowed run keeps the goals rows of the others and the section's earlier text, folded")
	flag.StringVar(&e.startModule, "start-module", "", "a browser module (`FILE`.wasm) the start section's page serves instead of the one built into querylens (embedded in a querylens built with go build -overlay)")
	flag.StringVar(&e.familiesModule, "families-module", "", "the start section's module of 12 more families (`FILE`.wasm; default: built from ./wasm with 12 renamed copies of the codecs; off: not measured)")
	flag.BoolVar(&e.noTail, "rounds-only", false, "the browser section times only its rounds (no first-decode and profiled rounds)")
	flag.Parse()
	if flag.NArg() != 0 || e.count < 1 || e.e2eCount < 1 || e.servers < 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, &e, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func sectionKeys() string {
	var ks []string
	for _, s := range sections {
		ks = append(ks, s.key)
	}
	return strings.Join(ks, ",")
}

func run(ctx context.Context, e *env, only, out string) error {
	root, err := filepath.Abs(e.root)
	if err != nil {
		return err
	}
	e.root = root
	want := map[string]bool{}
	for k := range strings.SplitSeq(only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	for k := range want {
		if !strings.Contains(","+sectionKeys()+",", ","+k+",") {
			return fmt.Errorf("unknown section %q (known: %s)", k, sectionKeys())
		}
	}
	e.tmp, err = os.MkdirTemp("", "benchreport-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(e.tmp)
	if e.querylens == "" {
		e.querylens = filepath.Join(e.tmp, "querylens")
		if _, err := e.command(ctx, nil, "go", "build", "-o", e.querylens, "./cmd/querylens"); err != nil {
			return err
		}
	}

	outPath := out
	if !filepath.IsAbs(outPath) {
		outPath = filepath.Join(root, out)
	}
	old, _ := os.ReadFile(outPath)
	doc := parseDoc(string(old))
	failed := 0
	for _, s := range sections {
		if len(want) > 0 && !want[s.key] {
			continue
		}
		fmt.Fprintf(e.log, "== %s\n", s.key)
		start := time.Now()
		load := loadAverage()
		sctx, cancel := context.WithTimeout(ctx, s.limit)
		e.goals = nil
		body, err := s.run(sctx, e)
		cancel()
		if err != nil {
			failed++
			fmt.Fprintf(e.log, "%s: %v\n", s.key, err)
			body += "\n**This measurement failed:** " + mdEscape(err.Error()) + "\n"
		}
		date := start.UTC().Format("2006-01-02 15:04 UTC")
		narrowed := e.protocols != "" && byProtocol[s.key]
		if narrowed {
			body = strings.TrimSpace(body) + "\n\n" + keptEarlier(doc.sections[s.key], e.protocols)
		}
		doc.sections[s.key] = fmt.Sprintf("## %s\n\n_Measured %s in %s on %s; load average %s at the start, %s at the end._\n\n%s",
			s.title, date, time.Since(start).Round(time.Second), machine(), load, loadAverage(), strings.TrimSpace(body))
		// A section that failed before checking any goal keeps its earlier
		// rows, which carry their own date.
		if err == nil || len(e.goals) > 0 {
			var rows []string
			for _, g := range e.goals {
				rows = append(rows, strings.TrimSuffix(mdRow(g.cells(s.key, date)), "\n"))
			}
			if narrowed {
				rows = mergeGoalRows(doc.goals[s.key], rows)
			}
			doc.goals[s.key] = rows
		}
		if err := os.WriteFile(outPath, []byte(doc.render()), 0o644); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d section(s) failed; see %s", failed, out)
	}
	return nil
}

// command runs name in the repository root with extra environment and
// returns its standard output; stderr is passed through to the log.
func (e *env) command(ctx context.Context, extraEnv []string, name string, args ...string) (string, error) {
	return e.commandIn(ctx, e.root, extraEnv, nil, name, args...)
}

func (e *env) commandIn(ctx context.Context, dir string, extraEnv []string, stdin io.Reader, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(&stderr, e.log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		tail := strings.TrimSpace(stderr.String())
		if len(tail) > 600 {
			tail = "…" + tail[len(tail)-600:]
		}
		if tail == "" {
			tail = lastLines(stdout.String(), 5)
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail)
	}
	return stdout.String(), nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// machine describes this machine: cores, CPU model, Go version.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d × %s (nproc %d), %s %s/%s", runtime.NumCPU(), model, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return "unknown"
	}
	return f[0]
}

// keptEarlier is what a run narrowed by -protocols keeps of the section's
// earlier text (its block, heading included): everything but the heading,
// folded, less what that run kept of the run before it.
func keptEarlier(prev, protocols string) string {
	prev, _, _ = strings.Cut(prev, "\n<details><summary>The earlier run")
	_, rest, ok := strings.Cut(prev, "\n")
	if !ok || strings.TrimSpace(rest) == "" {
		return ""
	}
	return "<details><summary>The earlier run (this one measured only " + protocols + ", with -protocols; the goals table keeps the earlier rows of the others)</summary>\n\n" +
		strings.TrimSpace(rest) + "\n\n</details>\n"
}

// mergeGoalRows puts a narrowed run's goals rows in place of the earlier
// rows of the same measure (the first cell), keeps the others, and adds
// the new measures at the end.
func mergeGoalRows(old, rows []string) []string {
	measure := func(row string) string {
		cells, _ := tableCells(row)
		if len(cells) == 0 {
			return row
		}
		return cells[0]
	}
	byMeasure := map[string]string{}
	for _, r := range rows {
		byMeasure[measure(r)] = r
	}
	var out []string
	for _, r := range old {
		if n, ok := byMeasure[measure(r)]; ok {
			out = append(out, n)
			delete(byMeasure, measure(r))
			continue
		}
		out = append(out, r)
	}
	for _, r := range rows {
		if _, ok := byMeasure[measure(r)]; ok {
			out = append(out, r)
		}
	}
	return out
}
