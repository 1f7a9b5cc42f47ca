package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
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
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
)

// pageConcurrency is how many servers the browser page asks at once
// (worker.js: the relay's in-flight limit, which `serve --demo` sets to
// 1024 for a loopback client); the native floor asks as many at once, so
// that the ratio is what the relay and the browser add.
const pageConcurrency = 1024

// pageStreams is how many TCP exchanges the page gets in progress at
// once: its relay client (relay-client.js) starts with the relay's default
// per-client cap (wire.DefaultStreamsPerClient, 8; HELLO does not carry
// the cap) and raises it by one for each exchange that ends while others
// wait, up to what the relay refuses past: for a loopback client of
// `serve --demo`, 256 (demoLoopback.MaxStreams, in place of
// --tcp-per-client), which is also the whole relay's --tcp-max (tcp-cap).
// Past its first 248 exchanges the page so has 256 in progress; the floor
// of a stream protocol asks 256 at a time from the start.
const pageStreams = 256

// streamTimeout is the floor's bound on one TCP exchange, connection
// included: the relay's (--tcp-deadline, relay.DefaultStreamDeadline).
const streamTimeout = 5 * time.Second

// floorConcurrency is how many servers of protocol the native floor asks
// at once: as many as the page gets (pageStreams over TCP).
func floorConcurrency(protocol string) int {
	if isStream(protocol) {
		return pageStreams
	}
	return pageConcurrency
}

// isStream says whether protocol travels over TCP (codecs.Description).
func isStream(protocol string) bool {
	d, err := codecs.LookupDescription(protocol)
	return err == nil && d.Transport == codecs.TCP
}

// rateWindow is the demo's per-IP window (Zandronum servers and master
// answer one client IP once per 10 s), waited out between two clients.
const rateWindow = 10*time.Second + 500*time.Millisecond

