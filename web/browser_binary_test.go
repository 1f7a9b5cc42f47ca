package web_test

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/web"
)

// TestBrowserBuiltBinary is the newcomer's path end to end: a plain
// `go build ./cmd/querylens` (no task step), `querylens serve --demo` on
// loopback, and a headless Chromium that must list the demo servers of
// every protocol, decoded by the browser module the binary carries, sent
// as brotli within its budget.
func TestBrowserBuiltBinary(t *testing.T) {
	ctx := tab(t) // first: skips (or fails in CI) without chromium
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build querylens: ", err)
	}
	bin := filepath.Join(t.TempDir(), "querylens")
	bctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(bctx, goBin, "build", "-o", bin, "./cmd/querylens")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/querylens: %v\n%s", err, out)
	}

	const servers = 8
	url := startBinary(t, bin, "serve", "--demo", "--demo-servers", "8", "--addr", "127.0.0.1:0", "--metrics=false")

	// What the page must show: the demo's answering servers, by protocol
	// and name (the same configuration started here gives the same names;
	// its ports differ, so rows are matched by name).
	dctx, dcancel := context.WithCancel(context.Background())
	defer dcancel()
	d, err := demo.Start(dctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	protocols := map[string]bool{}
	for _, tg := range normalTargets(d) {
		want = append(want, tg.Protocol+"|"+codecs.StripColors(tg.Name))
		protocols[tg.Protocol] = true
	}
	d.Close()
	if len(protocols) < 4 {
		t.Fatalf("the demo's answering servers cover only %v", protocols)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	missing := `(() => { const on = new Set((globalThis.querylensBrowse?.view() ?? []).filter(r => r.state === "online").map(r => r.protocol + "|" + r.name)); return ` +
		jsArray(want) + `.filter(k => !on.has(k)); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](missing+`.length === 0`, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the page served by the built binary does not show, online and decoded: %q (%v)", eval[[]string](t, ctx, missing), err)
	}

	// The module went over the wire as brotli: its transfer size is the
	// committed .br, within the budget.
	m, err := web.Module()
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name             string
		Encoded, Decoded float64
	}
	wasm := eval[[]entry](t, ctx, `performance.getEntriesByType("resource").filter(e => e.name.endsWith(".wasm")).map(e => ({Name: e.name, Encoded: e.encodedBodySize, Decoded: e.decodedBodySize}))`)
	if len(wasm) == 0 {
		t.Fatal("the page did not load the browser module")
	}
	for _, e := range wasm {
		if int(e.Encoded) != m.Brotli.Size || int(e.Decoded) != m.Size || e.Encoded > float64(wasmBrotliBudget) {
			t.Errorf("%s: %v bytes on the wire for %v decoded; want the %d-byte brotli form of the %d-byte module (budget %d)",
				e.Name, e.Encoded, e.Decoded, m.Brotli.Size, m.Size, wasmBrotliBudget)
		}
	}
	footer := eval[string](t, ctx, `document.querySelector("[data-testid=build-info]")?.textContent ?? ""`)
	if !strings.Contains(footer, "module "+m.SHA256[:12]) {
		t.Errorf("footer %q does not name the module %s", footer, m.SHA256[:12])
	}
}

// startBinary runs the built command until the test ends and returns the
// URL it prints once it listens.
func startBinary(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 10 * time.Second
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("querylens %s stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "querylens is serving at "); ok {
				urlc <- u
			}
		}
	}()
	select {
	case u := <-urlc:
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("serving at %q, not on loopback", u)
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("querylens %s did not start within 30 s:\n%s", strings.Join(args, " "), stderr.String())
	}
	return ""
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
