package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/bench/farm"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
)

// pageConcurrency is how many servers the browser page asks at once
// (browse.js: min(768, 0.75 × the relay's in-flight limit, which `serve
// --demo` sets to 1024)); the native floor asks as many at once, so that the
// ratio is what the relay and the browser add.
const pageConcurrency = 768

// rateWindow is the demo's per-IP window (Zandronum servers and master
// answer one client IP once per 10 s), waited out between two clients.
const rateWindow = 10*time.Second + 500*time.Millisecond

// pageStats is what the injected script (benchScript) records, in ms since
// navigation started.
type pageStats struct {
	Marks       map[string]float64 `json:"marks"`
	States      map[string]int     `json:"states"`
	Zandronum   int                `json:"zandronum"`
	Asked       int                `json:"asked"`
	Answered    int                `json:"answered"`
	LongTasks   float64            `json:"longTasks"`
	LongTaskN   int                `json:"longTaskCount"`
	DecoderLoad float64            `json:"decoderLoad"` // duration of the ql-decoder-load measure
	Frames      int                `json:"frames"`      // animation frames from the page's start to done
	RebuildMS   float64            `json:"rebuildMs"`   // one querylensBrowse.rebuild() of the full table, after done
	WS          struct {
		Sent      int     `json:"sent"`
		Recv      int     `json:"recv"`
		BytesIn   float64 `json:"bytesIn"`
		BytesOut  float64 `json:"bytesOut"`
		FirstSend float64 `json:"firstSend"`
		LastRecv  float64 `json:"lastRecv"`
		HandlerMS float64 `json:"handlerMs"` // time spent in the page's message handlers
	} `json:"ws"`
}

// benchScript runs in the page before its own scripts. It counts the
// relay WebSocket's frames and the time the page's handlers spend on them,
// and checks on every animation frame, through the page's test hook
// (globalThis.querylensBrowse) and its progress bar, whether every
// Zandronum row has its final state and the table shows it.
const benchScript = `(() => {
  const N = %d, FRAME_CAP = %d;
  const raf = window.requestAnimationFrame.bind(window);
  if (FRAME_CAP > 0) {
    // An experiment: the page's frame callbacks (its re-filter, re-sort and
    // render) at most once per FRAME_CAP ms.
    let queue = [], last = 0, timer = 0;
    window.requestAnimationFrame = (cb) => {
      queue.push(cb);
      if (!timer) {
        timer = setTimeout(() => raf((t) => {
          timer = 0;
          last = performance.now();
          const cbs = queue;
          queue = [];
          for (const f of cbs) f(t);
        }), Math.max(0, last + FRAME_CAP - performance.now()));
      }
      return 0;
    };
  }
  const b = window.__qlBench = { marks: {}, ws: { sent: 0, recv: 0, bytesIn: 0, bytesOut: 0, firstSend: 0, lastRecv: 0, handlerMs: 0 }, done: false };
  const mark = (k) => { if (!(k in b.marks)) b.marks[k] = performance.now(); };
  const WS = window.WebSocket;
  window.WebSocket = class extends WS {
    constructor(...a) {
      super(...a);
      mark("wsCreate");
      this.addEventListener("open", () => mark("wsOpen"));
      this.addEventListener("message", (e) => {
        b.ws.recv++;
        b.ws.bytesIn += e.data.byteLength || 0;
        b.ws.lastRecv = performance.now();
      });
    }
    set onmessage(f) {
      super.onmessage = (e) => { const t0 = performance.now(); try { return f(e); } finally { b.ws.handlerMs += performance.now() - t0; } };
    }
    get onmessage() { return super.onmessage; }
    send(d) {
      b.ws.sent++;
      b.ws.bytesOut += d.byteLength || 0;
      if (!b.ws.firstSend) b.ws.firstSend = performance.now();
      super.send(d);
    }
  };
  let long = 0, longN = 0;
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) { long += e.duration; longN++; } }).observe({ type: "longtask", buffered: true });
  } catch {}
  const final = (s) => s !== "pending" && s !== "querying";
  b.frames = 0;
  function check() {
    b.frames++;
    const qb = window.querylensBrowse;
    if (qb && qb.ready) mark("ready");
    if (qb && qb.view) {
      const v = qb.view();
      let zan = 0, done = 0;
      for (const r of v) if (r.protocol === "zandronum") { zan++; if (final(r.state)) done++; }
      if (zan > 0) mark("listed");
      if (zan >= N && done >= N / 2) mark("half");
      const counts = (document.getElementById("counts") || {}).textContent || "";
      const busyRows = document.querySelectorAll("#rows tr[data-state=pending], #rows tr[data-state=querying]").length;
      if (zan >= N && done === zan && busyRows === 0 && counts.startsWith(v.length + " shown")) {
        mark("decoded");
        // The page renders on its next animation frame; count the table
        // as rendered after that frame has run.
        raf(() => raf(() => {
          mark("rendered");
          const states = {};
          for (const r of qb.view()) if (r.protocol === "zandronum") states[r.state] = (states[r.state] || 0) + 1;
          const bar = document.querySelector(".progress [role=progressbar]");
          Object.assign(b, { states, zandronum: zan, longTasks: long, longTaskCount: longN,
            asked: Number(bar && bar.getAttribute("aria-valuemax")), answered: Number(bar && bar.getAttribute("aria-valuenow")) });
          const m = performance.getEntriesByName("ql-decoder-load")[0];
          b.decoderLoad = m ? m.duration : 0;
          // What one re-filter, re-sort and render of the full table costs
          // (the page does one per animation frame while replies arrive).
          const costs = [];
          for (let i = 0; i < 7; i++) { const t0 = performance.now(); qb.rebuild(); costs.push(performance.now() - t0); }
          costs.sort((x, y) => x - y);
          b.rebuildMs = costs[3];
          b.done = true;
        }));
        return;
      }
    }
    raf(check);
  }
  raf(check);
})();`