// pageStats is what the injected script (benchScript) records, in ms since
// navigation started.
type pageStats struct {
	Marks       map[string]float64 `json:"marks"`
	States      map[string]int     `json:"states"`
	Details     map[string]int     `json:"details"`   // rows of the measured protocol not online, by "state: detail"
	Zandronum   int                `json:"zandronum"` // rows of the measured protocol (pageOpts.protocol), named for the first one
	Asked       int                `json:"asked"`
	Answered    int                `json:"answered"`
	LongTasks   float64            `json:"longTasks"`
	LongTaskN   int                `json:"longTaskCount"`
	DecoderLoad float64            `json:"decoderLoad"` // duration of the ql-decoder-load measure
	Frames      int                `json:"frames"`      // animation frames from the page's start to done
	RebuildMS   float64            `json:"rebuildMs"`   // one querylensBrowse.rebuild() of the full table, after done
	Hello       float64            `json:"hello"`       // the page learnt that the relay connection is open (ql-relay-hello)
	FirstDecode float64            `json:"firstDecode"` // the first decoded rows reached the page (qlFirstDecodeMs)
	Worker      struct {
		Asked   int `json:"asked"`   // conversations the worker was asked for
		Done    int `json:"done"`    // conversations it finished
		Replies int `json:"replies"` // reply datagrams it decoded
		Batches int `json:"batches"` // messages of results the page received
		// Calls into the decoder (querylens.batch) and the requests
		// (open, step, finish) they ran.
		DecoderCalls    int `json:"decoderCalls"`
		DecoderRequests int `json:"decoderRequests"`
		// The worker's start steps on the page's timeline (ms since
		// navigation): script, modules, open, module, decoder,
		// firstResults.
		Times map[string]float64 `json:"times"`
		// Where the conversations' time went (relay.js Timing): sums
		// in ms and counts.
		Timing map[string]float64 `json:"timing"`
	} `json:"worker"`
	HTML          float64 `json:"html"`          // the document's response ended
	WorkerCreated float64 `json:"workerCreated"` // the page's script created the worker
	WS            struct {
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
// (globalThis.querylensBrowse) and its progress bar, whether every row of
// the measured protocol (P: Zandronum or A2S) has its final state and the
// table shows it.
const benchScript = `(() => {
  const N = %d, FRAME_CAP = %d, P = %q;
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
      for (const r of v) if (r.protocol === P) { zan++; if (final(r.state)) done++; }
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
          const states = {}, details = {};
          for (const r of qb.view()) if (r.protocol === P) {
            states[r.state] = (states[r.state] || 0) + 1;
            if (r.state !== "online") { const k = r.state + ": " + String(r.detail || "").replace(/\d+\.\d+\.\d+\.\d+:\d+/g, "HOST:PORT").slice(0, 120); details[k] = (details[k] || 0) + 1; }
          }
          b.details = details;
          const bar = document.querySelector(".progress [role=progressbar]");
          Object.assign(b, { states, zandronum: zan, longTasks: long, longTaskCount: longN,
            asked: Number(bar && bar.getAttribute("aria-valuemax")), answered: Number(bar && bar.getAttribute("aria-valuenow")) });
          const m = performance.getEntriesByName("ql-decoder-load")[0];
          b.decoderLoad = m ? m.duration : 0;
          const hello = performance.getEntriesByName("ql-relay-hello")[0];
          b.hello = hello ? hello.startTime : 0;
          b.firstDecode = globalThis.qlFirstDecodeMs || 0;
          const nav = performance.getEntriesByType("navigation")[0];
          b.html = nav ? nav.responseEnd : 0;
          const wc = performance.getEntriesByName("ql-worker-created")[0];
          b.workerCreated = wc ? wc.startTime : 0;
          b.worker = qb.stats ? qb.stats() : {};
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
	protocol   string  // the rows measured: "zandronum" or "a2s"
	keptMS     float64 // a2s: ms the server took to keep the Steam-like master's whole list, before the page
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
	var runs browserRuns
	// Quiet and loaded rounds alternate, and so do the Zandronum, A2S,
	// Quake III and GameSpy v1 refreshes (their order reverses every
	// round), so that a change in the machine's own load touches them all
	// alike.
	all, err := browserProtocols(e.protocols)
	if err != nil {
		return "", err
	}
	// cut says why the rounds stopped before e.e2eCount ("": they did not).
	cut := ""
rounds:
	for round := range e.e2eCount {
		protos := slices.Clone(all)
		if round%2 == 1 {
			slices.Reverse(protos)
		}
		for _, hog := range []bool{false, true} {
			for _, proto := range protos {
				fmt.Fprintf(e.log, "browser: round %d/%d %s (cpu hog %v)\n", round+1, e.e2eCount, proto, hog)
				r, err := e.browserRound(ctx, hog, proto)
				if err != nil {
					// On a busy machine the section's time can run out
					// before its last rounds: the rounds done are
					// reported if every protocol has a quiet and a
					// loaded one, and the section says so.
					if ctx.Err() != nil && runs.complete(all) {
						cut = fmt.Sprintf("The section's time (its deadline) ran out in round %d of %d (%s, %s): the medians are of the rounds done before it.",
							round+1, e.e2eCount, proto, map[bool]string{false: "quiet", true: "one core busy"}[hog])
						fmt.Fprintf(e.log, "browser: %s\n", cut)
						break rounds
					}
					return "", fmt.Errorf("%s round: %w", proto, err)
				}
				fmt.Fprintf(e.log, "browser: page %+v\nbrowser: floor %+v\n", r.page, r.floor)
				fmt.Fprintf(e.log, "browser: serve CPU %.0f ms\n", r.serveCPU)
				logRelayRefusals(e.log, r.relayStats)
				runs.add(proto, hog, r)
			}
		}
	}
	if e.noTail || cut != "" {
		// Cut short, the section skips its first-decode rounds as with
		// -rounds-only, and its report says they were not measured.
		defer func(v bool) { e.noTail = v }(e.noTail)
		e.noTail = true
		report := browserReport(e, runs, firstDecodeRuns{})
		if cut != "" {
			report = "**" + cut + "** The first-decode and profiled rounds did not run.\n\n" + report
		}
		return report, nil
	}
	fmt.Fprintf(e.log, "browser: first decode, cold and warm\n")
	fd, err := e.firstDecode(ctx)
	if err != nil {
		return "", err
	}
	report := browserReport(e, runs, fd)
	if e.whatIf {
		exp, err := e.experiments(ctx)
		if err != nil {
			return report, err
		}
		report += "\n" + exp
	}
	fmt.Fprintf(e.log, "browser: profiled round\n")
	prof, st, err := e.profileRound(ctx)
	if err != nil {
		return report, err
	}
	return report + "\n" + profileReport(prof, st), nil
}

// browserKnown are the browser section's protocols, in the order they
// run in a round: Zandronum (the others are measured against it), the
// protocols whose fleets the demo's masters list (a2s, quake3), then every
// other protocol the demo can start a fleet of (demo.MoreProtocols) that
// the section measures by default (browserDefault).
func browserKnown() []string {
	known := []string{"zandronum", "a2s", "quake3"}
	for p := range strings.SplitSeq(demo.MoreProtocols(), ",") {
		if p != "" && !slices.Contains(known, p) {
			known = append(known, p)
		}
	}
	return known
}

// browserDefault are the protocols the browser section measures without
// -protocols: those with a goal of their own.
var browserDefault = []string{"zandronum", "a2s", "quake3", "gamespy1", "ase", "samp", "minecraft"}

// browserProtocols reads -protocols: the browser section's protocols, in
// the order they run in a round, Zandronum always first (the others are
// measured against it). Any protocol the demo can start a fleet of may be
// named.
func browserProtocols(list string) ([]string, error) {
	known := browserKnown()
	want, err := protocolSet(list, known)
	if err != nil {
		return nil, err
	}
	if want == nil {
		want = map[string]bool{}
		for _, p := range browserDefault {
			want[p] = true
		}
	}
	want["zandronum"] = true
	var out []string
	for _, p := range known {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// logRelayRefusals logs the relay's refusals and limits of a round (the
// counters of its /metrics that grew, whose names say refused, limited,
// denied, busy or dropped), so that a slow round shows what the relay
// turned down.
func logRelayRefusals(w io.Writer, stats map[string]float64) {
	var ks []string
	for k, v := range stats {
		if v <= 0 {
			continue
		}
		for _, word := range []string{"refus", "limit", "denied", "busy", "drop", "reject", "timeout", "frames_out", "forwarded", "coalesced"} {
			if strings.Contains(k, word) {
				ks = append(ks, k)
				break
			}
		}
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Fprintf(w, "browser: relay %s +%s\n", k, strconv.FormatFloat(stats[k], 'f', -1, 64))
	}
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
// then times the native floor against the same master and servers. With
// hog, a busy loop holds one of the machine's cores from before the page
// starts until the floor is done (at most the round's 2 minutes).
//
// protocol picks the servers: "zandronum", e.servers of them behind the
// demo's Zandronum master, whose list the server keeps (fetched once
// before the page opens, as for the two below); "a2s", e.servers A2S servers behind the demo's
// Steam-like master (and one Zandronum server), whose list the server
// keeps: it is fetched once before the page opens, as a running server
// has it for every visitor (the first fetch is paced at one page of 231
// addresses per 2 s, masters.DefaultInterval); "quake3", e.servers Quake
// III servers behind the demo's Quake III master, whose list the server
// keeps too; any other protocol (GameSpy v1, whose masters speak TCP,
// ASE, SA-MP, …), e.servers servers of it (serve --demo-more
// PROTOCOL=N), on no demo master: the page lists them as configured
// servers, and the floor reads them from the page's own configuration.
func (e *env) browserRound(ctx context.Context, hog bool, protocol string) (browserRound, error) {
	r := browserRound{protocol: protocol}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var srv *serveProc
	var err error
	master := ""
	var configured []configServer // a protocol no demo master lists: the page's configured servers
	switch protocol {
	case "a2s", "quake3":
		srv, err = startServe(ctx, e.querylens, 1, "--demo-"+protocol+"-servers", strconv.Itoa(e.servers), "--demo-only", protocol)
		if err == nil {
			master = srv.a2sMaster
			if protocol == "quake3" {
				master = srv.q3Master
			}
			defer srv.stop()
		}
	case "zandronum":
		srv, err = startServe(ctx, e.querylens, e.servers, "--demo-only", protocol)
		if err == nil {
			master = srv.master
			defer srv.stop()
		}
	default: // no demo master lists them: the page's configured servers
		srv, err = startServe(ctx, e.querylens, 1, "--demo-more", protocol+"="+strconv.Itoa(e.servers), "--demo-only", protocol)
		if err == nil {
			defer srv.stop()
			configured, err = pageServers(ctx, srv.url, protocol)
		}
	}
	if err == nil && master != "" { // the server keeps every demo master's list the rounds use
		r.keptMS, err = keepList(ctx, srv.url, protocol, master)
	}
	if err != nil {
		return r, err
	}
	if hog {
		h := startCPUHog(2 * time.Minute)
		defer h.stop()
		if h.pin != nil {
			fmt.Fprintf(e.log, "browser: cpu hog not pinned to CPU %d: %v\n", hogCPU, h.pin)
		}
	}

	metricsBefore, _ := scrapeMetrics(srv.url + "metrics")
	cpuBefore := processCPU(srv.cmd.Process.Pid)
	stats, metrics, err := e.runPage(ctx, srv.url, pageOpts{protocol: protocol})
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
	if configured != nil {
		r.floor, err = nativeFloorList(ctx, protocol, configured, floorConcurrency(protocol))
	} else {
		r.floor, err = nativeFloor(ctx, protocol, master, pageConcurrency)
	}
	return r, err
}

// pageServers reads the browser page's configuration (<script
// id="ql-config">) and returns its configured servers of protocol: what
// the page lists and asks without a master, each with the options it is
// asked with.
func pageServers(ctx context.Context, base, protocol string) ([]configServer, error) {
	html, err := getPage(ctx, base)
	if err != nil {
		return nil, err
	}
	return configServers(html, protocol)
}

// getPage returns the HTML of the page at url.
func getPage(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// configServer is a configured server of the browser page.
type configServer struct {
	addr    string
	options map[string]string // its own query options; nil: none
}

// configServers reads the configured servers of protocol from a browser
// page's HTML (see pageServers).
func configServers(html, protocol string) ([]configServer, error) {
	_, rest, ok := strings.Cut(html, `<script id="ql-config" type="application/json">`)
	js, _, ok2 := strings.Cut(rest, "</script>")
	if !ok || !ok2 {
		return nil, errors.New("the browser page has no ql-config script")
	}
	var cfg struct {
		Servers []struct {
			Protocol string            `json:"protocol"`
			Addr     string            `json:"addr"`
			Options  map[string]string `json:"options"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		return nil, fmt.Errorf("the browser page's ql-config: %w", err)
	}
	var out []configServer
	for _, s := range cfg.Servers {
		if s.Protocol != protocol {
			continue
		}
		cs := configServer{addr: s.Addr}
		if len(s.Options) > 0 {
			cs.options = s.Options
		}
		out = append(out, cs)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the browser page's ql-config lists no %s servers", protocol)
	}
	return out, nil
}

