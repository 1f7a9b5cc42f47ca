package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/wasmmodule"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// toyModulesEnv names, in TestBrowserToyProtocol's child, the directory
// holding the toy's browser module.
const toyModulesEnv = "QUERYLENS_TOY_MODULES"

// toyModuleImport is the package a browser module of the toy alone links.
const toyModuleImport = "github.com/querylens/querylens/internal/toyproto/module"

// toyModule is the toy's browser module, built once per test binary.
var toyModule struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// buildToyModule builds the toy's module as a module of a protocol built
// in outside this repository is built (scripts/build-wasm.sh --family)
// into a directory removed when the test ends.
func buildToyModule(t *testing.T) string {
	t.Helper()
	toyModule.once.Do(func() {
		toyModule.dir, toyModule.err = os.MkdirTemp("", "querylens-toy-modules-")
		if toyModule.err != nil {
			return
		}
		cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "build-wasm.sh"), "--family", toyModuleImport, "--out", toyModule.dir)
		toyModule.out, toyModule.err = cmd.CombinedOutput()
	})
	if toyModule.err != nil {
		t.Fatalf("build the toy's module: %v\n%s", toyModule.err, toyModule.out)
	}
	t.Cleanup(func() { os.RemoveAll(toyModule.dir) })
	return toyModule.dir
}

// TestBrowserToyProtocol: a server built with the toy protocol and serving
// the toy's module (web.Config.ModulesDir) shows a browse page of real
// rows that loads their family's module alone; a toy server added by hand
// then loads the toy's module into the worker, shows online with its row
// fields, and its row links to its status page, which carries its join
// link. Needs chromium and go (the toy's module is built by the test).
func TestBrowserToyProtocol(t *testing.T) {
	if os.Getenv(toyEnv) == "" {
		if chromiumPath() == "" {
			if os.Getenv("CI") != "" {
				t.Fatal("chromium not found, and CI is set: install it (apt-get install -y chromium)")
			}
			t.Skip("chromium not found; install it with apt-get install -y chromium")
		}
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("go is not on PATH: the test builds the toy's browser module (scripts/build-wasm.sh --family)")
		}
		dir := buildToyModule(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestBrowserToyProtocol$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), toyEnv+"=1", toyModulesEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestBrowserToyProtocol") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	dir := os.Getenv(toyModulesEnv)
	toyModuleName := wasmmodule.FamilyName(wasmmodule.FamilyOf(toyproto.Codec{}))
	realModule := familyModuleOf(t, "zandronum")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var tg demo.Target
	own := []netip.AddrPort{netip.MustParseAddrPort(d.Master())}
	for _, x := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(x.Addr))
		if x.Protocol == toyproto.Protocol {
			tg = x
		}
	}
	if tg.Addr == "" {
		t.Fatalf("no toy server among the demo's: %+v", d.Targets())
	}

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	defer rs.Shutdown(context.Background())
	// pages serves a browse page with cfg, recording the modules sent.
	pages := func(cfg web.Config) (string, func() []string) {
		cfg.Exchanger, cfg.Logger, cfg.ModulesDir = rs, logger, dir
		h, err := web.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var sent []string // the modules the server sent, each once, in order
		mux := http.NewServeMux()
		mux.Handle("/relay", rs)
		mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := r.URL.Path; strings.HasPrefix(p, "/static/") && path.Ext(p) == ".wasm" {
				stem := strings.TrimSuffix(path.Base(p), ".wasm") // "querylens-x.<hash>"
				if i := strings.LastIndexByte(stem, '.'); i > 0 {
					stem = stem[:i]
				}
				mu.Lock()
				if n := stem + ".wasm"; !slices.Contains(sent, n) {
					sent = append(sent, n)
				}
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		}))
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		return ts.URL, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(sent)
		}
	}
	online := func(cond string) string {
		return `(globalThis.querylensBrowse?.view() ?? []).some(r => r.state === "online" && ` + cond + `)`
	}
	tab := browserTab(t)
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	key := toyproto.Protocol + "/" + tg.Addr
	// addToy adds the toy server on the page and waits for it online,
	// its module sent after first.
	addToy := func(modulesSent func() []string, first string) {
		t.Helper()
		if got := evalJS[[]string](t, tab, `[...document.querySelectorAll("#add-protocol option")].map(o => o.value)`); !slices.Contains(got, toyproto.Protocol) {
			t.Errorf("the add form offers %q, not the toy", got)
		}
		if err := chromedp.Do(tab,
			chromedp.Click(chromedp.CSS(`[data-testid=add-server] summary`)),
			chromedp.SetValue(chromedp.CSS(`#add-protocol`), toyproto.Protocol),
			chromedp.SetValue(chromedp.CSS(`#add-addr`), tg.Addr),
			chromedp.Click(chromedp.CSS(`[data-testid=add-submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, tab, "the toy server online with its row fields",
			online(`r.key === `+jsQuote(key)+` && r.name === `+jsQuote(toyproto.ServerName)+` && r.players === 2`), 30*time.Second)
		if got := modulesSent(); !slices.Equal(got, []string{first, toyModuleName}) {
			t.Errorf("modules sent after adding a toy server: %q, want %q then %q", got, first, toyModuleName)
		}
		if got := evalJS[int](t, tab, `querylensBrowse.stats().modules.length`); got != 2 {
			t.Errorf("the worker runs %d modules, want 2", got)
		}
	}

	// A page of the master's rows, of one family: that family's module,
	// then the toy's beside it.
	base, modulesSent := pages(web.Config{Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}}})
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, tab, "a row of the master's online", online(`r.protocol === "zandronum"`), 30*time.Second)
	if got := modulesSent(); !slices.Equal(got, []string{realModule}) {
		t.Errorf("modules sent for a page of the master's rows: %q, want %q alone", got, realModule)
	}
	addToy(modulesSent, realModule)
	// The toy's row, drawn, links to its status page, which carries the
	// toy's join link.
	row := `[...document.querySelectorAll("#rows > tr.row")].find(tr => tr.dataset.key === ` + jsQuote(key) + `)`
	waitUntil(t, tab, "the toy's row drawn with its name and players of max", row+`?.innerText.includes(`+jsQuote(toyproto.ServerName)+`) && `+row+`.innerText.includes("2/8")`, 10*time.Second)
	href := evalJS[string](t, tab, row+`?.querySelector("a.name")?.getAttribute("href") ?? ""`)
	if href != tg.Ref().Path() {
		t.Fatalf("the toy row links to %q, want %q", href, tg.Ref().Path())
	}
	if err := chromedp.Do(tab, chromedp.Navigate(base+href)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, tab, "the toy's status page online with its join link",
		`document.querySelector("[data-testid=join-link]")?.getAttribute("href") === `+jsQuote("toy://"+tg.Addr)+
			` && document.body.innerText.includes(`+jsQuote(toyproto.ServerName)+`)`, 20*time.Second)

	// A page of servers of two families: the combined module, which does
	// not decode the toy; the toy's row loads the toy's module all the same.
	var servers []server.Ref
	fams := map[string]bool{}
	for _, x := range d.Targets() {
		if x.Protocol == toyproto.Protocol || x.Behavior != demo.Normal || x.Options != nil || len(fams) == 2 {
			continue
		}
		if f := familyModuleOf(t, x.Protocol); !fams[f] {
			fams[f] = true
			servers = append(servers, x.Ref())
		}
	}
	if len(servers) < 2 {
		t.Fatalf("the demo's servers are of %d families", len(servers))
	}
	base, modulesSent = pages(web.Config{Servers: servers})
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, tab, "the configured servers online", `(globalThis.querylensBrowse?.view() ?? []).filter(r => r.state === "online").length === 2`, 30*time.Second)
	if got := modulesSent(); !slices.Equal(got, []string{wasmmodule.Name}) {
		t.Errorf("modules sent for a page of two families: %q, want the combined one alone", got)
	}
	addToy(modulesSent, wasmmodule.Name)
}

// familyModuleOf is the file name of the module of protocol's family.
func familyModuleOf(t *testing.T, protocol string) string {
	t.Helper()
	c, err := codecs.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	return wasmmodule.FamilyName(wasmmodule.FamilyOf(c))
}

// chromiumPath finds Debian's chromium on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserTab starts a headless chromium for the test and returns a tab in
// it; the browser ends with the test.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath()), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 800))
	alloc, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancel(); allocCancel() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// evalJS runs a JS expression in the page and decodes its value.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitUntil polls a JS condition until it is truthy.
func waitUntil(t *testing.T, ctx context.Context, what, cond string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify((globalThis.querylensBrowse?.view() ?? []).filter(r => r.state !== "online" || !r.key.startsWith("zandronum/")).slice(0, 5).map(r => [r.key, r.state, r.detail, r.name, r.players, r.max])) + " " + JSON.stringify(globalThis.querylensBrowse?.stats?.().modules ?? null) + " " + (document.querySelector("main")?.innerText.slice(0, 300) ?? "")`))
		t.Fatalf("waiting for %s (%s): %v\npage: %s", what, cond, err, page)
	}
}

func jsQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// writeFakeModule writes the files of a family module of family's
// protocols into dir, consistent with their manifest but not WebAssembly:
// enough for a server to accept or refuse them.
func writeFakeModule(t *testing.T, dir, family string, protocols ...string) {
	t.Helper()
	name := wasmmodule.FamilyName(family)
	body := []byte("not really a module of " + family)
	sum := wasmmodule.Sum(body)
	m := wasmmodule.Manifest{Module: name, SHA256: sum, Size: len(body), Families: []string{family}, Protocols: protocols,
		Brotli: wasmmodule.Coded{File: name + ".br", Size: len(body), SHA256: sum},
		Gzip:   wasmmodule.Coded{File: name + ".gz", Size: len(body), SHA256: sum}}
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{name + ".br": body, name + ".gz": body, name + ".json": js} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeModulesRefused: serve --modules refuses a module of a protocol
// this binary does not know, saying which and why.
func TestServeModulesRefused(t *testing.T) {
	dir := t.TempDir()
	writeFakeModule(t, dir, "example.com/codecs/nosuch", "nosuch")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	err := e.runServe(ctx, serveOptions{addr: "127.0.0.1:0", modules: dir}, make(chan string, 1))
	if err == nil || !strings.Contains(err.Error(), `querylens-nosuch.wasm decodes protocol "nosuch", which this binary does not know`) {
		t.Fatalf("serve --modules %s: %v, want a refusal of protocol nosuch\n%s", dir, err, errb.String())
	}
}
