package web_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserA2SRowFields: an A2S server's row carries the fields only
// some protocols fill (bots from the server's own count, VAC, OS,
// keywords) and shows them as tags; the hostile demo servers of every
// family show as malformed, naming the field and offset.
func TestBrowserA2SRowFields(t *testing.T) {
	needWasm(t)
	st := startStack(t, 2)
	ctx := tab(t)
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

	var hostile []string
	for _, tg := range st.Demo.Targets() {
		if tg.Behavior.Hostile() {
			hostile = append(hostile, tg.Protocol+"/"+tg.Addr)
		}
	}
	if len(hostile) < 6 {
		t.Fatalf("%d hostile demo servers, want one of each kind per family (6)", len(hostile))
	}
	bad := `(() => { const v = new Map((globalThis.querylensBrowse?.view() ?? []).map(r => [r.key, r])); return ` + jsArray(hostile) +
		`.filter(k => v.get(k)?.state !== "malformed" || !/ at offset \d+/.test(v.get(k)?.detail ?? "")).map(k => k + " " + (v.get(k)?.state ?? "absent") + ": " + (v.get(k)?.detail ?? "")); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](bad+`.length === 0`, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("hostile servers not shown as malformed with a field and offset: %v", eval[[]string](t, ctx, bad))
	}
}
