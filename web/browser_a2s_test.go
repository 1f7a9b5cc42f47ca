package web_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/querylens/querylens/demo"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// recordAskOptions keeps every ask the page gives its worker (boot.js's
// prepare, in the worker's name, and browse.js's own) in
// window.__qlAskOptions.
const recordAskOptions = `(() => {
  window.__qlAskOptions = [];
  ` + watchWorkers + `
  window.__qlOnPrepare = (m) => { for (const a of m.asks ?? []) window.__qlAskOptions.push(a); };
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    if (m?.type === "ask") for (const a of m.asks ?? []) window.__qlAskOptions.push(a);
    return post.call(this, m, ...rest);
  };
})();`

// TestBrowserA2SRowFields: an A2S server's row carries the fields only
// some protocols fill (bots from the server's own count, VAC, OS,
// keywords) and shows them as tags; the hostile demo servers of every
// family show as malformed, naming the field and offset. The list asks an
// A2S server without RULES (the protocol's list options): the server whose
// only spoilt reply is its bzip2 RULES shows online there, and malformed
// on its status page, which asks everything and shows a server's rules.
func TestBrowserA2SRowFields(t *testing.T) {
	needWasm(t)
	st := startStack(t, 2)
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: recordAskOptions}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "an A2S row with bots, VAC, OS and keywords",
		`(globalThis.querylensBrowse?.view() ?? []).some(r => r.protocol === "a2s" && r.state === "online" && r.bots === 2 && r.anticheat === true && r.os === "Linux" && r.keywords === "querylens,demo,cp")`,
		20*time.Second)
	// Only the A2S rows, so that they are all in the DOM; then all again.
	eval[bool](t, ctx, `(() => { const s = document.getElementById("f-protocol"); s.value = "a2s"; s.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`)
	waitFor(t, ctx, "the VAC, OS and keywords tags",
		`[...document.querySelectorAll("[data-testid=tag-anticheat]")].some(e => e.textContent === "VAC") && `+
			`[...document.querySelectorAll("[data-testid=tag-os]")].some(e => e.textContent === "Linux") && `+
			`[...document.querySelectorAll("[data-testid=tag-keywords]")].some(e => e.title === "querylens,demo,cp")`,
		5*time.Second)
	eval[bool](t, ctx, `(() => { const s = document.getElementById("f-protocol"); s.value = ""; s.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`)

	// Every A2S server is asked with the list's options, and so without
	// RULES.
	if bad := eval[[]string](t, ctx, `window.__qlAskOptions.filter(a => a.protocol === "a2s" && a.options?.rules !== "false").map(a => a.key + " " + JSON.stringify(a.options))`); len(bad) > 0 {
		t.Errorf("A2S servers asked without the list's options: %v", bad)
	}
	if n := eval[int](t, ctx, `window.__qlAskOptions.filter(a => a.protocol === "a2s").length`); n == 0 {
		t.Errorf("no A2S asks recorded")
	}

	var hostile []string
	var rulesOnly demo.Target // spoils only what the list does not ask
	for _, tg := range st.Demo.Targets() {
		switch {
		case tg.Protocol == "a2s" && tg.Behavior == demo.BadLength:
			rulesOnly = tg
		case tg.Behavior.Hostile():
			hostile = append(hostile, tg.Protocol+"/"+tg.Addr)
		}
	}
	if len(hostile) < 5 || rulesOnly.Addr == "" {
		t.Fatalf("%d hostile demo servers besides A2S's bad length (%q), want one of each kind per family (5 and it)", len(hostile), rulesOnly.Addr)
	}
	waitFor(t, ctx, "the A2S server with spoilt RULES online in the list",
		`(globalThis.querylensBrowse?.view() ?? []).some(r => r.key === `+jsString("a2s/"+rulesOnly.Addr)+` && r.state === "online")`, 20*time.Second)
	statusPage := func(tg demo.Target) ht.Doc {
		resp, err := http.Get(st.URL + "/s/a2s/" + tg.Addr)
		if err != nil {
			t.Fatal(err)
		}
		return ht.Parse(t, readAll(t, resp))
	}
	if d := statusPage(rulesOnly); ht.Attr(d.TestID(t, "status"), "data-state") != "malformed" {
		t.Errorf("status page of the A2S server with spoilt RULES: %q, want malformed", ht.Text(d.TestID(t, "status")))
	}
	for _, tg := range normalTargets(st.Demo) {
		if tg.Protocol != "a2s" {
			continue
		}
		if d := statusPage(tg); len(d.TestIDs("rules")) == 0 {
			t.Errorf("the status page of %s shows no rules", tg.Addr)
		}
		break
	}
	bad := `(() => { const v = new Map((globalThis.querylensBrowse?.view() ?? []).map(r => [r.key, r])); return ` + jsArray(hostile) +
		`.filter(k => v.get(k)?.state !== "malformed" || !/ at offset \d+/.test(v.get(k)?.detail ?? "")).map(k => k + " " + (v.get(k)?.state ?? "absent") + ": " + (v.get(k)?.detail ?? "")); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](bad+`.length === 0`, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("hostile servers not shown as malformed with a field and offset: %v", eval[[]string](t, ctx, bad))
	}
}
