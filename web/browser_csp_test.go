package web_test

import (
	"context"

	"github.com/querylens/querylens/demo"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// recordViolations is evaluated in every document before the page's own
// scripts (a DevTools script, not subject to the page's policy): it keeps
// each securitypolicyviolation event.
const recordViolations = `
globalThis.__csp = [];
document.addEventListener("securitypolicyviolation", e => {
  globalThis.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`

// TestBrowserPagesRunUnderCSP loads every page in Chromium with the
// Content-Security-Policy the site sends and checks that each does its
// work (decodes with the wasm module, talks to the relay) without a
// policy violation, an uncaught exception or a console error.
func TestBrowserPagesRunUnderCSP(t *testing.T) {
	needWasm(t)
	st := startStack(t, 8)
	tg := zandronumTarget(t, st, func(demo.Target) bool { return true })
	for _, tc := range []struct {
		name, path, ready string
		then              string // run when ready, then wait for done
		done              string
	}{
		{name: "browse", path: "/", ready: `globalThis.querylensBrowse?.ready === true && querylensBrowse.view().some(r => r.state === "online")`},
		{name: "status", path: "/s/zandronum/" + tg.Addr, ready: `!!globalThis.querylensStatus`,
			then: `querylensStatus.refresh().then(() => true)`, done: `globalThis.qlFirstDecodeMs > 0`},
		{name: "inspect", path: "/inspect", ready: `!!globalThis.querylensInspect`},
		{name: "not-found", path: "/no/such/page", ready: `document.readyState === "complete"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tab(t)
			var mu sync.Mutex
			var problems []string
			done := make(chan struct{})
			cctx, stopConsole := context.WithCancel(ctx)
			// Subscribe here, before navigating: Console attaches the tab,
			// which must not happen on two goroutines at once.
			console := chromedp.Console(cctx)
			go func() {
				defer close(done)
				for m, err := range console {
					if err != nil {
						return
					}
					if m.Type == chromedp.ConsoleError || m.IsException() {
						mu.Lock()
						problems = append(problems, string(m.Type)+": "+m.String())
						mu.Unlock()
					}
				}
			}()
			defer func() { stopConsole(); <-done }()
			if err := chromedp.Do(ctx,
				chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordViolations})
					return err
				}),
				chromedp.Navigate(st.URL+tc.path),
			); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the page at work", tc.ready, 15*time.Second)
			if tc.then != "" {
				eval[bool](t, ctx, tc.then)
				waitFor(t, ctx, "the page's work done", tc.done, 10*time.Second)
			}
			// Let late work (live refreshes, lazy imports) run too.
			time.Sleep(500 * time.Millisecond)
			csp := eval[[]string](t, ctx, `globalThis.__csp`)
			// The policy is in force: an inline script is refused, and
			// the refusal is seen.
			ran := eval[bool](t, ctx, `(async () => {
				const s = document.createElement("script");
				s.textContent = "globalThis.__inlineRan = true";
				document.head.append(s);
				await new Promise(r => setTimeout(r, 100));
				return globalThis.__inlineRan === true;
			})()`)
			seen := eval[[]string](t, ctx, `globalThis.__csp`)
			if ran || len(seen) != len(csp)+1 || !strings.HasPrefix(seen[len(seen)-1], "script-src") {
				t.Fatalf("an inline script ran (%v) or its refusal was not seen: %q", ran, seen)
			}
			mu.Lock()
			defer mu.Unlock()
			// The 404 itself is logged as a failed load, and the console
			// reports the inline script refused above: not problems.
			problems = slicesDeleteFunc(problems, func(p string) bool {
				return tc.name == "not-found" && strings.Contains(p, "404") || strings.Contains(p, "Content Security Policy") && strings.Contains(p, "inline script")
			})
			if len(csp) > 0 || len(problems) > 0 {
				t.Fatalf("policy violations: %q\nerrors: %q", csp, problems)
			}
		})
	}
}

func slicesDeleteFunc(s []string, del func(string) bool) []string {
	out := s[:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}