// keepList asks the server for a kept master's list
// (GET /api/v1/masters/{protocol}/{addr}) until it is complete, and
// returns how long that took in ms.
func keepList(ctx context.Context, base, protocol, master string) (float64, error) {
	start := time.Now()
	url := base + "api/v1/masters/" + protocol + "/" + master
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, fmt.Errorf("the kept list of %s: %w", master, err)
		}
		var l struct {
			Complete bool   `json:"complete"`
			Error    string `json:"error"`
			Servers  []any  `json:"servers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&l)
		resp.Body.Close()
		switch {
		case err != nil:
			return 0, fmt.Errorf("the kept list of %s (%s): %w", master, resp.Status, err)
		case resp.StatusCode != http.StatusOK || l.Error != "":
			return 0, fmt.Errorf("the kept list of %s: %s %s", master, resp.Status, l.Error)
		case l.Complete:
			return msSince(start), nil
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return 0, fmt.Errorf("the kept list of %s was not complete (%d servers): %w", master, len(l.Servers), ctx.Err())
		}
	}
}

// listOptions are the options the browser page asks a server of protocol
// with when the server has none of its own (server.Protocol.List: what a
// row shows); nil, the codec's defaults, when the protocol has none.
func listOptions(protocol string) map[string]string {
	p, _ := server.LookupProtocol(protocol)
	return p.List
}

// listOptionsText says in the report how the page asks each server of
// protocol.
func listOptionsText(protocol string) string {
	opts := listOptions(protocol)
	if len(opts) == 0 {
		return "no options: the codec's default"
	}
	keys := slices.Sorted(maps.Keys(opts))
	for i, k := range keys {
		keys[i] = code(k + "=" + opts[k])
	}
	return "the protocol's list options, " + strings.Join(keys, ", ")
}

// a2sAsks names the queries the page's A2S conversation asks, each after
// its challenge, with the list's options.
func a2sAsks() string {
	if listOptions("a2s")["rules"] == "false" {
		return "INFO and PLAYER, each after its challenge (" + listOptionsText("a2s") + ": a row shows no rules; the status page asks them)"
	}
	return "INFO, PLAYER and RULES with their challenges (" + listOptionsText("a2s") + ")"
}

// nativeFloor asks the master for its list and then every listed server
// directly over UDP with the same codec and the options the page uses
// (listOptions), pageConcurrency at a time.
func nativeFloor(ctx context.Context, protocol, master string, concurrency int) (floorRun, error) {
	var f floorRun
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return f, err
	}
	start := time.Now()
	q, err := c.NewQuery(map[string]string{"master": "true"})
	if err != nil {
		return f, err
	}
	u := &netquery.UDP{Timeout: 2 * time.Second}
	if _, err := u.Exchange(ctx, protocol, master, q); err != nil {
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
	f.out, err = farm.QueryAll(ctx, protocol, listOptions(protocol), m.Servers, concurrency, 2*time.Second)
	f.totalMS = msSince(start)
	return f, err
}

// nativeFloorList asks every one of servers directly (over UDP, or TCP
// for a stream protocol: farm.QueryEach) with the options the page asks it
// with: its own, else the list's (listOptions), concurrency at a time: the
// floor of a protocol without a master.
func nativeFloorList(ctx context.Context, protocol string, servers []configServer, concurrency int) (floorRun, error) {
	var f floorRun
	start := time.Now()
	f.listed = len(servers)
	targets := make([]string, len(servers))
	own := map[string]map[string]string{}
	for i, s := range servers {
		targets[i] = s.addr
		if s.options != nil {
			own[s.addr] = s.options
		}
	}
	optsFor := func(t string) map[string]string {
		if o, ok := own[t]; ok {
			return o
		}
		return listOptions(protocol)
	}
	timeout := 2 * time.Second
	if isStream(protocol) {
		timeout = streamTimeout
	}
	out, err := farm.QueryEach(ctx, protocol, optsFor, targets, concurrency, timeout)
	f.out = out
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
	protocol      string             // the rows to wait for; "" is Zandronum
}

func (o pageOpts) proto() string {
	if o.protocol == "" {
		return "zandronum"
	}
	return o.protocol
}

// browserOpts start a headless Chromium with a fresh profile (an empty
// cache) in a 1280×900 window.
func (e *env) browserOpts() []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
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
}

// firstDecodeRuns are the times from navigation to the first decoded rows
// on the browser page: cold is a fresh browser (empty HTTP and code
// caches), warm the same browser opening the page again.
type firstDecodeRuns struct{ cold, warm []float64 }

// firstDecode opens the browser page e.e2eCount times in a fresh
// Chromium, and each time twice more in the same one, on a small demo (the
// start is measured, not the refresh).
func (e *env) firstDecode(ctx context.Context) (firstDecodeRuns, error) {
	var fd firstDecodeRuns
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	srv, err := startServe(ctx, e.querylens, 20)
	if err != nil {
		return fd, err
	}
	defer srv.stop()
	open := func(bctx context.Context) (float64, error) {
		if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
			return 0, err
		}
		if err := chromedp.Do(bctx, chromedp.Navigate(srv.url)); err != nil {
			return 0, err
		}
		v, err := chromedp.Run(bctx, chromedp.Poll[float64](`globalThis.qlFirstDecodeMs`,
			chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
		if err != nil {
			return 0, fmt.Errorf("first decode: %w", err)
		}
		return v, nil
	}
	for range e.e2eCount {
		bctx, stop, err := startBrowser(ctx, e.browserOpts())
		if err != nil {
			return fd, err
		}
		for i := range 3 {
			v, err := open(bctx)
			if err != nil {
				stop()
				return fd, err
			}
			if i == 0 {
				fd.cold = append(fd.cold, v)
			} else {
				fd.warm = append(fd.warm, v)
			}
		}
		stop()
	}
	return fd, nil
}

func (e *env) runPage(ctx context.Context, url string, o pageOpts) (pageStats, map[string]float64, error) {
	var st pageStats
	prof := o.profile
	bctx, stop, err := startBrowser(ctx, e.browserOpts())
	if err != nil {
		return st, nil, err
	}
	defer stop()
	if _, err := chromedp.Call(bctx, performance.Enable, performance.EnableParams{}); err != nil {
		return st, nil, err
	}
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(benchScript, e.servers, o.frameCapMS, o.proto())}); err != nil {
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
			return st, nil, fmt.Errorf("the page did not show all %d %s servers within 60 s (progress: %q)", e.servers, o.proto(), progress)
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
					browserSettles.record(settleBrowser(int(pgid.Load())))
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
	cmd       *exec.Cmd
	url       string // http://127.0.0.1:port/
	master    string // the demo's Zandronum master
	a2sMaster string // the demo's Steam-like master
	q3Master  string // the demo's Quake III master
	done      chan struct{}
}

func startServe(ctx context.Context, bin string, servers int, extra ...string) (*serveProc, error) {
	// No history: filling a synthetic day for every demo server delays the
	// start by tens of seconds, and its sampler would ask the same demo
	// servers through the relay during the refresh (they answer one asker
	// once per 10 s).
	args := append([]string{"serve", "--demo", "--demo-servers", strconv.Itoa(servers), "--addr", "127.0.0.1:0", "--history=false"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
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
			if rest, ok := strings.CutPrefix(l, "demo Steam-like master "); ok {
				var q3 string
				s.a2sMaster, q3, _ = strings.Cut(rest, ",")
				s.q3Master = strings.TrimPrefix(q3, " Quake III master ")
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
	return statCPU(string(b))
}

// statCPU reads utime + stime, in ms, from a /proc/PID/stat line; 0 if the
// line is not one. The command name in parentheses may hold spaces and
// parentheses, so the fields are counted from the last ')'.
func statCPU(s string) float64 {
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
	return parseMetrics(resp.Body)
}

// parseMetrics reads a Prometheus text exposition: each sample's name with
// its labels as written (`name{rule="timeout"}`) → its value. Comments,
// and lines whose value is not a number, are skipped.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
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

// browserRuns are the rounds of the browser section: Zandronum's, and
// each other protocol's, quiet and loaded.
type browserRuns struct {
	zan, zanLoaded []browserRound
	other          map[string]*comparedRuns // by protocol
}

// complete reports whether every one of protocols has a quiet and a
// loaded round.
func (runs *browserRuns) complete(protocols []string) bool {
	for _, p := range protocols {
		quiet, loaded := runs.zan, runs.zanLoaded
		if p != "zandronum" {
			quiet, loaded = runs.quiet(p), runs.loaded(p)
		}
		if len(quiet) == 0 || len(loaded) == 0 {
			return false
		}
	}
	return true
}

func (runs *browserRuns) quiet(protocol string) []browserRound {
	if c := runs.other[protocol]; c != nil {
		return c.quiet
	}
	return nil
}

func (runs *browserRuns) loaded(protocol string) []browserRound {
	if c := runs.other[protocol]; c != nil {
		return c.loaded
	}
	return nil
}

// add files round r of protocol, loaded (hog) or quiet.
func (runs *browserRuns) add(protocol string, hog bool, r browserRound) {
	quiet, loaded := &runs.zan, &runs.zanLoaded
	if protocol != "zandronum" {
		if runs.other == nil {
			runs.other = map[string]*comparedRuns{}
		}
		c := runs.other[protocol]
		if c == nil {
			c = &comparedRuns{protocol: protocol, title: protocolTitle(protocol)}
			runs.other[protocol] = c
		}
		quiet, loaded = &c.quiet, &c.loaded
	}
	if hog {
		*loaded = append(*loaded, r)
	} else {
		*quiet = append(*quiet, r)
	}
}

// comparedRuns are one protocol's refreshes, measured against
// Zandronum's.
type comparedRuns struct {
	protocol      string
	title         string // as the report names the protocol
	quiet, loaded []browserRound
}

// compared lists the protocols with rounds beside Zandronum's, in the
// report's order (browserKnown's).
func (runs browserRuns) compared() []comparedRuns {
	var out []comparedRuns
	for _, p := range browserKnown() {
		if c := runs.other[p]; c != nil && len(c.quiet) > 0 && len(c.loaded) > 0 {
			out = append(out, *c)
		}
	}
	return out
}

// protocolTitle is how the report names a protocol: the codec's title
// (codecs.Codec.Title), A2S's shortened as the goals table has it.
func protocolTitle(protocol string) string {
	if protocol == "a2s" {
		return "A2S"
	}
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return protocol
	}
	return c.Title()
}

// zanCheck is a protocol's refresh on one machine state, beside the
// Zandronum one: both page ÷ floor ratios, their quotient, and whether
// the page ended as many of the protocol's rows online as the floor
// completed conversations.
type zanCheck struct {
	zanRatio, ratio, quotient float64
	online, floorDone         float64 // medians
	notOnline                 string  // the most common states and details of the rows not online, last round
}

// met is the goal: the protocol's own page ÷ floor at most limit (1.3
// quiet, 1.5 with one core busy), on a refresh that answered (page online
// within 5 % of the floor's completed conversations). The quotient against
// Zandronum's ratio is reported beside it, not checked.
func (c zanCheck) met(limit float64) bool { return c.ratio <= limit && c.answered() }

func (c zanCheck) answered() bool { return c.online >= 0.95*c.floorDone }

func checkAgainstZandronum(zan, other []browserRound) zanCheck {
	rendered := func(r browserRound) float64 { return r.page.Marks["rendered"] }
	floorTotal := func(r browserRound) float64 { return r.floor.totalMS }
	medOf := func(rs []browserRound, f func(browserRound) float64) float64 { return bench.Median(collect(rs, f)) }
	c := zanCheck{
		zanRatio:  medOf(zan, rendered) / medOf(zan, floorTotal),
		ratio:     medOf(other, rendered) / medOf(other, floorTotal),
		online:    medOf(other, func(r browserRound) float64 { return float64(r.page.States["online"]) }),
		floorDone: medOf(other, func(r browserRound) float64 { return float64(r.floor.out.Done) }),
	}
	c.quotient = c.ratio / c.zanRatio
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range other[len(other)-1].page.Details {
		top = append(top, kv{k, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n || top[i].n == top[j].n && top[i].k < top[j].k })
	var parts []string
	for _, t := range top[:min(3, len(top))] {
		parts = append(parts, fmt.Sprintf("%d × %s", t.n, strings.TrimSpace(t.k)))
	}
	c.notOnline = strings.Join(parts, "; ")
	return c
}

func browserReport(e *env, runs browserRuns, fd firstDecodeRuns) string {
	rounds, loaded := runs.zan, runs.zanLoaded
	medOf := func(rs []browserRound, f func(browserRound) float64) float64 { return bench.Median(collect(rs, f)) }
	med := func(f func(browserRound) float64) float64 { return medOf(rounds, f) }
	rendered := func(r browserRound) float64 { return r.page.Marks["rendered"] }
	floorTotal := func(r browserRound) float64 { return r.floor.totalMS }
	pageMS, floorMS := med(rendered), med(floorTotal)
	loadedPage, loadedFloor := medOf(loaded, rendered), medOf(loaded, floorTotal)
	// Main-thread script per reply datagram the worker decoded.
	perReply := func(r browserRound) float64 {
		return 1000 * r.metrics["ScriptDuration"] / float64(max(1, r.page.Worker.Replies))
	}
	masterAfterOpen := func(r browserRound) float64 { return r.page.Marks["listed"] - r.page.Hello }
	var b strings.Builder
	fmt.Fprintf(&b, "Per round: %s (a fresh demo: master, %d Zandronum servers, 5 of the other protocols; the page lists the protocol measured alone, so it loads that family's browser module); "+
		"a fresh headless Chromium, once settled (%s), opens the browser page; then, once the demo's 10 s per-IP window has passed, the native floor asks the same master and servers. "+
		"%d quiet and %d loaded rounds, alternating, medians. In a loaded round a Go busy loop pinned to CPU %d (one of the machine's %d) runs from before the page starts until the floor is done, and is stopped by the benchmark.\n\n",
		code(fmt.Sprintf("querylens serve --demo --demo-servers %d --demo-only zandronum --addr 127.0.0.1:0", e.servers)), e.servers, browserSettles.String(), len(rounds), len(loaded), hogCPU, runtime.NumCPU())
	fmt.Fprintf(&b, "- page: from navigation to every one of the %d Zandronum rows in its final state (online, timed out, rate-limited, malformed) and the table rendered after it, read in the page "+
		"(`globalThis.querylensBrowse.view()`, the progress bar, `#counts`, then two animation frames). The relay connection and the decoder run in the page's worker (web/static/worker.js), which asks up to %d servers at a time.\n", e.servers, pageConcurrency)
	fmt.Fprintf(&b, "- The server keeps the master's list (`GET /api/v1/masters/zandronum/…`, as for every Zandronum master); it is fetched once before the page opens (median %s), as a running server has it for every visitor, and the page comes with it: it asks every listed server through the relay as the relay's HELLO arrives, each with the same request bytes.\n",
		ms(medOf(runs.quiet("zandronum"), func(r browserRound) float64 { return r.keptMS })))
	fmt.Fprintf(&b, "- floor: `netquery.UDP` with `codecs.Lookup(\"zandronum\").NewQuery(...)`: the master list, then every listed server, %d at a time, 2 s timeout (the relay's reply window).\n", pageConcurrency)
	if a2s := runs.quiet("a2s"); len(a2s) > 0 {
		fmt.Fprintf(&b, "- A2S: in the same run, alternating with the rounds above (the order of the protocols reverses every round), %s: %d A2S servers behind the demo's Steam-like master, %s in its list with the demo's own (a few slow and silent, as in the wild). "+
			"The server keeps that list (`GET /api/v1/masters/a2s/…`); it is fetched once before the page opens (median %s: one page of 231 addresses per 2 s), as a running server has it for every visitor. "+
			"The page asks every listed server through the relay %s; the floor pages through the master over UDP (`master=true`) and asks every server the same, %d at a time, 2 s timeout.\n",
			code(fmt.Sprintf("serve --demo --demo-servers 1 --demo-a2s-servers %d --demo-only a2s", e.servers)), e.servers,
			num(bench.Median(collect(a2s, func(r browserRound) float64 { return float64(r.floor.listed) }))),
			ms(bench.Median(collect(a2s, func(r browserRound) float64 { return r.keptMS }))), a2sAsks(), pageConcurrency)
	}
	if q3 := runs.quiet("quake3"); len(q3) > 0 {
		fmt.Fprintf(&b, "- Quake III: in the same run, alternating likewise, %s: %d Quake III servers (ioquake3, Xonotic and CoD4 dialects, a few slow and silent) behind the demo's Quake III master, %s in its list with the demo's own. "+
			"The server keeps that list (`GET /api/v1/masters/quake3/…`); it is fetched once before the page opens (median %s), as a running server has it for every visitor. "+
			"The page asks every listed server through the relay one getstatus (%s); the floor asks the master over UDP (`master=true`) and every server the same, %d at a time, 2 s timeout.\n",
			code(fmt.Sprintf("serve --demo --demo-servers 1 --demo-quake3-servers %d --demo-only quake3", e.servers)), e.servers,
			num(bench.Median(collect(q3, func(r browserRound) float64 { return float64(r.floor.listed) }))),
			ms(bench.Median(collect(q3, func(r browserRound) float64 { return r.keptMS }))), listOptionsText("quake3"), pageConcurrency)
	}
	if gs1 := runs.quiet("gamespy1"); len(gs1) > 0 {
		fmt.Fprintf(&b, "- GameSpy v1: in the same run, alternating likewise, %s: %d GameSpy v1 servers (UT99 and Battlefield 1942 dialects, replies in two or three datagrams, a few slow and silent), %s configured rows with the demo's own. "+
			"GameSpy v1 has no UDP master: the page lists them from its configuration (as `--server gamespy1=HOST:PORT` would) and asks each through the relay `\\status\\` (%s); "+
			"the floor reads the same addresses from the page's configuration (`<script id=\"ql-config\">`) and asks every server the same, %d at a time, 2 s timeout (its \"master list\" is none).\n",
			code(fmt.Sprintf("serve --demo --demo-servers 1 --demo-more gamespy1=%d --demo-only gamespy1", e.servers)), e.servers,
			num(bench.Median(collect(gs1, func(r browserRound) float64 { return float64(r.floor.listed) }))), listOptionsText("gamespy1"), pageConcurrency)
	}
	for _, c := range runs.compared() {
		switch c.protocol {
		case "a2s", "quake3", "gamespy1": // above
			continue
		}
		if isStream(c.protocol) {
			fmt.Fprintf(&b, "- %s: in the same run, alternating likewise, %s: %d %s servers over TCP (the demo's normal %s servers in turn: vanilla, Forge, and 1.6 asked with `legacy=true`; a few slow and silent), %s configured rows with the demo's own. "+
				"No demo master lists them: the page lists them from its configuration and asks each through the relay with an EXCHANGE (%s; a server's own options where it has them): the relay holds the TCP conversation and streams the reply back as CHUNKs. "+
				"The page's worker asks up to %d servers at once; its relay client starts %d EXCHANGEs (the relay's default `--tcp-per-client`, which HELLO does not carry), holds the others, and raises its cap by one as each ends, up to what the relay refuses past: %d for a loopback client of `serve --demo` (in place of `--tcp-per-client`), also the whole relay's `--tcp-max` (tcp-cap); so the page gets up to %d at a time; "+
				"the floor reads the same servers and options from the page's configuration and asks each over a TCP connection of its own (`netquery.Converse`, as `netquery.TCP` does), %d at a time, %s per exchange (the relay's `--tcp-deadline`; its \"master list\" is none).\n",
				c.title, code(fmt.Sprintf("serve --demo --demo-servers 1 --demo-more %s=%d --demo-only %s", c.protocol, e.servers, c.protocol)), e.servers, c.title, c.protocol,
				num(bench.Median(collect(c.quiet, func(r browserRound) float64 { return float64(r.floor.listed) }))), listOptionsText(c.protocol),
				pageConcurrency, wire.DefaultStreamsPerClient, pageStreams, pageStreams, pageStreams, streamTimeout)
			continue
		}
		fmt.Fprintf(&b, "- %s: in the same run, alternating likewise, %s: %d %s servers (the demo's normal %s servers in turn, a few slow and silent), %s configured rows with the demo's own. "+
			"No demo master lists them: the page lists them from its configuration (as `--server %s=HOST:PORT` would) and asks each through the relay (%s); "+
			"the floor reads the same addresses from the page's configuration (`<script id=\"ql-config\">`) and asks every server the same, %d at a time, 2 s timeout (its \"master list\" is none).\n",
			c.title, code(fmt.Sprintf("serve --demo --demo-servers 1 --demo-more %s=%d --demo-only %s", c.protocol, e.servers, c.protocol)), e.servers, c.title, c.protocol,
			num(bench.Median(collect(c.quiet, func(r browserRound) float64 { return float64(r.floor.listed) }))), c.protocol, listOptionsText(c.protocol), pageConcurrency)
	}
	b.WriteString("\n")
	t := newTable("client", "machine", "master list", "all servers final", "answered", "online", "page ÷ floor")
	type set struct {
		proto, name, transport string
		rs                     []browserRound
	}
	sets := []set{{"", "quiet", "UDP", rounds}, {"", "one core busy", "UDP", loaded}}
	for _, c := range runs.compared() {
		transport := "UDP"
		if isStream(c.protocol) {
			transport = "TCP"
		}
		sets = append(sets, set{c.title + ": ", "quiet", transport, c.quiet}, set{c.title + ": ", "one core busy", transport, c.loaded})
	}
	for _, set := range sets {
		m := func(f func(browserRound) float64) float64 { return medOf(set.rs, f) }
		t.add(set.proto+"native floor (direct "+set.transport+")", set.name, ms(m(func(r browserRound) float64 { return r.floor.masterMS })), ms(m(floorTotal)),
			fmt.Sprintf("%s / %s", num(m(func(r browserRound) float64 { return float64(r.floor.out.Received) })), num(m(func(r browserRound) float64 { return float64(r.floor.listed) }))),
			num(m(func(r browserRound) float64 { return float64(r.floor.out.Done) })), "")
		t.add(set.proto+"browser page (relay + worker + wasm + table)", set.name, ms(m(func(r browserRound) float64 { return r.page.Marks["listed"] })), ms(m(rendered)),
			fmt.Sprintf("%s / %s", num(m(func(r browserRound) float64 { return float64(r.page.Answered) })), num(m(func(r browserRound) float64 { return float64(r.page.Asked) }))),
			num(m(func(r browserRound) float64 { return float64(r.page.States["online"]) })), ratio(m(rendered)/m(floorTotal)))
	}
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nPer round, page ÷ floor: quiet %s; loaded %s.", perRound(collect(rounds, rendered), collect(rounds, floorTotal)), perRound(collect(loaded, rendered), collect(loaded, floorTotal)))
	for _, c := range runs.compared() {
		fmt.Fprintf(&b, " %s: quiet %s; loaded %s.", c.title, perRound(collect(c.quiet, rendered), collect(c.quiet, floorTotal)), perRound(collect(c.loaded, rendered), collect(c.loaded, floorTotal)))
	}
	b.WriteString(" The floor's \"answered\" counts reply datagrams (segmented replies bring several), its \"online\" the conversations completed; the page's counts conversations (progress bar), including the demo's other rows, its \"online\" the measured protocol's rows online.\n\n")

	b.WriteString("### Goals\n\n")
	coldMS, warmMS := bench.Median(fd.cold), bench.Median(fd.warm)
	for _, g := range []struct {
		met                   bool
		text                  string
		measure, goal, result string // for the goals table; "" where the start section reports the goal
	}{
		{pageMS <= 1.3*floorMS, fmt.Sprintf("refresh within 1.3× of the floor on a quiet machine: %s.", ratio(pageMS/floorMS)),
			fmt.Sprintf("refreshing %d Zandronum servers in the browser, quiet machine", e.servers), "≤ 1.3× the native floor",
			fmt.Sprintf("%s (%s against %s)", ratio(pageMS/floorMS), ms(pageMS), ms(floorMS))},
		{loadedPage <= 1.5*loadedFloor, fmt.Sprintf("refresh within 1.5× of the floor with one core busy: %s.", ratio(loadedPage/loadedFloor)),
			fmt.Sprintf("refreshing %d Zandronum servers in the browser, one core busy", e.servers), "≤ 1.5× the native floor",
			fmt.Sprintf("%s (%s against %s)", ratio(loadedPage/loadedFloor), ms(loadedPage), ms(loadedFloor))},
	} {
		b.WriteString("- " + goal(g.met, g.text) + "\n")
		if g.measure != "" {
			e.addGoal(g.met, g.measure, g.goal, g.result)
		}
	}
	for _, cr := range runs.compared() {
		for _, set := range []struct {
			machine, short string
			limit          float64
			zan, other     []browserRound
		}{{"a quiet machine", "quiet", 1.3, rounds, cr.quiet}, {"one core busy", "one core busy", 1.5, loaded, cr.loaded}} {
			c := checkAgainstZandronum(set.zan, set.other)
			text := fmt.Sprintf("the %s refresh within %g× of its own floor, %s: %s (%s against %s; Zandronum's %s)", cr.title, set.limit, set.machine, ratio(c.ratio),
				ms(medOf(set.other, rendered)), ms(medOf(set.other, floorTotal)), ratio(c.zanRatio))
			result := fmt.Sprintf("%s (%s against %s)", ratio(c.ratio), ms(medOf(set.other, rendered)), ms(medOf(set.other, floorTotal)))
			if !c.answered() {
				text += fmt.Sprintf(", but the page ended %s %s rows online where the floor completed %s conversations (last round: %s)", num(c.online), cr.title, num(c.floorDone), c.notOnline)
				result += fmt.Sprintf(", page online %s of the floor's %s", num(c.online), num(c.floorDone))
			}
			b.WriteString("- " + goal(c.met(set.limit), text+".") + "\n")
			e.addGoal(c.met(set.limit), fmt.Sprintf("refreshing %d %s servers in the browser, %s", e.servers, cr.title, set.short),
				fmt.Sprintf("≤ %g× its own native floor, as many rows online as the floor answered", set.limit), result)
		}
	}
	for _, g := range []struct {
		met                   bool
		text                  string
		measure, goal, result string // for the goals table; "" where the start section reports the goal
	}{
		{med(perReply) <= 0.3, fmt.Sprintf("main-thread script per reply ≤ 0.3 ms: %.3f ms quiet, %.3f ms loaded (Chrome's ScriptDuration of the page's main thread over the whole run, ÷ the reply datagrams the worker decoded; it includes the benchmark's own per-frame check).",
			med(perReply), medOf(loaded, perReply)),
			"the page's main-thread script per reply, quiet", "≤ 0.3 ms", fmt.Sprintf("%.3f ms", med(perReply))},
		{med(masterAfterOpen) <= 100, fmt.Sprintf("master list decoded and its rows shown ≤ 100 ms after the relay connection opens: %s (quiet), %s (loaded), from the page's ql-relay-hello mark to the first Zandronum row in the page's view (the server keeps the list and the page comes with it: what is left is the page's own start to its first row).",
			ms(med(masterAfterOpen)), ms(medOf(loaded, masterAfterOpen))),
			"the master's rows shown after the relay connection opens, quiet", "≤ 100 ms", ms(med(masterAfterOpen))},
		{coldMS <= 250, fmt.Sprintf("first decode ≤ 250 ms after navigation with a cold cache: %s (runs %s).", ms(coldMS), msList(fd.cold)), "", "", ""},
		{warmMS <= 120, fmt.Sprintf("first decode ≤ 120 ms after navigation with a warm cache: %s (runs %s).", ms(warmMS), msList(fd.warm)), "", "", ""},
	} {
		if e.noTail && strings.HasPrefix(g.text, "first decode") {
			// -rounds-only measured no first decode: no goal met or missed.
			b.WriteString("- Not measured (-rounds-only): " + g.text[:strings.Index(g.text, ":")] + ".\n")
			continue
		}
		b.WriteString("- " + goal(g.met, g.text) + "\n")
		if g.measure != "" {
			e.addGoal(g.met, g.measure, g.goal, g.result)
		}
	}
	b.WriteString("\nFirst decode: `globalThis.qlFirstDecodeMs`, set when the first batch of decoded rows reaches the page, on a 20-server demo; cold is a fresh Chromium profile, warm the same browser opening the page again (HTTP cache and V8's wasm code cache warm).\n\n")

	// Where the page's time goes.
	b.WriteString("### Where the page's time goes (quiet rounds)\n\n")
	b.WriteString("The worker's steps are taken from its own clock (performance.timeOrigin + now) and placed on the page's timeline.\n\n")
	b.WriteString(stepsTable(rounds))
	b.WriteString("\n")
	t = newTable("measure (medians)", "quiet", "one core busy")
	both := func(name string, f func(browserRound) float64, format func(float64) string) {
		t.add(name, format(med(f)), format(medOf(loaded, f)))
	}
	both("page main thread: script (Chrome ScriptDuration)", func(r browserRound) float64 { return 1000 * r.metrics["ScriptDuration"] }, ms)
	both("page main thread: all tasks (TaskDuration)", func(r browserRound) float64 { return 1000 * r.metrics["TaskDuration"] }, ms)
	both("page main thread: layout + style", func(r browserRound) float64 {
		return 1000 * (r.metrics["LayoutDuration"] + r.metrics["RecalcStyleDuration"])
	}, ms)
	both("animation frames during the refresh", func(r browserRound) float64 { return float64(r.page.Frames) }, num)
	both("one re-filter + re-sort + render of the 1,005 rows (querylensBrowse.rebuild(), after the refresh)", func(r browserRound) float64 { return r.page.RebuildMS }, ms)
	both("page: long tasks (> 50 ms)", func(r browserRound) float64 { return r.page.LongTasks }, ms)
	both("worker: reply datagrams decoded", func(r browserRound) float64 { return float64(r.page.Worker.Replies) }, num)
	both("worker → page: batches of rows", func(r browserRound) float64 { return float64(r.page.Worker.Batches) }, num)
	both("worker: calls into the decoder (querylens.batch)", func(r browserRound) float64 { return float64(r.page.Worker.DecoderCalls) }, num)
	both("worker: decoder requests (open, step, finish) per call", func(r browserRound) float64 {
		if r.page.Worker.DecoderCalls == 0 {
			return 0
		}
		return float64(r.page.Worker.DecoderRequests) / float64(r.page.Worker.DecoderCalls)
	}, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) })
	both("serve process CPU (relay + web + demo servers) during the refresh", func(r browserRound) float64 { return r.serveCPU }, ms)
	for _, k := range []string{"querylens_relay_queries_forwarded_total", "querylens_relay_replies_total", "querylens_relay_cache_hits_total"} {
		both("relay: "+strings.TrimPrefix(k, "querylens_relay_"), func(r browserRound) float64 { return r.relayStats[k] }, num)
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
		t.add("relay: refusals, drops, timeouts (quiet)", strings.Join(refusals, ", "), "")
	}
	states := func(rs []browserRound) string {
		var sl []string
		for k, v := range rs[len(rs)-1].page.States {
			sl = append(sl, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(sl)
		return strings.Join(sl, ", ")
	}
	t.add("row states (last round)", states(rounds), states(loaded))
	for _, c := range runs.compared() {
		t.add(c.title+": row states (last round)", states(c.quiet), states(c.loaded))
	}
	b.WriteString(t.String())
	// A stream protocol's rows take another path (EXCHANGE, the relay's
	// TCP limits): its own steps.
	for _, c := range runs.compared() {
		if !isStream(c.protocol) {
			continue
		}
		fmt.Fprintf(&b, "\n### Where the %s page's time goes (quiet rounds)\n\n", c.title)
		b.WriteString(stepsTable(c.quiet))
		b.WriteString("\n")
		t = newTable("measure (medians)", "quiet", "one core busy")
		for _, m := range []struct {
			name string
			f    func(browserRound) float64
		}{
			{"the native floor: every server final", floorTotal},
			{"worker: conversations", func(r browserRound) float64 { return r.page.Worker.Timing["conversations"] }},
			{"worker: time asks waited to be sent (relay.js queue: in-flight places, TCP exchanges held), in all", func(r browserRound) float64 { return r.page.Worker.Timing["relayQueuedMs"] }},
			{"worker: time from an ask to its reply, in all", func(r browserRound) float64 { return r.page.Worker.Timing["replyWaitMs"] }},
			{"relay: TCP exchanges started", func(r browserRound) float64 { return r.relayStats["querylens_relay_tcp_exchanges_total"] }},
			{"relay: EXCHANGEs refused, tcp-cap (the relay's 256 in progress in all)", func(r browserRound) float64 {
				return r.relayStats[`querylens_relay_refusals_total{rule="tcp-cap"}`]
			}},
			{"relay: EXCHANGEs refused, tcp-per-client", func(r browserRound) float64 {
				return r.relayStats[`querylens_relay_refusals_total{rule="tcp-per-client"}`]
			}},
		} {
			format := num
			if strings.HasSuffix(m.name, "in all") || strings.HasPrefix(m.name, "the native floor") {
				format = ms
			}
			t.add(m.name, format(medOf(c.quiet, m.f)), format(medOf(c.loaded, m.f)))
		}
		b.WriteString(t.String())
	}
	return b.String()
}

// stepsTable is where the page's time went in rounds rs (medians): the
// page's and the worker's steps in the order they happened, each with the
// time since the one before. The rows come with the page (a kept list, or
// the configured servers).
func stepsTable(rs []browserRound) string {
	med := func(f func(browserRound) float64) float64 { return bench.Median(collect(rs, f)) }
	ready, first, listed := "the page hears the worker is ready", "worker: first results sent to the page", "the first of the protocol's rows shown"
	t := newTable("step (ms since navigation, medians)", "at", "took")
	prev := 0.0
	type step struct {
		name string
		at   float64
	}
	var steps []step
	for _, st := range []struct {
		name string
		at   func(browserRound) float64
	}{
		{"the page's HTML received", func(r browserRound) float64 { return r.page.HTML }},
		{"the page's script running, worker created", func(r browserRound) float64 { return r.page.WorkerCreated }},
		{"worker script running", func(r browserRound) float64 { return r.page.Worker.Times["script"] }},
		{"worker: relay client and helpers imported", func(r browserRound) float64 { return r.page.Worker.Times["modules"] }},
		{"worker: relay connected (HELLO)", func(r browserRound) float64 { return r.page.Worker.Times["open"] }},
		{"the page hears of the HELLO", func(r browserRound) float64 { return r.page.Hello }},
		{"worker: wasm module compiled (a family's by the worker, the combined one by the page) and in the worker", func(r browserRound) float64 { return r.page.Worker.Times["module"] }},
		{"worker: decoder instantiated and running", func(r browserRound) float64 { return r.page.Worker.Times["decoder"] }},
		{ready, func(r browserRound) float64 { return r.page.Marks["ready"] }},
		{first, func(r browserRound) float64 { return r.page.Worker.Times["firstResults"] }},
		{listed, func(r browserRound) float64 { return r.page.Marks["listed"] }},
		{"half of the servers final", func(r browserRound) float64 { return r.page.Marks["half"] }},
		{"every server final", func(r browserRound) float64 { return r.page.Marks["decoded"] }},
		{"table rendered", func(r browserRound) float64 { return r.page.Marks["rendered"] }},
	} {
		steps = append(steps, step{st.name, med(st.at)})
	}
	// Some steps run side by side (the relay connects while the wasm
	// compiles): in the order they happened, each with the time since the
	// one before.
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	for _, st := range steps {
		t.add(st.name, ms(st.at), ms(st.at-prev))
		prev = st.at
	}
	return t.String()
}

// msList formats runs as "310, 290 and 305 ms".
func msList(vs []float64) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, strconv.FormatFloat(v, 'f', 0, 64))
	}
	return strings.Join(parts, ", ") + " ms"
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
	all, err := nativeFloor(ctx2, "zandronum", srv.master, e.servers)
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
