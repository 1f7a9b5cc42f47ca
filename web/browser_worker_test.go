package web_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// noMainThreadDecoding runs before the page's scripts: it counts the
// WebSockets the page's own thread opens, and watches its workers.
const noMainThreadDecoding = `(() => {
  window.__qlMain = { sockets: 0 };
  const WS = window.WebSocket;
  window.WebSocket = class extends WS { constructor(...a) { super(...a); window.__qlMain.sockets++; } };
  ` + watchWorkers + `
})();`

// TestBrowserWorker checks that the server browser decodes off its main
// thread: the relay connection and the decoder live in the worker, the
// page's thread never loads the decoder (no globalThis.querylens) nor opens
// a WebSocket, and the rows arrive in fewer batches than conversations.
func TestBrowserWorker(t *testing.T) {
	needWasm(t)
	st := startStack(t, 24)
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: noMainThreadDecoding}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
		t.Fatal(err)
	}
	want := len(normalTargets(st.Demo))
	waitFor(t, ctx, "the demo's servers online", `(globalThis.querylensBrowse?.view() ?? []).filter(r => r.state === "online").length >= `+strconv.Itoa(want), 20*time.Second)
	waitFor(t, ctx, "every server final", `querylensBrowse.view().every(r => r.state !== "pending" && r.state !== "querying")`, 15*time.Second)
	type stats struct {
		Asked, Done, OpenedFirst, Replies, Batches int
	}
	s := eval[stats](t, ctx, `querylensBrowse.stats()`)
	rows := eval[int](t, ctx, `querylensBrowse.view().length`)
	t.Logf("worker: %+v for %d rows", s, rows)
	if s.Done < rows || s.Asked < rows {
		t.Errorf("the worker asked %d and finished %d conversations for %d rows", s.Asked, s.Done, rows)
	}
	// boot.js had the worker ask the master and the configured servers
	// before the page's script ran; the page's own asks for them were
	// dropped, so each conversation ran once: every row and the master.
	if s.Asked != rows+1 {
		t.Errorf("the worker was asked for %d conversations for %d rows and 1 master, want each once", s.Asked, rows)
	}
	// The start ran a few conversations alone (FIRST_ASKS in worker.js):
	// the first row did not wait for every server's first decoding.
	if s.OpenedFirst < 1 || s.OpenedFirst > 8 {
		t.Errorf("%d conversations had started when the first result was posted, want 1 to 8 (of %d)", s.OpenedFirst, s.Asked)
	}
	if s.Batches < 1 || s.Batches >= s.Done {
		t.Errorf("%d conversations came back in %d batches, want fewer batches than conversations", s.Done, s.Batches)
	}
	// boot.js started both workers, the decoder's first, before the
	// page's module script (parsed after it) was in the document; the page
	// adopted the view worker rather than starting another.
	if got, want := eval[[]string](t, ctx, `window.__qlWorkers`), []string{"querylens decoder (boot)", "querylens view (boot)"}; !slices.Equal(got, want) {
		t.Errorf("the page started the workers %q, want %q", got, want)
	}
	if n := eval[int](t, ctx, `window.__qlMain.sockets`); n != 0 {
		t.Errorf("the page's main thread opened %d WebSockets; the relay belongs to the worker", n)
	}
	if eval[bool](t, ctx, `"querylens" in globalThis`) {
		t.Error("the decoder was loaded on the page's main thread")
	}
	t.Logf("start: %s", eval[string](t, ctx, `(() => { const n = performance.getEntriesByType("navigation")[0]; const m = (k) => Math.round(performance.getEntriesByName(k)[0]?.startTime ?? -1);
		return JSON.stringify({ responseEnd: Math.round(n.responseEnd), domInteractive: Math.round(n.domInteractive), dcl: Math.round(n.domContentLoadedEventStart), worker: m("ql-worker-created"), hello: m("ql-relay-hello"), ready: m("ql-decoder-ready"), firstDecode: Math.round(globalThis.qlFirstDecodeMs), times: querylensBrowse.stats().times }); })()`))
	t.Logf("resources: %s", eval[string](t, ctx, `JSON.stringify(performance.getEntriesByType("resource").map(e => [e.name.replace(/.*\//, ""), Math.round(e.startTime), Math.round(e.responseEnd)]))`))
	// The module is fetched once: boot.js's fetch takes the preload (a
	// <link rel=preload> after boot.js would find it taken and fetch the
	// module again).
	if n := eval[int](t, ctx, `performance.getEntriesByType("resource").filter(e => /querylens\.[0-9a-f]+\.wasm$/.test(e.name)).length`); n != 1 {
		t.Errorf("the page fetched the browser module %d times, want once", n)
	}
	// The relay indicator works through the worker (PING/PONG there).
	waitFor(t, ctx, "the relay latency in the header", `/relay: [\d.]+ ms/.test(document.getElementById("top-status").textContent)`, 5*time.Second)
}

