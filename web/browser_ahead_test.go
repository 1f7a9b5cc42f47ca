package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// moduleHold serves the pages with every browser module (.wasm) held
// back until Release: the page's fetch (the combined module, which
// boot.js compiles) and the decoding worker's (a family's module, which
// it compiles itself) wait alike, so no decoder can start.
type moduleHold struct {
	pages     http.Handler
	release   chan struct{}
	once      sync.Once
	first     chan struct{} // closed at the first module request
	firstOnce sync.Once
}

// holdModules wraps pages in a moduleHold.
func holdModules(pages http.Handler) *moduleHold {
	return &moduleHold{pages: pages, release: make(chan struct{}), first: make(chan struct{})}
}

func (m *moduleHold) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, ".wasm") {
		m.firstOnce.Do(func() { close(m.first) })
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
	}
	m.pages.ServeHTTP(w, r)
}

// waitAsked waits until the page (or its worker) has asked for a module.
func (m *moduleHold) waitAsked(t *testing.T) {
	t.Helper()
	select {
	case <-m.first:
	case <-time.After(20 * time.Second):
		t.Fatal("the page asked for no browser module in 20 s")
	}
}

// Release lets the modules held and every later one through.
func (m *moduleHold) Release() { m.once.Do(func() { close(m.release) }) }

// serveHeld serves pages (and the relay rs) with the browser modules held
// (moduleHold), released at the latest when the test ends, before the
// server closes.
func serveHeld(t *testing.T, rs *relay.Server, pages http.Handler) (string, *moduleHold) {
	t.Helper()
	hold := holdModules(pages)
	base := serve(t, rs, hold)
	t.Cleanup(hold.Release)
	return base, hold
}

// openPage opens url in a new tab.
func openPage(t *testing.T, url string) context.Context {
	t.Helper()
	ctx := tab(t)
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
	base, hold := serveHeld(t, rs, h)
	listed := 0
	for _, tg := range d.Targets() {
		if tg.Protocol == "quakeworld" {
			listed++
		}
	}
	if listed == 0 {
		t.Fatal("the demo has no QuakeWorld server for its master to list")
	}

	ctx := openPage(t, base+"/")
	key := "master:quakeworld/" + d.QuakeWorldMaster()
	waitFor(t, ctx, "the master's request sent, the kept list shown", `(globalThis.querylensBrowse?.stats().sentAhead ?? []).includes(`+jsString(key)+`) && querylensBrowse.counts().shown === 50`, 20*time.Second)
	type state struct {
		Ready  bool
		Listed int
	}
	hold.waitAsked(t)
	before := eval[state](t, ctx, `({ready: querylensBrowse.ready === true,
		listed: querylensBrowse.view().filter(r => r.protocol === "quakeworld").length})`)
	if before.Ready || before.Listed != 0 {
		t.Fatalf("while the module is held: decoder ready %v, %d of the master's servers listed; want neither", before.Ready, before.Listed)
	}

	hold.Release()
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