type browserRound struct {
	page       pageStats
	metrics    map[string]float64 // Performance.getMetrics at the end
	serveCPU   float64            // ms of CPU the serve process (relay, web, demo) used during the page's refresh
	relayStats map[string]float64 // relay counters over the page's refresh
	floor      floorRun
}

type floorRun struct {
	masterMS, totalMS float64
	listed            int
	out               farm.Outcome
}

func browserSection(ctx context.Context, e *env) (string, error) {
	if _, err := os.Stat(e.chromium); err != nil {
		return "Chromium is not installed at " + e.chromium + " (apt-get install -y chromium).\n", err
	}
	var rounds []browserRound
	for round := range e.e2eCount {
		fmt.Fprintf(e.log, "browser: round %d/%d\n", round+1, e.e2eCount)
		r, err := e.browserRound(ctx)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(e.log, "browser: page %+v\nbrowser: floor %+v\n", r.page, r.floor)
		rounds = append(rounds, r)
	}
	report := browserReport(e, rounds)
	exp, err := e.experiments(ctx)
	if err != nil {
		return report, err
	}
	report += "\n" + exp
	fmt.Fprintf(e.log, "browser: profiled round\n")
	prof, st, err := e.profileRound(ctx)
	if err != nil {
		return report, err
	}
	return report + "\n" + profileReport(prof, st), nil
}

// profileRound refreshes the page once more, on a fresh demo, with
// Chrome's CPU profiler sampling the page every 250 µs (not timed with the
// rounds above: the profiler slows the page down).
func (e *env) profileRound(ctx context.Context) (*profiler.Profile, pageStats, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	srv, err := startServe(ctx, e.querylens, e.servers)
	if err != nil {
		return nil, pageStats{}, err
	}
	defer srv.stop()
	var prof *profiler.Profile
	st, _, err := e.runPage(ctx, srv.url, pageOpts{profile: &prof})
	if err == nil && prof == nil {
		err = errors.New("no profile")
	}
	return prof, st, err
}

