package web_test

// Browser tests: the pages in headless Chromium (Debian's chromium) against
// a full stack on loopback: the real relay, these pages, and the demo's
// emulated servers. One browser per test package, a new tab per test.
//
//	go test ./web -run Browser -screenshots   # also writes docs/screenshots/*.png

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

var screenshots = flag.Bool("screenshots", false, "write PNG screenshots of the pages to docs/screenshots/")

var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserCancel context.CancelFunc
	browserErr    error
)

// chromiumPath finds Debian's chromium on PATH (only there, so that
// .ci/run's newcomer check can hide it).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab opens a new tab in the package's browser, starting the browser on
// first use. Without chromium the test is skipped, except under CI, where
// a missing install step must fail loudly.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found, and CI is set: install it (apt-get install -y chromium)")
		}
		t.Skip("chromium not found; install it with apt-get install -y chromium")
	}
	browserOnce.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Headless,
			chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.WindowSize(1280, 800),
		)
		var allocCancel context.CancelFunc
		alloc, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		browserCtx = ctx
		browserCancel = func() { cancel(); allocCancel() }
		browserErr = chromedp.Do(ctx) // starts the browser
	})
	if browserErr != nil {
		t.Fatalf("start chromium: %v", browserErr)
	}
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	// Capture page errors and console errors in the test log.
	return ctx
}

func closeBrowser() {
	if browserCancel != nil {
		browserCancel()
	}
}

// stack is everything `querylens serve --demo` runs, on loopback.
type stack struct {
	URL   string
	Demo  *demo.Demo
	Relay *relay.Server
}

func startStack(t *testing.T, servers int) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: servers})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	// As `querylens serve --demo` does: the relay may reach exactly the
	// demo's servers, and a page on loopback may ask for every one at once.
	own := []netip.AddrPort{netip.MustParseAddrPort(d.Master())}
	for _, tg := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
	}
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	var extra []server.Ref
	for _, tg := range d.Targets() {
		if tg.Protocol != "zandronum" {
			extra = append(extra, tg.Ref())
		}
	}
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}}, Servers: extra, Logger: logger, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{URL: serve(t, rs, h), Demo: d, Relay: rs}
}

// testReplyWindow is the browser tests' relay reply window, and so the
// pages' wait for each conversation (ql.js replyTimeout): longer than the
// default 2 s, which a loaded -race run beside other builds can outlast
// before a demo server's reply is read, and short enough that a silent
// server's row settles well within the tests' waits (15 s and more).
const testReplyWindow = 5 * time.Second

// testStatusTimeout bounds the status page's own query in the browser
// tests, for the same reason; they open only pages of servers that
// answer, which return as soon as the answer is read.
const testStatusTimeout = 10 * time.Second

// serve mounts the relay and the pages as the command does and returns
// the base URL.
func serve(t *testing.T, rs *relay.Server, pages http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/relay", rs)
	mux.Handle("/", pages)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// needWasm fails when the browser module built into the package is not
// usable (it is committed, so this is a broken tree, never a skip).
func needWasm(t *testing.T) {
	t.Helper()
	if _, err := web.Module(); err != nil {
		t.Fatal(err)
	}
}

func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*screenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := filepath.Join("..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/screenshots/%s", name)
}

// eval runs a JS expression in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JS condition until it is truthy.
func waitFor(t *testing.T, ctx context.Context, what, cond string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		diag, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main")?.innerText.slice(0, 1500) ?? ""`))
		t.Fatalf("waiting for %s (%s): %v\npage: %s", what, cond, err, diag)
	}
}

// hover moves the mouse to the centre of the first element matching sel.
func hover(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	xy := eval[[]float64](t, ctx, `(() => { const r = document.querySelector(`+jsString(sel)+`).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
