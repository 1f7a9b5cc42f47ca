package web_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
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

// TestBrowserHistory opens a status page with JavaScript disabled and
// checks that the history charts are laid out and visible: they are SVG
// in the HTML, not drawn by a script. Then, with JavaScript, it checks the
// live refresh.
func TestBrowserHistory(t *testing.T) {
	ctx := tab(t)
	bg, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(bg, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	store, err := sqlite.Open(bg, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	tg := d.Targets()[0]
	for _, x := range d.Targets() {
		if x.Behavior == demo.Normal {
			tg = x
			break
		}
	}
	k := tg.Ref().Key()
	if err := store.Record(bg, history.Synthesize(history.SyntheticSpec{Key: k, Seed: 3, End: time.Now()})); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow}, logger)
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}}, Logger: logger, History: store, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	url := base + tg.Ref().Path()

	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the history section", `!!document.querySelector("[data-testid=history]")`, 10*time.Second)
	if eval[bool](t, ctx, `!!globalThis.querylensStatus`) {
		t.Fatal("the page's script ran: JavaScript was not disabled")
	}
	for _, r := range []string{"24h", "7d", "30d"} {
		box := eval[[]float64](t, ctx, `(() => { const s = document.querySelector("[data-testid=chart-`+r+`] svg"); if (!s) return [0, 0]; const b = s.getBoundingClientRect(); return [b.width, b.height]; })()`)
		if box[0] < 200 || box[1] < 40 {
			t.Errorf("chart %s is %v px: not visible", r, box)
		}
	}
	area := eval[[]float64](t, ctx, `(() => { const p = document.querySelector("[data-testid=chart-area-24h]"); if (!p) return [0, 0]; const b = p.getBoundingClientRect(); return [b.width, b.height]; })()`)
	if area[0] < 100 || area[1] < 5 {
		t.Errorf("the 24 h area is %v px", area)
	}
	if !eval[bool](t, ctx, `!!document.querySelector("[data-testid=history-synthetic]") && getComputedStyle(document.querySelector("[data-testid=history-synthetic]")).display !== "none"`) {
		t.Error("the synthetic mark is not shown")
	}
	shoot(t, ctx, "status-history.png")

	// With JavaScript: history.js swaps in the server-rendered section; a
	// new busy sample shows as the new peak after a refresh.
	live := tab(t)
	if err := chromedp.Do(live, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, live, "the history refresh hook", `!!globalThis.querylensHistory`, 10*time.Second)
	if err := store.Record(bg, []history.Sample{{Key: k, At: time.Now(), State: history.StateOnline, Players: 41, MaxPlayers: 64, Map: "LIVE01"}}); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, live, `querylensHistory.refresh().then(() => true)`)
	waitFor(t, live, "the new peak", `document.querySelector("[data-testid=peak-24h]").textContent.includes("41")`, 10*time.Second)
	if !eval[bool](t, live, `document.querySelector("[data-testid=history-maps]").textContent.includes("LIVE01")`) {
		t.Error("the refreshed section lacks the new map")
	}
}

// TestBrowserSparklines: on the browse page, the rows of tracked servers
// get a 24-hour sparkline image (spark.js), the others none.
func TestBrowserSparklines(t *testing.T) {
	needWasm(t)
	ctx := tab(t)
	bg, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(bg, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	store, err := sqlite.Open(bg, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	tr, err := history.NewTracker(bg, history.TrackerConfig{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	// Track two of the demo's Zandronum servers, with a day of history.
	var tracked, others []string
	for _, tg := range d.Targets() {
		if tg.Protocol != "zandronum" {
			continue
		}
		if len(tracked) == 2 {
			others = append(others, tg.Addr)
			continue
		}
		k := tg.Ref().Key()
		if err := store.Record(bg, history.Synthesize(history.SyntheticSpec{Key: k, Seed: 9, End: time.Now()})); err != nil {
			t.Fatal(err)
		}
		tr.View(bg, k, history.SourceDemo)
		tracked = append(tracked, tg.Addr)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey, IPRate: fast, ConnRate: fast, TargetHostRate: fast, ReplyWindow: testReplyWindow}, logger)
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}}, Logger: logger, History: store, Tracker: tr})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "rows", `document.querySelectorAll("[data-testid=server-row]").length >= 4`, 20*time.Second)
	waitFor(t, ctx, "two loaded sparklines", `[...document.querySelectorAll("[data-testid=row-spark]")].filter(i => i.complete && i.naturalWidth > 0).length === 2`, 20*time.Second)
	got := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=row-spark]")].map(i => i.closest("tr").dataset.key).sort()`)
	want := []string{"zandronum/" + tracked[0], "zandronum/" + tracked[1]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sparklines on %v, want %v", got, want)
	}
	shoot(t, ctx, "browse-sparklines.png")

	// The table reuses its row elements for other servers as it filters:
	// each sparkline stays with its server, never on another's row.
	for _, q := range []string{tracked[0], others[0], tracked[1], others[1], "", others[0], tracked[0], ""} {
		eval[bool](t, ctx, `(q => { const el = document.getElementById("q"); el.value = q; el.dispatchEvent(new Event("input", {bubbles: true})); return true; })(`+strconv.Quote(q)+`)`)
		eval[bool](t, ctx, `querylensBrowse.whenDrawn().then(() => querylensBrowse.whenSettled()).then(() => new Promise(r => setTimeout(() => r(true), 0)))`)
		wrong := eval[[]string](t, ctx, `((want) => [...document.querySelectorAll("#rows > tr:not([hidden])")].flatMap(tr => {
		  const k = tr.dataset.key, img = tr.querySelector("img.spark"), u = new URL(tr.querySelector("a.name").href);
		  if (want.includes(k) !== !!img) return [k + (img ? ": a sparkline" : ": no sparkline")];
		  if (img && img.getAttribute("src") !== u.pathname + "/spark.svg" + u.search) return [k + ": the sparkline of " + img.getAttribute("src")];
		  return [];
		}))(`+jsList(want)+`)`)
		if len(wrong) > 0 {
			t.Errorf("after the search %q: %v", q, wrong)
		}
	}
}

// jsList is a JavaScript array literal of the strings.
func jsList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}
