package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// layoutProblemsJS returns what is wrong with the page's layout as it is
// drawn: the footer above the end of the content (drawn over it), the
// document wider than the window, and text drawn over other text. Text is
// measured per line box (Range.getClientRects) and clipped by its
// scrolling and clipping ancestors, so that what a scroll box hides does
// not count; what no ancestor clips is measured as drawn.
const layoutProblemsJS = `(() => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  const clip = (el, r) => {
    let [l, t, rt, b] = [r.left, r.top, r.right, r.bottom];
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== "visible" || s.overflowY !== "visible" || s.clip !== "auto") {
        const c = a.getBoundingClientRect();
        l = Math.max(l, c.left); t = Math.max(t, c.top); rt = Math.min(rt, c.right); b = Math.min(b, c.bottom);
      }
    }
    return rt - l > 1 && b - t > 1 ? {l, t, r: rt, b} : null;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.dataset.testid ? "[" + el.dataset.testid + "]" : el.id ? "#" + el.id : el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "");
  if (document.documentElement.scrollWidth > vw + 1) {
    // Name the widest elements that reach past the window's edge.
    const wide = [...document.body.querySelectorAll("*")].filter(e => e.getBoundingClientRect().right > vw + 1 && ![...e.children].some(c => c.getBoundingClientRect().right > vw + 1));
    out.push("the document is " + document.documentElement.scrollWidth + " px wide in a " + vw + " px window: " + wide.slice(0, 4).map(e => name(e) + " (right " + Math.round(e.getBoundingClientRect().right) + " px)").join(", "));
  }
  const boxes = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest("script, style, .skip, .sr-only, [hidden]")) continue;
    // Not drawn: hidden, transparent, or in a closed <details>.
    if (!el.checkVisibility({contentVisibilityAuto: true, opacityProperty: true, visibilityProperty: true})) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      const c = clip(el, r);
      if (c) boxes.push({...c, el, text: n.textContent.trim().slice(0, 40)});
    }
  }
  const footer = document.querySelector("footer.build-info");
  if (footer) {
    const f = footer.getBoundingClientRect();
    for (const b of boxes) {
      if (footer.contains(b.el)) continue;
      if (b.b > f.top + 1 && b.t < f.bottom) { out.push("the footer (top " + Math.round(f.top + scrollY) + " px) is drawn over " + name(b.el) + " " + JSON.stringify(b.text) + " (" + Math.round(b.t + scrollY) + "-" + Math.round(b.b + scrollY) + " px)"); break; }
    }
    let end = 0;
    for (const b of boxes) if (!footer.contains(b.el)) end = Math.max(end, b.b);
    if (f.top + 1 < end) out.push("the footer (top " + Math.round(f.top + scrollY) + " px) is above the end of the content (" + Math.round(end + scrollY) + " px; document " + document.documentElement.scrollHeight + " px)");
  }
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const w = Math.min(a.r, b.r) - Math.max(a.l, b.l), h = Math.min(a.b, b.b) - Math.max(a.t, b.t);
      if (w > 2 && h > 2) {
        if (overlaps++ < 5) out.push("text overlaps: " + name(a.el) + " " + JSON.stringify(a.text) + " and " + name(b.el) + " " + JSON.stringify(b.text) + " (" + Math.round(w) + "x" + Math.round(h) + " px)");
      }
    }
  }
  if (overlaps > 5) out.push("… " + (overlaps - 5) + " more overlaps");
  return out;
})()`

// visibleJS returns, for the elements matching the selector, why each is
// not readable: no width, outside the window, or clipped to less than
// min px (or to less than its text when that is shorter).
func visibleJS(sel string, min int) string {
	return `(() => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  for (const e of document.querySelectorAll(` + jsString(sel) + `)) {
    const r = e.getBoundingClientRect();
    let l = r.left, rt = r.right;
    for (let a = e; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== "visible" && a !== e) { const c = a.getBoundingClientRect(); l = Math.max(l, c.left); rt = Math.min(rt, c.right); }
    }
    const shown = Math.min(rt, vw) - Math.max(l, 0);
    // An inline element's box is its whole text, drawn or not.
    const want = Math.min(` + strconv.Itoa(min) + `, Math.max(r.width, e.scrollWidth) - 1);
    if (r.width < 1 || shown < want) out.push(JSON.stringify(e.textContent.trim()) + ": " + Math.round(Math.max(shown, 0)) + " px of it shown (box " + Math.round(r.left) + "+" + Math.round(r.width) + " px, window " + vw + " px)");
  }
  return out;
})()`
}

