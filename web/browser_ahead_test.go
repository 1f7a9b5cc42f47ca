package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// holdModule runs before the page's scripts: the browser module cannot be
// compiled, so no decoder can start, until the test calls
// window.__qlReleaseModule().
const holdModule = `(() => {
  const compile = WebAssembly.compileStreaming;
  let release = null, held = null;
  window.__qlReleaseModule = () => { release = true; held?.(); };
  WebAssembly.compileStreaming = (resp) => new Promise((resolve, reject) => {
    held = () => compile.call(WebAssembly, resp).then(resolve, reject);
    if (release) held();
  });
})();`

// openHeld opens url in a new tab whose browser module is held
// (holdModule) until the test releases it.
func openHeld(t *testing.T, url string) context.Context {
	t.Helper()
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: holdModule}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// TestBrowserMastersAskedBeforeModule: the masters' lists do not wait for
// the browser module. The QuakeWorld master's first request (built by the
// server, in the page's configuration: a master the page asks itself)
// leaves through the relay while the
// module cannot even be compiled, and a kept list is read and shown; once
// the module is in, the decoder reads the master's replies to that very
// request (it sends no second one), and the master's servers are listed
// and asked.
func TestBrowserMastersAskedBeforeModule(t *testing.T) {
	needWasm(t)
	ctx0, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx0, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 4})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	own := []netip.AddrPort{netip.MustParseAddrPort(d.QuakeWorldMaster())}
	for _, tg := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
	}
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	kept, err := server.ParseMasterSpec(`a2s=127.0.0.1:27011?filter=\appid\730&label=Steam`)
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "quakeworld", Addr: d.QuakeWorldMaster()}, kept},
		MasterLists: newFakeLists(t), Logger: logger, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	listed := 0
	for _, tg := range d.Targets() {
		if tg.Protocol == "quakeworld" {
			listed++
		}
	}
	if listed == 0 {
		t.Fatal("the demo has no QuakeWorld server for its master to list")
	}

	ctx := openHeld(t, base+"/")
	key := "master:quakeworld/" + d.QuakeWorldMaster()
	waitFor(t, ctx, "the master's request sent, the kept list shown", `(globalThis.querylensBrowse?.stats().sentAhead ?? []).includes(`+jsString(key)+`) && querylensBrowse.counts().shown === 50`, 20*time.Second)
	type state struct {
		Compiled, Ready bool
		Listed          int
	}
	before := eval[state](t, ctx, `({compiled: performance.getEntriesByName("ql-wasm-compiled").length > 0, ready: querylensBrowse.ready === true,
		listed: querylensBrowse.view().filter(r => r.protocol === "quakeworld").length})`)
	if before.Compiled || before.Ready || before.Listed != 0 {
		t.Fatalf("while the module is held: compiled %v, decoder ready %v, %d of the master's servers listed; want none of these", before.Compiled, before.Ready, before.Listed)
	}

	eval[bool](t, ctx, `(window.__qlReleaseModule(), true)`)
	waitFor(t, ctx, "the master's servers listed and answered", `querylensBrowse.ready === true && querylensBrowse.view().filter(r => r.protocol === "quakeworld" && r.state !== "pending" && r.state !== "querying").length === `+strconv.Itoa(listed), 20*time.Second)
	type ahead struct{ Sent, Adopted int }
	got := eval[struct {
		Ahead     ahead
		SentAhead []string
	}](t, ctx, `querylensBrowse.stats()`)
	if got.Ahead != (ahead{Sent: 1, Adopted: 1}) || len(got.SentAhead) != 1 {
		t.Errorf("queries sent before the decoder was ready %+v (%q): want the master's one, taken over by its conversation", got.Ahead, got.SentAhead)
	}
	if m := eval[string](t, ctx, `document.querySelector("[data-testid=fatal]")?.textContent ?? ""`); m != "" {
		t.Errorf("the page failed: %s", m)
	}
}
