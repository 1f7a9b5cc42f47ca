package web_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// noMainThreadDecoding runs before the page's scripts: it counts the
// WebSockets and the decoders the page's own thread creates.
const noMainThreadDecoding = `(() => {
  window.__qlMain = { sockets: 0 };
  const WS = window.WebSocket;
  window.WebSocket = class extends WS { constructor(...a) { super(...a); window.__qlMain.sockets++; } };
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
		Asked, Done, Replies, Batches int
	}
	s := eval[stats](t, ctx, `querylensBrowse.stats()`)
	rows := eval[int](t, ctx, `querylensBrowse.view().length`)
	t.Logf("worker: %+v for %d rows", s, rows)
	if s.Done < rows || s.Asked < rows {
		t.Errorf("the worker asked %d and finished %d conversations for %d rows", s.Asked, s.Done, rows)
	}
	if s.Batches < 1 || s.Batches >= s.Done {
		t.Errorf("%d conversations came back in %d batches, want fewer batches than conversations", s.Done, s.Batches)
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
	// The relay indicator works through the worker (PING/PONG there).
	waitFor(t, ctx, "the relay latency in the header", `/relay: [\d.]+ ms/.test(document.getElementById("top-status").textContent)`, 5*time.Second)
}
