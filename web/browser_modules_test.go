package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/internal/wasmmodule"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// moduleLog records the browser modules a server sent, by file name
// ("querylens-zandronum.wasm"), each once, in the order first asked.
type moduleLog struct {
	mu    sync.Mutex
	names []string
}

func (l *moduleLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; strings.HasPrefix(p, "/static/") && path.Ext(p) == ".wasm" {
			// "querylens-x.<hash>.wasm" → "querylens-x.wasm"
			stem := strings.TrimSuffix(path.Base(p), ".wasm")
			if i := strings.LastIndexByte(stem, '.'); i > 0 {
				stem = stem[:i]
			}
			l.mu.Lock()
			if n := stem + ".wasm"; !slices.Contains(l.names, n) {
				l.names = append(l.names, n)
			}
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (l *moduleLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names)
}

// familyModule is the file name of the module of protocol's family.
func familyModule(t *testing.T, protocol string) string {
	t.Helper()
	c, err := codecs.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	return wasmmodule.FamilyName(wasmmodule.FamilyOf(c))
}

// moduleStack serves the demo's servers with the given configuration,
// recording the modules sent.
func moduleStack(t *testing.T, d *demo.Demo, masters []server.MasterSpec, servers []server.Ref) (string, *moduleLog) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	own := []netip.AddrPort{netip.MustParseAddrPort(d.Master())}
	for _, tg := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
	}
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	h, err := web.New(web.Config{Exchanger: rs, Masters: masters, Servers: servers, Logger: logger, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	l := &moduleLog{}
	return serve(t, rs, l.wrap(h)), l
}

// uncachedTab is a tab whose requests skip the HTTP cache, so that the
// server sees every module the page (and its worker) loads, whatever an
// earlier test loaded.
func uncachedTab(t *testing.T) context.Context {
	t.Helper()
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func startDemo(t *testing.T, servers int) *demo.Demo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: servers})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestBrowserModulesByFamily: a browse page whose only master is of one
// family runs that family's module alone, fetched by its worker; a server of a
// second family added by hand loads that family's module into the worker
// beside it; one of a third family loads the combined module (the worker
// keeps at most two family modules), and every row is decoded.
func TestBrowserModulesByFamily(t *testing.T) {
	needWasm(t)
	d := startDemo(t, 8)
	const masterProtocol = "zandronum"
	base, log := moduleStack(t, d, []server.MasterSpec{{Protocol: masterProtocol, Addr: d.Master()}}, nil)
	first := familyModule(t, masterProtocol)

	// Two servers of two more families, which the master does not list.
	var extra []demo.Target
	fams := map[string]bool{first: true}
	for _, tg := range normalTargets(d) {
		if f := familyModule(t, tg.Protocol); !fams[f] && tg.Options == nil && len(extra) < 2 {
			fams[f] = true
			extra = append(extra, tg)
		}
	}
	if len(extra) < 2 {
		t.Fatalf("the demo has servers of too few families: %v", fams)
	}

	ctx := uncachedTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	online := func(protocol string) string {
		return `(globalThis.querylensBrowse?.view() ?? []).some(r => r.protocol === ` + jsString(protocol) + ` && r.state === "online")`
	}
	waitFor(t, ctx, "a "+masterProtocol+" row online", online(masterProtocol), 30*time.Second)
	// The worker fetches and compiles a family's module itself: the page
	// preloads none.
	if pre := eval[[]string](t, ctx, `[...document.querySelectorAll("link[rel=preload]")].map(l => l.getAttribute("href"))`); len(pre) != 0 {
		t.Errorf("the page preloads %q, want nothing (its worker fetches %s)", pre, first)
	}
	if got := log.list(); !slices.Equal(got, []string{first}) {
		t.Errorf("modules sent for a page of %s servers: %q, want %q alone", masterProtocol, got, first)
	}
	if got := eval[int](t, ctx, `querylensBrowse.stats().modules.length`); got != 1 {
		t.Errorf("the worker runs %d modules, want 1", got)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=add-server] summary`))); err != nil {
		t.Fatal(err)
	}
	want := []string{first}
	for i, tg := range extra {
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`#add-protocol`), tg.Protocol),
			chromedp.SetValue(chromedp.CSS(`#add-addr`), tg.Addr),
			chromedp.Click(chromedp.CSS(`[data-testid=add-submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the added "+tg.Protocol+" server online", `querylensBrowse.view().some(r => r.key.endsWith("/"+`+jsString(tg.Addr)+`) && r.state === "online")`, 30*time.Second)
		if i == 0 {
			want = append(want, familyModule(t, tg.Protocol))
		} else {
			want = append(want, wasmmodule.Name)
		}
		if got := log.list(); !slices.Equal(got, want) {
			t.Errorf("after adding a %s server: modules sent %q, want %q", tg.Protocol, got, want)
		}
	}
	// The first family's rows are still decoded, by its own module.
	if got := eval[int](t, ctx, `querylensBrowse.stats().modules.length`); got != 3 {
		t.Errorf("the worker runs %d modules, want 3", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=refresh]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the refresh to settle", online(masterProtocol)+` && querylensBrowse.counts().outstanding === 0`, 30*time.Second)
	if got := log.list(); !slices.Equal(got, want) {
		t.Errorf("after a refresh: modules sent %q, want %q", got, want)
	}
}

// TestBrowserModulesCombined: a browse page configured with servers of
// several families loads the combined module alone (smaller than two
// family modules), and decodes them all; the inspector loads the combined
// module; a status page, which decodes nothing itself, loads none.
func TestBrowserModulesCombined(t *testing.T) {
	needWasm(t)
	d := startDemo(t, 8)
	var servers []server.Ref
	protocols := map[string]bool{}
	for _, tg := range normalTargets(d) {
		if tg.Options == nil {
			servers = append(servers, tg.Ref())
			protocols[tg.Protocol] = true
		}
	}
	if len(protocols) < 2 {
		t.Fatalf("the demo's servers are of %d protocols", len(protocols))
	}
	base, log := moduleStack(t, d, nil, servers)
	ctx := uncachedTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "every configured server online",
		`(globalThis.querylensBrowse?.view() ?? []).filter(r => r.state === "online").length === `+strconv.Itoa(len(servers)), 30*time.Second)
	if got := log.list(); !slices.Equal(got, []string{wasmmodule.Name}) {
		t.Errorf("modules sent for a page of %d protocols: %q, want the combined one alone", len(protocols), got)
	}

	// A status page decodes nothing in the page: no module.
	tg := servers[0]
	if err := chromedp.Do(ctx, chromedp.Navigate(base+tg.Path())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the status page", `!!globalThis.querylensStatus && document.readyState === "complete"`, 20*time.Second)
	if got := log.list(); !slices.Equal(got, []string{wasmmodule.Name}) {
		t.Errorf("modules sent after a status page: %q, want none more", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('link[rel=preload][href$=".wasm"]').length`); n != 0 {
		t.Errorf("the status page preloads %d modules", n)
	}

	// The inspector: the combined module (on the page's own thread, so its
	// resource timing lists it, from the cache or not).
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/inspect#p="+tg.Protocol+"&h=00")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the inspector", `!!globalThis.querylensInspect && document.querySelectorAll("[data-testid=packet-row]").length > 0`, 20*time.Second)
	got := eval[[]string](t, ctx, `performance.getEntriesByType("resource").map(e => new URL(e.name).pathname).filter(p => p.endsWith(".wasm"))`)
	if len(got) != 1 || !strings.HasPrefix(got[0], "/static/querylens.") {
		t.Errorf("the inspector loaded the modules %q, want the combined one alone", got)
	}
}