// layoutStack is startStack with a history store holding a day of
// synthetic samples for every demo server, so that status pages are
// longer than a window.
func layoutStack(t *testing.T) (string, *demo.Demo) {
	t.Helper()
	bg, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(bg, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	store, err := sqlite.Open(bg, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	own := []netip.AddrPort{netip.MustParseAddrPort(d.Master())}
	var extra []server.Ref
	for i, tg := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
		if tg.Protocol != "zandronum" {
			extra = append(extra, tg.Ref())
		}
		k := tg.Ref().Key()
		if err := store.Record(bg, history.Synthesize(history.SyntheticSpec{Key: k, Seed: uint64(i + 1), End: time.Now()})); err != nil {
			t.Fatal(err)
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}}, Servers: extra, Logger: logger, History: store,
		StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, rs, h), d
}

// TestBrowserLayout lays out the pages on a phone (390 px), a tablet
// (768 px) and a desktop (1300 px) window and checks that nothing is drawn over anything else
// (the footer below the content, no text over text), that the document
// fits the window's width, and that each server's name is readable: on
// the browser page in every row, on the status page in its heading.
func TestBrowserLayout(t *testing.T) {
	needWasm(t)
	base, d := layoutStack(t)
	var statusURL string
	for _, tg := range normalTargets(d) {
		if tg.Protocol == "zandronum" {
			statusURL = base + tg.Ref().Path()
			break
		}
	}
	if statusURL == "" {
		t.Fatal("no normal Zandronum server in the demo")
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"tablet", 768, 1024}, {"desktop", 1300, 900}} {
		for _, pg := range []struct {
			name, url string
			ready     string // a JS condition: the page has drawn what it shows
			names     string // the elements holding server names
			minName   int    // px of each name that must show
		}{
			{"browse", base + "/", `(globalThis.querylensBrowse?.view() ?? []).filter(r => r.state === "online").length >= 4 && document.querySelectorAll("[data-testid=server-row][data-state=online] [data-testid=cell-name] a").length >= 4`,
				"[data-testid=server-row][data-state=online] [data-testid=cell-name] a", 80},
			{"status", statusURL, `!!document.querySelector("[data-testid=history]") && document.querySelector("[data-testid=status]")?.dataset.state === "online"`,
				"[data-testid=status] h1", 120},
			{"inspect", base + "/inspect", `!!globalThis.querylensInspect`, "", 0},
			{"error", base + "/no/such/page", `!!document.querySelector("[data-testid=error-page]")`, "", 0},
		} {
			t.Run(size.name+"/"+pg.name, func(t *testing.T) {
				t.Parallel() // each in its own tab: their waits overlap
				ctx := tab(t)
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(pg.url)); err != nil {
					t.Fatal(err)
				}
				waitFor(t, ctx, pg.name+" drawn", pg.ready, 20*time.Second)
				// Let the table's next redraw and the fonts settle.
				eval[bool](t, ctx, `document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))))`)
				if size.name == "phone" && (pg.name == "browse" || pg.name == "status") {
					shoot(t, ctx, pg.name+"-phone.png") // the phone screenshots of docs/pages.md
				}
				for _, p := range eval[[]string](t, ctx, layoutProblemsJS) {
					t.Error(p)
				}
				if pg.name == "status" {
					// The history section is in the article's column,
					// at its cards' edges.
					col := eval[[]float64](t, ctx, `(() => { const c = document.querySelector("[data-testid=status] .card").getBoundingClientRect(), h = document.querySelector("[data-testid=history]").getBoundingClientRect(); return [c.left, c.right, h.left, h.right]; })()`)
					if col[2] < col[0]-1 || col[3] > col[1]+1 {
						t.Errorf("the history section spans %.0f-%.0f px, outside the page's column (%.0f-%.0f px)", col[2], col[3], col[0], col[1])
					}
				}
				if pg.names == "" {
					return
				}
				if n := eval[int](t, ctx, `document.querySelectorAll(`+jsString(pg.names)+`).length`); n == 0 {
					t.Fatalf("no server name on the page (%s)", pg.names)
				}
				for _, p := range eval[[]string](t, ctx, visibleJS(pg.names, pg.minName)) {
					t.Errorf("server name not readable: %s", p)
				}
			})
		}
	}
}