// watchWorkers, run before the page's scripts, names in
// window.__qlWorkers the workers the page starts, in order ("querylens
// decoder", "querylens view"; " (boot)" when started before the page's
// module script was in the document), and calls window.__qlOnPrepare
// (when set) with the prepare boot.js gives the decoding worker in its
// name ("querylens decoder " and JSON).
const watchWorkers = `{
  window.__qlWorkers = [];
  const W = window.Worker;
  window.Worker = class extends W {
    constructor(url, opts) {
      super(url, opts);
      const name = opts?.name ?? "";
      window.__qlWorkers.push(name.slice(0, "querylens decoder".length) + (document.querySelector("script[type=module][src]") ? "" : " (boot)"));
      if (name.startsWith("querylens decoder {")) window.__qlOnPrepare?.(JSON.parse(name.slice("querylens decoder ".length)));
    }
  };
}`

// recordAsks runs before the page's scripts: for the prepare boot.js
// gives the worker and every message the page posts to it, it keeps the type, the keys asked and how many
// Zandronum rows the page's table held at that moment.
const recordAsks = `(() => {
  window.__qlPosts = [];
  ` + watchWorkers + `
  window.__qlOnPrepare = (m) => window.__qlPosts.push({ type: "prepare", keys: (m.asks ?? []).map((a) => a.key), zandronum: 0, at: performance.now() });
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    const zandronum = (globalThis.querylensBrowse?.view() ?? []).filter((r) => r.protocol === "zandronum").length;
    window.__qlPosts.push({ type: m?.type, keys: (m?.asks ?? []).map((a) => a.key), zandronum, at: performance.now() });
    return post.call(this, m, ...rest);
  };
})();`

// TestBrowserMasterListShownBeforeAsked checks the order of the start: the
// worker is created by boot.js (inlined at the top of the page) before the
// page's own script runs, and the
// servers of the master's list are in the page's table before the page asks
// the worker to query them (a thousand queries starting at once would
// otherwise hold back the frame that draws the list).
func TestBrowserMasterListShownBeforeAsked(t *testing.T) {
	needWasm(t)
	st := startStack(t, 12)
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: recordAsks}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "every server final", `(globalThis.querylensBrowse?.view() ?? []).filter(r => r.protocol === "zandronum").length >= 12 && querylensBrowse.view().every(r => r.state !== "pending" && r.state !== "querying")`, 20*time.Second)
	type post struct {
		Type      string
		Keys      []string
		Zandronum int
		At        float64
	}
	posts := eval[[]post](t, ctx, `window.__qlPosts`)
	if len(posts) == 0 || posts[0].Type != "prepare" {
		t.Fatalf("what the page first gave its worker is not prepare: %+v", posts)
	}
	listed := 0
	for _, p := range posts {
		if p.Type != "ask" {
			continue
		}
		n := 0
		for _, k := range p.Keys {
			if strings.HasPrefix(k, "zandronum/") {
				n++
			}
		}
		if n == 0 {
			continue
		}
		listed += n
		if p.Zandronum < n {
			t.Errorf("the page asked %d Zandronum servers when its table held %d of them: ask before show", n, p.Zandronum)
		}
	}
	if listed < 12 {
		t.Errorf("the page asked %d of the master's 12 servers", listed)
	}
	// boot.js, inlined, created the worker before the relay connection
	// opened (the worker opens it).
	order := eval[[]float64](t, ctx, `[performance.getEntriesByName("ql-worker-created")[0]?.startTime ?? -1, performance.getEntriesByName("ql-relay-hello")[0]?.startTime ?? -1]`)
	if order[0] < 0 || order[1] < order[0] {
		t.Errorf("worker created at %.0f ms, relay HELLO at %.0f ms: want the worker first", order[0], order[1])
	}
}

// TestBrowserDecoderFailure checks that a decoder that cannot be compiled
// is reported on the page, whether it fails before or after the page's own
// script runs, instead of leaving every row querying.
func TestBrowserDecoderFailure(t *testing.T) {
	needWasm(t)
	st := startStack(t, 4)
	for _, tc := range []struct {
		name, script string
	}{
		{"before the page's script", `WebAssembly.compileStreaming = () => Promise.reject(new Error("compile refused by the test"));`},
		{"after the page's script", `WebAssembly.compileStreaming = () => new Promise((_, reject) => addEventListener("load", () => setTimeout(() => reject(new Error("compile refused by the test")), 50)));`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tab(t)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: tc.script}); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the failure shown", `globalThis.querylensBrowse?.ready === true && !!document.querySelector("[data-testid=fatal]")`, 10*time.Second)
			if msg := eval[string](t, ctx, `document.querySelector("[data-testid=fatal]").textContent`); !strings.Contains(msg, "compile refused by the test") {
				t.Errorf("the page says %q, want the compile's error", msg)
			}
			if got := eval[string](t, ctx, `document.getElementById("progress-text").textContent`); got != "Not connected" {
				t.Errorf("progress text %q, want Not connected", got)
			}
		})
	}
}