// browserRound starts `querylens serve --demo`, times a fresh headless
// Chromium refreshing the browser page, waits out the demo's rate window,
// then times the native floor against the same master and servers.
func (e *env) browserRound(ctx context.Context) (browserRound, error) {
	var r browserRound
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	srv, err := startServe(ctx, e.querylens, e.servers)
	if err != nil {
		return r, err
	}
	defer srv.stop()

	metricsBefore, _ := scrapeMetrics(srv.url + "metrics")
	cpuBefore := processCPU(srv.cmd.Process.Pid)
	stats, metrics, err := e.runPage(ctx, srv.url, pageOpts{})
	pageEnd := time.Now()
	if err != nil {
		return r, err
	}
	r.page, r.metrics = stats, metrics
	r.serveCPU = processCPU(srv.cmd.Process.Pid) - cpuBefore
	if after, err := scrapeMetrics(srv.url + "metrics"); err == nil {
		r.relayStats = map[string]float64{}
		for k, v := range after {
			r.relayStats[k] = v - metricsBefore[k]
		}
	}

	// The floor, once the servers and the master will answer 127.0.0.1
	// again: the page's last queries were moments before pageEnd.
	select {
	case <-time.After(time.Until(pageEnd.Add(rateWindow))):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	r.floor, err = nativeFloor(ctx, srv.master, pageConcurrency)
	return r, err
}

// nativeFloor asks the master for its list and then every listed server
// directly over UDP with the same codec, pageConcurrency at a time.
func nativeFloor(ctx context.Context, master string, concurrency int) (floorRun, error) {
	var f floorRun
	c, err := codecs.Lookup("zandronum")
	if err != nil {
		return f, err
	}
	start := time.Now()
	q, err := c.NewQuery(map[string]string{"master": "true"})
	if err != nil {
		return f, err
	}
	u := &netquery.UDP{Timeout: 2 * time.Second}
	if _, err := u.Exchange(ctx, "zandronum", master, q); err != nil {
		return f, err
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		return f, fmt.Errorf("master list: %w", err)
	}
	if m.Kind != codecs.KindMasterList || len(m.Servers) == 0 {
		return f, fmt.Errorf("the master answered %s with %d servers (denied: %q)", m.Kind, len(m.Servers), m.Denied)
	}
	f.masterMS = msSince(start)
	f.listed = len(m.Servers)
	f.out, err = farm.QueryAll(ctx, "zandronum", nil, m.Servers, concurrency, 2*time.Second)
	f.totalMS = msSince(start)
	return f, err
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// runPage opens a fresh headless Chromium on url and waits until the
// injected script reports every Zandronum row decoded and rendered.
// pageOpts are the variations of a page run.
type pageOpts struct {
	profile       **profiler.Profile // record a CPU profile into it
	reducedMotion bool               // emulate prefers-reduced-motion: reduce (app.css then turns transitions off)
	frameCapMS    int                // run the page's animation-frame callbacks at most once per this many ms
}

func (e *env) runPage(ctx context.Context, url string, o pageOpts) (pageStats, map[string]float64, error) {
	var st pageStats
	prof := o.profile
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(e.chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Headless,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	bctx, stop, err := startBrowser(ctx, opts)
	if err != nil {
		return st, nil, err
	}
	defer stop()
	if _, err := chromedp.Call(bctx, performance.Enable, performance.EnableParams{}); err != nil {
		return st, nil, err
	}
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(benchScript, e.servers, o.frameCapMS)}); err != nil {
		return st, nil, err
	}
	if o.reducedMotion {
		if _, err := chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
			return st, nil, err
		}
	}
	if prof != nil {
		if _, err := chromedp.Call(bctx, profiler.Enable, cdp.Empty{}); err != nil {
			return st, nil, err
		}
		if _, err := chromedp.Call(bctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 250}); err != nil {
			return st, nil, err
		}
		if _, err := chromedp.Call(bctx, profiler.Start, cdp.Empty{}); err != nil {
			return st, nil, err
		}
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		return st, nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		done, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`!!(window.__qlBench && window.__qlBench.done)`))
		if err != nil {
			return st, nil, err
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			progress, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`(document.getElementById("progress-text") || {}).textContent || ""`))
			return st, nil, fmt.Errorf("the page did not show all %d servers within 60 s (progress: %q)", e.servers, progress)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if prof != nil {
		res, err := chromedp.Call(bctx, profiler.Stop, cdp.Empty{})
		if err != nil {
			return st, nil, err
		}
		*prof = res.Profile
	}
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(window.__qlBench)`))
	if err != nil {
		return st, nil, err
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, nil, err
	}
	metrics := map[string]float64{}
	if res, err := chromedp.Call(bctx, performance.GetMetrics, cdp.Empty{}); err == nil {
		for _, m := range res.Metrics {
			metrics[m.Name] = m.Value
		}
	}
	return st, metrics, nil
}

// startBrowser starts headless Chromium in its own process group on a
// blank page, giving up on an attempt after 45 s (a loaded machine can
// stall it) and trying twice. stop ends the browser and its children.
func startBrowser(ctx context.Context, opts []chromedp.ExecAllocatorOption) (context.Context, func(), error) {
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		var pgid atomic.Int64 // set once the browser answered
		o := append(append([]chromedp.ExecAllocatorOption(nil), opts...), chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
		}))
		actx, acancel := chromedp.NewExecAllocator(ctx, o...)
		bctx, bcancel := chromedp.NewContext(actx)
		stop := func() {
			bcancel()
			if p := pgid.Load(); p > 0 {
				syscall.Kill(-int(p), syscall.SIGKILL)
			}
			done := make(chan struct{})
			go func() { acancel(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
			}
		}
		started := make(chan error, 1)
		go func() { started <- chromedp.Do(bctx, chromedp.Navigate("about:blank")) }()
		select {
		case err := <-started:
			if err == nil {
				if c := chromedp.FromContext(bctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
					pgid.Store(int64(c.Browser.Process().Pid))
				}
				return bctx, stop, nil
			}
			lastErr = err
		case <-time.After(45 * time.Second):
			lastErr = errors.New("did not start within 45 s")
		case <-ctx.Done():
			lastErr = ctx.Err()
		}
		stop()
		if ctx.Err() != nil {
			break
		}
	}
	return nil, nil, fmt.Errorf("chromium: %w", lastErr)
}

// serveProc is a running `querylens serve --demo`.
type serveProc struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:port/
	master string
	done   chan struct{}
}

func startServe(ctx context.Context, bin string, servers int) (*serveProc, error) {
	cmd := exec.CommandContext(ctx, bin, "serve", "--demo", "--demo-servers", strconv.Itoa(servers), "--addr", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serveProc{cmd: cmd, done: make(chan struct{})}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
			}
		}
		close(lines)
	}()
	go func() { cmd.Wait(); close(s.done) }()
	timeout := time.After(30 * time.Second)
	for s.url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				s.stop()
				return nil, errors.New("querylens serve exited before serving")
			}
			if rest, ok := strings.CutPrefix(l, "demo master "); ok {
				s.master, _, _ = strings.Cut(rest, " ")
			}
			if rest, ok := strings.CutPrefix(l, "querylens is serving at "); ok {
				s.url = strings.TrimSpace(rest)
			}
		case <-timeout:
			s.stop()
			return nil, errors.New("querylens serve did not start within 30 s")
		}
	}
	go func() {
		for range lines {
		}
	}()
	if s.master == "" {
		s.stop()
		return nil, errors.New("querylens serve --demo did not print its master's address")
	}
	return s, nil
}

func (s *serveProc) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// processCPU is the user + system CPU time of pid in ms.
func processCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 1000 / 100 // clock ticks (USER_HZ = 100)
}

// scrapeMetrics reads the unlabelled samples and the labelled counters of
// a Prometheus exposition into one map.
func scrapeMetrics(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			out[l[:i]] = v
		}
	}
	return out, sc.Err()
}

func browserReport(e *env, rounds []browserRound) string {
	med := func(f func(browserRound) float64) float64 {
		var vs []float64
		for _, r := range rounds {
			vs = append(vs, f(r))
		}
		return bench.Median(vs)
	}
	pageMS := med(func(r browserRound) float64 { return r.page.Marks["rendered"] })
	floorMS := med(func(r browserRound) float64 { return r.floor.totalMS })
	var b strings.Builder
	fmt.Fprintf(&b, "Per round: %s (a fresh demo: master, %d Zandronum servers, 5 of the other protocols); "+
		"a fresh headless Chromium opens the browser page; then, once the demo's 10 s per-IP window has passed, the native floor asks the same master and servers. %d rounds, medians.\n\n",
		code(fmt.Sprintf("querylens serve --demo --demo-servers %d --addr 127.0.0.1:0", e.servers)), e.servers, e.e2eCount)
	fmt.Fprintf(&b, "- page: from navigation to every one of the %d Zandronum rows in its final state (online, timed out, rate-limited, malformed) and the table rendered after it, read in the page "+
		"(`globalThis.querylensBrowse.view()`, the progress bar, `#counts`, then two animation frames); the page asks %d servers at a time through the relay.\n", e.servers, pageConcurrency)
	fmt.Fprintf(&b, "- floor: `netquery.UDP` with `codecs.Lookup(\"zandronum\").NewQuery(...)`: the master list, then every listed server, %d at a time, 2 s timeout (the relay's reply window).\n\n", pageConcurrency)
	t := newTable("client", "master list", "all servers final", "answered", "online", "page ÷ floor")
	t.add("native floor (direct UDP)", ms(med(func(r browserRound) float64 { return r.floor.masterMS })), ms(floorMS),
		fmt.Sprintf("%s / %s", num(med(func(r browserRound) float64 { return float64(r.floor.out.Received) })), num(med(func(r browserRound) float64 { return float64(r.floor.listed) }))),
		num(med(func(r browserRound) float64 { return float64(r.floor.out.Done) })), "")
	t.add("browser page (relay + wasm + table)", ms(med(func(r browserRound) float64 { return r.page.Marks["listed"] })), ms(pageMS),
		fmt.Sprintf("%s / %s", num(med(func(r browserRound) float64 { return float64(r.page.Answered) })), num(med(func(r browserRound) float64 { return float64(r.page.Asked) }))),
		num(med(func(r browserRound) float64 { return float64(r.page.States["online"]) })), ratio(pageMS/floorMS))
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nPer round, page ÷ floor: %s. The floor's \"answered\" counts reply datagrams (segmented replies bring several); the page's counts conversations (progress bar), including the 5 non-Zandronum rows.\n\n",
		perRound(collect(rounds, func(r browserRound) float64 { return r.page.Marks["rendered"] }), collect(rounds, func(r browserRound) float64 { return r.floor.totalMS })))
	b.WriteString(goal(pageMS <= 2*floorMS, fmt.Sprintf("the page within 2× of the floor: %s.", ratio(pageMS/floorMS))) + "\n\n")

	// Where the page's time goes.
	b.WriteString("### Where the page's time goes\n\n")
	t = newTable("step (ms since navigation, medians)", "at", "took")
	prev := 0.0
	for _, s := range []struct{ key, name string }{
		{"wsCreate", "page scripts running, relay WebSocket opened"},
		{"wsOpen", "relay connected"},
		{"ready", "decoder (wasm) loaded and the first queries sent"},
		{"listed", "master list decoded, rows added"},
		{"half", "half of the servers final"},
		{"decoded", "every server final"},
		{"rendered", "table rendered"},
	} {
		at := med(func(r browserRound) float64 { return r.page.Marks[s.key] })
		t.add(s.name, ms(at), ms(at-prev))
		prev = at
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	t = newTable("measure (medians)", "value")
	t.add("wasm decoder load (ql-decoder-load measure)", ms(med(func(r browserRound) float64 { return r.page.DecoderLoad })))
	t.add("page main thread: script (Chrome ScriptDuration)", ms(1000*med(func(r browserRound) float64 { return r.metrics["ScriptDuration"] })))
	t.add("page main thread: all tasks (TaskDuration)", ms(1000*med(func(r browserRound) float64 { return r.metrics["TaskDuration"] })))
	t.add("page main thread: layout + style", ms(1000*med(func(r browserRound) float64 { return r.metrics["LayoutDuration"] + r.metrics["RecalcStyleDuration"] })))
	t.add("animation frames during the refresh (the page re-filters, re-sorts and renders on each one while replies arrive)", num(med(func(r browserRound) float64 { return float64(r.page.Frames) })))
	t.add("one re-filter + re-sort + render of the 1,005 rows (querylensBrowse.rebuild(), measured after the refresh)", ms(med(func(r browserRound) float64 { return r.page.RebuildMS })))
	t.add("page: in relay message handlers (decode, rows)", ms(med(func(r browserRound) float64 { return r.page.WS.HandlerMS })))
	t.add("page: long tasks (> 50 ms)", fmt.Sprintf("%s in %s", ms(med(func(r browserRound) float64 { return r.page.LongTasks })), num(med(func(r browserRound) float64 { return float64(r.page.LongTaskN) }))))
	t.add("frames page → relay / relay → page", fmt.Sprintf("%s / %s", num(med(func(r browserRound) float64 { return float64(r.page.WS.Sent) })), num(med(func(r browserRound) float64 { return float64(r.page.WS.Recv) }))))
	t.add("first query sent → last frame received", ms(med(func(r browserRound) float64 { return r.page.WS.LastRecv - r.page.WS.FirstSend })))
	t.add("serve process CPU (relay + web + demo servers) during the refresh", ms(med(func(r browserRound) float64 { return r.serveCPU })))
	for _, k := range []string{"querylens_relay_queries_forwarded_total", "querylens_relay_replies_total", "querylens_relay_cache_hits_total"} {
		t.add("relay: "+strings.TrimPrefix(k, "querylens_relay_"), num(med(func(r browserRound) float64 { return r.relayStats[k] })))
	}
	var refusals []string
	for k := range rounds[len(rounds)-1].relayStats {
		if strings.HasPrefix(k, "querylens_relay_refusals_total") || strings.HasPrefix(k, "querylens_relay_drops_total") || strings.HasPrefix(k, "querylens_relay_timeouts_total") {
			if v := med(func(r browserRound) float64 { return r.relayStats[k] }); v > 0 {
				refusals = append(refusals, strings.TrimPrefix(k, "querylens_relay_")+" "+num(v))
			}
		}
	}
	sort.Strings(refusals)
	if len(refusals) > 0 {
		t.add("relay: refusals, drops, timeouts", strings.Join(refusals, ", "))
	}
	states := rounds[len(rounds)-1].page.States
	var sl []string
	for k, v := range states {
		sl = append(sl, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(sl)
	t.add("row states (last round)", strings.Join(sl, ", "))
	b.WriteString(t.String())
	return b.String()
}

func collect(rounds []browserRound, f func(browserRound) float64) []float64 {
	var vs []float64
	for _, r := range rounds {
		vs = append(vs, f(r))
	}
	return vs
}

// experiments times the page with one change at a time, each run
// alternating with an unchanged one on its own fresh demo, and the native
// floor with every server asked at once, to show what each step costs.
func (e *env) experiments(ctx context.Context) (string, error) {
	one := func(o pageOpts) (float64, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		srv, err := startServe(ctx, e.querylens, e.servers)
		if err != nil {
			return 0, err
		}
		defer srv.stop()
		st, _, err := e.runPage(ctx, srv.url, o)
		return st.Marks["rendered"], err
	}
	variants := []struct {
		name string
		o    pageOpts
	}{
		{"prefers-reduced-motion (app.css drops the progress bar's width transition)", pageOpts{reducedMotion: true}},
		{"the page's frame callbacks (re-filter, re-sort, render) at most every 250 ms", pageOpts{frameCapMS: 250}},
		{"both", pageOpts{reducedMotion: true, frameCapMS: 250}},
	}
	t := newTable("variant (one run each, beside an unchanged run)", "unchanged", "variant", "variant ÷ unchanged")
	for _, v := range variants {
		fmt.Fprintf(e.log, "browser: experiment %s\n", v.name)
		base, err := one(pageOpts{})
		if err != nil {
			return "", err
		}
		got, err := one(v.o)
		if err != nil {
			return "", err
		}
		t.add(v.name, ms(base), ms(got), ratio(got/base))
	}
	// The floor with no bound on concurrency, on a fresh demo.
	ctx2, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	srv, err := startServe(ctx2, e.querylens, e.servers)
	if err != nil {
		return "", err
	}
	all, err := nativeFloor(ctx2, srv.master, e.servers)
	srv.stop()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("### What-if runs\n\n")
	b.WriteString("Single runs, each on a fresh demo, each next to an unchanged run made just before it (load on this machine moves single runs by ±30%: read large ratios only).\n\n")
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nThe native floor asking all %d servers at once instead of %d: **%s** (master list and every server final; %d answered).\n",
		e.servers, pageConcurrency, ms(all.totalMS), all.out.Done)
	return b.String(), nil
}
