package web_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/server"
)

// recordUnlinked runs before the page's scripts: it stores a favourite the
// relay refuses, spelt as a person may have typed it (an IPv6 address not
// in canonical form), keeps every row element drawn without a link to its
// server's status page, with the state it showed, and the keys of the
// rows whose path the page asked its decoding worker to find.
const recordUnlinked = `(() => {
  localStorage.setItem("querylens.browse.v1", JSON.stringify({favourites: ["zandronum/[0:0::1]:10666"]}));
  window.__qlUnlinked = [];
  window.__qlLinks = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    if (m?.type === "links") for (const r of m.refs) window.__qlLinks.push(r.key);
    return post.call(this, m, ...rest);
  };
  new MutationObserver((records) => {
    for (const rec of records) {
      const tr = rec.target.closest?.("#rows > tr.row");
      if (!tr || tr.hidden || !tr.dataset.key) continue;
      if (!tr.querySelector("a.name").getAttribute("href")) {
        window.__qlUnlinked.push({key: tr.dataset.key, state: tr.dataset.state, listed: tr.querySelector("[data-testid=cell-listed]").textContent});
      }
    }
  }).observe(document.documentElement, {subtree: true, attributes: true, attributeFilter: ["data-key", "data-state", "href"]});
})();`

// TestBrowserBrowseLinks: every row links to its server's status page,
// spelt as the server spells it (server.Ref's Path: the address
// canonical, the server's query options in the query string), and the
// page's script builds none itself. A master's rows and the configured
// servers link from the moment they are drawn; a favourite, kept by the
// browser, links once the browser module is ready, before its answer.
func TestBrowserBrowseLinks(t *testing.T) {
	needWasm(t)
	st := startStack(t, 4)
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: recordUnlinked}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // row key → its status page's path
	config := map[string]bool{}
	for _, tg := range st.Demo.Targets() {
		ref, err := server.New(tg.Protocol, tg.Addr, tg.Options)
		if err != nil {
			t.Fatal(err)
		}
		want[tg.Protocol+"/"+tg.Addr] = ref.Path()
		config[tg.Protocol+"/"+tg.Addr] = tg.Protocol != "zandronum" // startStack's extras
	}
	fav, err := server.New("zandronum", "[0:0::1]:10666", nil)
	if err != nil {
		t.Fatal(err)
	}
	if fav.Path() != "/s/zandronum/[::1]:10666" {
		t.Fatalf("the favourite's path is %s", fav.Path())
	}
	want["zandronum/[0:0::1]:10666"] = fav.Path()
	waitFor(t, ctx, "every row settled", `querylensBrowse.view().length === `+strconv.Itoa(len(want))+
		` && querylensBrowse.view().every(r => r.state !== "pending" && r.state !== "querying")`, 30*time.Second)
	// Every row's link, drawn one by one (the protocol filter's "all" and
	// a search per row keep each in view).
	for key, path := range want {
		addr := key[strings.Index(key, "/")+1:]
		eval[bool](t, ctx, `(q => { const el = document.getElementById("q"); el.value = q; el.dispatchEvent(new Event("input", {bubbles: true})); return true; })(`+jsString(addr)+`)`)
		eval[bool](t, ctx, drawn)
		got := eval[[]string](t, ctx, `[...document.querySelectorAll("#rows > tr.row:not([hidden])")].filter(tr => tr.dataset.key === `+jsString(key)+`).map(tr => tr.querySelector("a.name").getAttribute("href") ?? "")`)
		if len(got) != 1 || got[0] != path {
			t.Errorf("row %s links to %q, want %s", key, got, path)
		}
	}
	// Only the favourite came without its path: the master's list and
	// the page's configuration bring theirs.
	if got := eval[[]string](t, ctx, `window.__qlLinks`); len(got) != 1 || got[0] != "zandronum/[0:0::1]:10666" {
		t.Errorf("the page asked for the paths of %q, want the favourite's only", got)
	}
	type unlinked struct{ Key, State, Listed string }
	for _, u := range eval[[]unlinked](t, ctx, `window.__qlUnlinked`) {
		switch {
		case u.Listed != "" || config[u.Key]:
			t.Errorf("row %s (listed by %q) drawn without its link", u.Key, u.Listed)
		case u.State != "pending" && u.State != "querying":
			t.Errorf("row %s drawn %s, its answer, without its link", u.Key, u.State)
		}
	}
	// The popover's status link is the row's.
	eval[bool](t, ctx, `(q => { const el = document.getElementById("q"); el.value = q; el.dispatchEvent(new Event("input", {bubbles: true})); return true; })("[0:0::1]")`)
	eval[bool](t, ctx, drawn)
	eval[bool](t, ctx, `(document.querySelector("#rows > tr.row:not([hidden]) [data-testid=row-state]").click(), true)`)
	if got := eval[string](t, ctx, `[...document.querySelectorAll("[data-testid=state-detail] a")].find(a => a.textContent === "Status page")?.getAttribute("href") ?? ""`); got != fav.Path() {
		t.Errorf("the popover's status link is %q, want %s", got, fav.Path())
	}
}
