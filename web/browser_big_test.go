package web_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

var pageTiming = flag.Bool("page-timing", false, "measure the browse page's main-thread time per filter keystroke and per scroll frame with 20,000 rows (TestBrowserBigListTiming)")

var pageProfile = flag.Bool("page-profile", false, "with -page-timing, record a CPU profile and a timeline trace of the keystrokes and the scroll steps and log the top self-time functions and the main thread's time by kind of work (style, layout, paint, script); the timings are then inflated by the profiler")

var pageProfileJS = flag.Bool("page-profile-js", true, "with -page-profile, also sample the page's JavaScript (which inflates script time more than the trace does)")

var pageProfileKeys = flag.Bool("page-profile-keys", false, "with -page-profile, log every keystroke's main-thread time by kind of work, in order")

// bigMaster is the Steam master of the big-list tests, as --master spells it.
const bigMaster = `a2s=127.0.0.1:27011?filter=\appid\440&label=Steam`

// fakeLists serves GET /api/v1/masters/a2s/127.0.0.1:27011 as the server's
// kept lists would: \appid\440 lists 20,000 servers, \appid\730 lists 50,
// any other filter none. It records the filters asked. Every address is in
// 10.0.0.0/8, which the tests' relay refuses by its policy, without
// sending.
type fakeLists struct {
	mu      sync.Mutex
	filters []string
	bodies  map[string][]byte
}

func newFakeLists(t *testing.T) *fakeLists {
	t.Helper()
	f := &fakeLists{bodies: map[string][]byte{}}
	for _, g := range []struct {
		filter, prefix, game string
		n                    int
	}{{`\appid\440`, "tf2 server", "Team Fortress", 20000}, {`\appid\730`, "cs2 server", "Counter-Strike 2", 50}, {"", "", "", 0}} {
		f.bodies[g.filter] = fakeListBody(t, g.filter, g.prefix, g.game, g.n)
	}
	return f
}

// fakeListBody is the kept list of bigMaster with filter: n servers named
// prefix and a number, playing game, every 7th never asked.
func fakeListBody(t *testing.T, filter, prefix, game string, n int) []byte {
	t.Helper()
	spec, err := server.ParseMasterSpec(bigMaster)
	if err != nil {
		t.Fatal(err)
	}
	spec.Filter = filter
	list := server.MasterList{Master: spec, Fetched: time.Unix(1700000000, 0).UTC(), Complete: true, Pages: n/231 + 1, Servers: []server.Summary{}}
	for i := range n {
		addr := "10." + strconv.Itoa(i>>16) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":27015"
		ref, err := server.New("a2s", addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := server.Summary{Protocol: "a2s", Address: addr, Key: ref.Key().String(), Status: ref.Path(), Source: server.SourceHistory,
			State: server.Online, Name: prefix + " " + pad5(i), Map: []string{"ctf_2fort", "pl_upward", "cp_dustbowl"}[i%3], Game: game,
			Players: i % 25, MaxPlayers: 24, RTTSeconds: float64(i%300) / 1000, At: list.Fetched}
		if i%7 == 0 {
			s.State, s.Name = 0, "" // listed, never asked: "unknown"
		}
		list.Servers = append(list.Servers, s)
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordAskOrder runs before the page's scripts and keeps, in order, the
// keys of the servers the page asks its decoding worker for.
const recordAskOrder = `(() => {
  window.__qlAskOrder = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    if (m?.type === "ask") for (const a of m.asks) window.__qlAskOrder.push(a.key);
    return post.call(this, m, ...rest);
  };
})();`

// fakeIndex is the index in fakeLists of the server with key
// "a2s/10.A.B.C:27015", or -1.
func fakeIndex(key string) int {
	addr, ok := strings.CutPrefix(key, "a2s/10.")
	if !ok {
		return -1
	}
	host, _, _ := strings.Cut(addr, ":")
	parts := strings.Split(host, ".")
	if len(parts) != 3 {
		return -1
	}
	i := 0
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return -1
		}
		i = i<<8 | n
	}
	return i
}

func pad5(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", max(0, 5-len(s))) + s
}

func (f *fakeLists) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/masters/a2s/127.0.0.1:27011" {
		http.NotFound(w, r)
		return
	}
	filter := r.URL.Query().Get("filter")
	f.mu.Lock()
	f.filters = append(f.filters, filter)
	f.mu.Unlock()
	b, ok := f.bodies[filter]
	if !ok {
		b = f.bodies[""]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (f *fakeLists) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.filters)
}

// startBigStack serves the pages with a Steam master whose list the server
// keeps (fakeLists) and a relay that refuses every server of it.
func startBigStack(t *testing.T) (string, *fakeLists) {
	t.Helper()
	lists := newFakeLists(t)
	rs := relay.New(relay.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	spec, err := server.ParseMasterSpec(bigMaster)
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Exchanger: fakes, Masters: []server.MasterSpec{spec}, MasterLists: lists})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, rs, h), lists
}

// openBig opens the browse page at w×h and waits for the 20,000 rows.
func openBig(t *testing.T, ctx context.Context, base string, w, h int64) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h), chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the kept list's 20,000 rows shown", `globalThis.querylensBrowse?.counts().shown === 20000 && querylensBrowse.rendered() > 0`, 60*time.Second)
}

// inBodyOrder lists the aria-rowindex of the body's shown rows, in body
// order, when they are not increasing; none when they are.
const inBodyOrder = `(() => {
  const at = [...document.querySelectorAll("#rows > tr:not([hidden])")].map(tr => Number(tr.getAttribute("aria-rowindex")));
  return at.some((v, j) => j > 0 && v <= at[j - 1]) ? at.map(String) : [];
})()`

// misread lists the rows assistive technology reads (not hidden, not
// aria-hidden) that show another server than the one at their number
// (aria-rowindex) in the order shown.
const misread = `(() => {
  const v = querylensBrowse.view();
  return [...document.querySelectorAll("#rows > tr:not([hidden]):not([aria-hidden])")]
    .filter(tr => v[Number(tr.getAttribute("aria-rowindex")) - 2]?.key !== tr.dataset.key)
    .map(tr => tr.getAttribute("aria-rowindex") + " shows " + tr.dataset.key);
})()`

// drawn waits until the page has drawn the order for its last change.
const drawn = `querylensBrowse.whenDrawn().then(() => true)`

// drawnPainted waits, after drawn, for the frame that shows that order to
// be rendered: a task after the next animation frame's callbacks runs
// after that frame's style, layout and paint.
const drawnPainted = `querylensBrowse.whenDrawn().then(() => new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 0))))`

// TestBrowserBigList: a Steam master's list of 20,000 servers, kept by the
// server, on a phone and a desktop: the body holds a bounded number of
// rows, scrolling shows the last ones, a keystroke in the search finds a
// row far down, sorting orders, the status line counts, every row says
// which master listed it, nothing overlaps and names are readable, and
// picking a game reloads the list with that game's filter.
func TestBrowserBigList(t *testing.T) {
	needWasm(t)
	base, lists := startBigStack(t)
	ran := false // false where there is no browser and the sizes skip
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"desktop", 1300, 900}} {
		t.Run(size.name, func(t *testing.T) {
			ctx := tab(t)
			ran = true
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: recordAskOrder}); err != nil {
				t.Fatal(err)
			}
			openBig(t, ctx, base, size.w, size.h)
			// The servers are asked in the order shown: by players, most
			// first, the last known state online before the never-asked
			// (server i has i%25 players; every 7th was never asked).
			waitFor(t, ctx, "the first asks", `window.__qlAskOrder.length >= 8`, 30*time.Second)
			for j, k := range eval[[]string](t, ctx, `window.__qlAskOrder.slice(0, 8)`) {
				if i := fakeIndex(k); i < 0 || i%25 != 24 || i%7 == 0 {
					t.Errorf("ask %d is %s (server %d): want one of the rows shown first, with 24 players", j, k, i)
				}
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("#rows tr").length`); n > 100 {
				t.Errorf("%d <tr> in the body for 20,000 rows: want only the rows in view", n)
			}
			if got := eval[string](t, ctx, `document.getElementById("servers").getAttribute("aria-rowcount")`); got != "20001" {
				t.Errorf("aria-rowcount = %s, want 20001", got)
			}
			// Every row says which master listed it.
			if bad := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=server-row]:not([hidden]) [data-testid=cell-listed]")].map(c => c.textContent).filter(s => s !== "Steam")`); len(bad) > 0 {
				t.Errorf("rows listed by %q, want Steam", bad)
			}
			for _, p := range eval[[]string](t, ctx, layoutProblemsJS) {
				t.Error(p)
			}
			// A row's tooltips are written when it is pointed at: the
			// name's (with the master that listed it) and the listed
			// cell's; the row pointed at before loses its own.
			for _, n := range []int{2, 3} {
				xy := eval[[]float64](t, ctx, `(() => { const r = document.querySelector("[data-testid=server-row][aria-rowindex='`+strconv.Itoa(n)+`'] [data-testid=cell-listed]").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
				if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1])); err != nil {
					t.Fatal(err)
				}
				got := eval[struct{ Name, Want, Listed, Others string }](t, ctx, `(() => {
  const tr = document.querySelector("[data-testid=server-row][aria-rowindex='`+strconv.Itoa(n)+`']"), a = tr.querySelector("[data-testid=cell-name] a");
  const others = [...document.querySelectorAll("#rows [title]")].filter(e => !tr.contains(e)).map(e => e.outerHTML.slice(0, 80)).join(" ");
  return {name: a.title, want: a.textContent + " · listed by Steam", listed: tr.querySelector("[data-testid=cell-listed]").title, others};
})()`)
				if got.Name != got.Want || got.Listed != "listed by Steam" || got.Others != "" {
					t.Errorf("row %d pointed at: name title %q, want %q; listed title %q; titles elsewhere in the body: %q", n-1, got.Name, got.Want, got.Listed, got.Others)
				}
			}
			for _, p := range eval[[]string](t, ctx, visibleJS("[data-testid=server-row]:not([hidden]) [data-testid=cell-name] a", 80)) {
				t.Errorf("server name not readable: %s", p)
			}
			for _, p := range eval[[]string](t, ctx, visibleJS("[data-testid=server-row]:not([hidden]) [data-testid=cell-listed]", 30)) {
				t.Errorf("listed by not readable: %s", p)
			}
			// The status line counts the servers known, asked and answered.
			waitFor(t, ctx, "answers counted", `querylensBrowse.counts().answered > 0`, 30*time.Second)
			status := eval[string](t, ctx, `document.getElementById("progress-text").textContent`)
			c := eval[struct{ Known, Asked, Answered int }](t, ctx, `querylensBrowse.counts()`)
			if c.Known != 20000 || c.Asked == 0 || !strings.Contains(status, "20000 known") || !strings.Contains(status, " asked") || !strings.Contains(status, " answered") {
				t.Errorf("status line %q with counts %+v: want 20000 known, and how many asked and answered", status, c)
			}
			// Scroll to the end: the last rows are drawn.
			eval[bool](t, ctx, `(() => { const w = document.getElementById("table-wrap"); w.scrollTop = w.scrollHeight; return true; })()`)
			waitFor(t, ctx, "the last row drawn", `[...document.querySelectorAll("[data-testid=server-row]:not([hidden])")].some(tr => tr.getAttribute("aria-rowindex") === "20001")`, 10*time.Second)
			// In one task, so that no answer reorders the rows in between.
			ends := eval[[]string](t, ctx, `(() => { const v = querylensBrowse.view(), r = v[v.length - 1]; return [document.querySelector("[data-testid=server-row][aria-rowindex='20001'] [data-testid=cell-name] a").textContent, r.name || r.key.split("/")[1]]; })()`)
			if ends[0] != ends[1] {
				t.Errorf("the last row drawn is %q, want %q", ends[0], ends[1])
			}
			// Keystrokes in the search find a row far down the list.
			eval[bool](t, ctx, `(() => { const w = document.getElementById("table-wrap"); w.scrollTop = 0; return true; })()`)
			if err := chromedp.Do(ctx, chromedp.Focus("#q"), chromedp.KeyEvent("19990")); err != nil {
				t.Fatal(err)
			}
			eval[bool](t, ctx, drawn)
			found := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=server-row]:not([hidden]) [data-testid=cell-name] a")].map(a => a.textContent)`)
			if len(found) != 1 || found[0] != "tf2 server 19990" {
				t.Errorf("search 19990 shows %q, want the one row far down", found)
			}
			// The row elements no row needs now are out of sight, out of
			// reach and not read: above the table, their contents not
			// rendered (nor focusable), hidden from assistive technology.
			if bad := eval[[]string](t, ctx, `(() => {
  const top = document.getElementById("table-wrap").getBoundingClientRect().top;
  return [...document.querySelectorAll("#rows > tr[hidden]")].filter(tr => tr.getAttribute("aria-hidden") !== "true" ||
    tr.getBoundingClientRect().bottom > top || tr.querySelector("[data-fav]").checkVisibility() || tr.querySelector("[data-testid=cell-name] a").checkVisibility()).map(tr => tr.outerHTML.slice(0, 120));
})()`); len(bad) > 0 {
				t.Errorf("row elements not needed but in sight, in reach or read: %q", bad)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("#rows > tr[hidden]").length`); n == 0 {
				t.Error("no row element set aside after a search that shows one row")
			}
			// Sort by name, descending, over the rows of one search.
			if err := chromedp.Do(ctx, chromedp.Focus("#q"), chromedp.KeyEvent(kb.Backspace)); err != nil {
				t.Fatal(err)
			}
			eval[bool](t, ctx, drawn)
			// Answers change rows' states meanwhile, and reach view.js a
			// moment after this thread: a sort is judged on an order drawn
			// when no state changed in between (a few tries).
			for _, dir := range []int{1, -1} {
				var bad []string
				for try := 0; try < 10; try++ {
					eval[bool](t, ctx, `querylensBrowse.sort("name", `+strconv.Itoa(dir)+`).then(() => true)`)
					v := eval[[]struct{ Name, State string }](t, ctx, `querylensBrowse.view()`)
					// 01999, 11999 and 19990 to 19998 but 19992, which
					// have no name (never asked) and an address without
					// "1999".
					if len(v) != 10 {
						t.Fatalf("search 1999: %d rows, want 10", len(v))
					}
					bad = nil
					for i := 1; i < len(v); i++ {
						if v[i].State == v[i-1].State && v[i].Name != "" && v[i-1].Name != "" && dir*strings.Compare(v[i-1].Name, v[i].Name) > 0 {
							bad = append(bad, v[i-1].Name+" before "+v[i].Name)
						}
					}
					if len(bad) == 0 {
						break
					}
					time.Sleep(300 * time.Millisecond)
				}
				if len(bad) > 0 {
					t.Errorf("sort by name %+d: %q", dir, bad)
				}
			}
			eval[bool](t, ctx, `(() => { const q = document.getElementById("q"); q.value = ""; q.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`)
			eval[bool](t, ctx, drawn)
			// A new order for a full window (the other way round): the rows
			// out of sight still show the servers of the last order (they
			// are drawn when the order has stayed a moment), and none of
			// them is read as the row its number now says.
			if bad := eval[[]string](t, ctx, `querylensBrowse.sort("name", 1).then(() => `+misread+`)`); len(bad) > 0 {
				t.Errorf("after a new order, rows read by assistive technology show another server than their number's: %q", bad)
			}
			// The row elements are in the body in the order shown (read
			// and tabbed in that order), after a new order and a scroll.
			for _, step := range []struct{ name, top string }{{"the search cleared", ""}, {"a scroll", "3000"}, {"a scroll of ten rows", "3300"}} {
				if step.top != "" {
					// The page draws a scroll at the frame after its scroll
					// event: wait for that frame, so that whenSettled below
					// sees the draw the scroll queued (it resolved at once
					// when asked before the event, and the rows the scroll
					// then set aside were found still waiting).
					eval[bool](t, ctx, scrollAndDraw(step.top))
				}
				// Read in the task that settled: answers still coming in
				// may bring a new order between two evaluations, whose rows
				// out of sight are rightly hidden until drawn.
				got := eval[struct {
					Order   []string `json:"order"`
					Misread []string `json:"misread"`
					Hidden  int      `json:"hidden"`
				}](t, ctx, `querylensBrowse.whenSettled().then(() => ({order: `+inBodyOrder+`, misread: `+misread+`,
					hidden: document.querySelectorAll("#rows > tr:not([hidden])[aria-hidden]").length}))`)
				if len(got.Order) > 0 {
					t.Errorf("after %s, the body's rows out of order (aria-rowindex in body order): %q", step.name, got.Order)
				}
				if len(got.Misread) > 0 {
					t.Errorf("after %s, rows show another server than their number's: %q", step.name, got.Misread)
				}
				if got.Hidden > 0 {
					t.Errorf("after %s, the whole window drawn, %d rows still hidden from assistive technology", step.name, got.Hidden)
				}
			}
			if size.name == "phone" {
				return
			}
			// A person picks a game: the Steam master's list is loaded again
			// with that game's filter, and replaces the old one.
			if err := chromedp.Do(ctx, chromedp.Focus("#f-game"), chromedp.KeyEvent("Counter-Strike 2 (730)"+kb.Enter)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the game's list shown", `querylensBrowse.counts().known === 50 && querylensBrowse.view().length === 50`, 20*time.Second)
			if got := lists.asked(); !slices.Contains(got, `\appid\730`) {
				t.Errorf("filters asked of the master list API: %q, want \\appid\\730", got)
			}
			if bad := eval[int](t, ctx, `querylensBrowse.view().filter(r => !r.key.startsWith("a2s/10.")).length`); bad != 0 {
				t.Errorf("%d rows not from the new list", bad)
			}
			if msg := eval[string](t, ctx, `document.getElementById("game-msg").textContent`); !strings.Contains(msg, `\appid\730`) {
				t.Errorf("game message %q, want it to name the filter", msg)
			}
			// Any app ID typed works too.
			eval[bool](t, ctx, `(document.getElementById("f-game").value = "", true)`)
			if err := chromedp.Do(ctx, chromedp.Focus("#f-game"), chromedp.KeyEvent("440"+kb.Enter)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the first list again", `querylensBrowse.counts().known === 20000`, 30*time.Second)
		})
	}
	if got := lists.asked(); ran && (len(got) == 0 || got[0] != `\appid\440`) {
		t.Errorf("first filter asked %q, want the configured \\appid\\440", got)
	}
}

// bigTimingTab opens the big list at 1300 × 900 in a tab of its own (the
// measurements outlast a tab's 90 s) and returns it with task, the
// renderer main thread's time so far in ms (CDP Performance.getMetrics
// TaskDuration, in thread ticks: the thread's own CPU time, not the wall
// clock a loaded machine stretches).
func bigTimingTab(t *testing.T) (context.Context, func() float64) {
	ctx, task, _ := bigTimingTabAt(t)
	return ctx, task
}

// bigTimingTabAt is bigTimingTab, and the address of the page's server;
// scripts run in the page before its own (recordAskOrder).
func bigTimingTabAt(t *testing.T, scripts ...string) (context.Context, func() float64, string) {
	t.Helper()
	needWasm(t)
	base, _ := startBigStack(t)
	tab(t) // starts the browser (or skips without one)
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(cancelT)
	for _, src := range scripts {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	openBig(t, ctx, base, 1300, 900)
	if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks}); err != nil {
		t.Fatal(err)
	}
	return ctx, func() float64 {
		m, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range m.Metrics {
			if x.Name == "TaskDuration" {
				return x.Value * 1000
			}
		}
		t.Fatal("no TaskDuration metric")
		return 0
	}, base
}

// waitAllAnswered waits, at most d, until the page has asked every server
// and has no ask left out.
func waitAllAnswered(t *testing.T, ctx context.Context, d time.Duration) {
	t.Helper()
	waitFor(t, ctx, "every server asked and answered", `(c => c.asked >= c.known && c.outstanding === 0)(querylensBrowse.counts())`, d)
}

// TestBrowserBigListTiming measures, with -page-timing, the page's
// main-thread time (CDP Performance.getMetrics TaskDuration in thread
// ticks: the CPU time of every task the renderer's main thread ran, which
// a trace of the same spans confirms) per filter keystroke, from the key
// to the frame that shows the new order painted, and per scroll step (a
// wheel notch, 120 px, to two frames later), with 20,000 rows while their
// asks run (the page loaded again before the scroll steps, and the
// conversations finished during each counted) and once all answered. Each
// is also given net of the measurement's own step (an evaluate and two
// frames, what waiting for the frame painted costs) taken between the
// keystrokes and between the scroll steps, which holds what the page does
// meanwhile as well:
//
//	go test ./web -run TestBrowserBigListTiming -page-timing -v
func TestBrowserBigListTiming(t *testing.T) {
	if !*pageTiming {
		t.Skip("a measurement: run with -page-timing")
	}
	ctx, task, base := bigTimingTabAt(t)
	// settle: after each keystroke, wait for the rows out of sight to be
	// drawn too (and time that); without it, the next key follows as soon
	// as the last one's order is painted, as when a person types on while
	// the list loads.
	// reload: load the page again before scrolling, so that the scroll
	// steps too share their frames with a refresh (typing in the first
	// page outlasts its refresh).
	measure := func(phase string, settle, reload bool) {
		// The cost of one measurement step alone (an evaluate and two
		// frames), with whatever else the page is doing meanwhile.
		var idle []float64
		step := func() float64 {
			t0 := task()
			eval[bool](t, ctx, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
			return task() - t0
		}
		for range 10 {
			idle = append(idle, step())
		}
		// The same step taken between the keystrokes and between the
		// scroll steps: what the page does meanwhile (a refresh paused by
		// typing, one going on while scrolling) and the measurement's own
		// cost, in the same conditions as the steps it is taken from.
		var keyIdle, scrollIdle []float64
		var keys []float64
		if err := chromedp.Do(ctx, chromedp.Focus("#q")); err != nil {
			t.Fatal(err)
		}
		// When each key came (its keydown, on the page's clock): the
		// latency a person sees, from the key to its order drawn.
		eval[bool](t, ctx, `(globalThis.__qlKeyAt ?? addEventListener("keydown", () => globalThis.__qlKeyAt = performance.now(), true), true)`)
		var keyToDrawn []float64
		// The rows the keystrokes drew: refilled with another server,
		// moved, and put in the table's body.
		type draws struct{ Refills, Moves, Inserts, Shared, Narrowed int }
		var keyDraws []draws
		// settled is each keystroke to its order drawn in the whole window
		// (the rows out of sight are drawn once typing pauses), with the
		// measurement step twice.
		var settled []float64
		// The keystrokes typed while servers were still being asked.
		streaming := 0
		// Each keystroke's query: from the page to view.js, view.js's
		// time on it, and from the page's query to its order drawn (ms).
		var toView, computing, toDrawn []float64
		merges := 0
		// The conversations the worker finished while typing and while
		// scrolling: how much streaming each step shared its frames with.
		done := func() int { return eval[int](t, ctx, `querylensBrowse.stats().done ?? 0`) }
		done0 := done()
		keyTasks := traceMainTasks(t, ctx, func() {
			defer profileJS(t, ctx, "typing")()
			// Twice: the p90 of 60 keystrokes is their sixth slowest.
			for _, k := range strings.Split(strings.Repeat("tf2 server 1999"+strings.Repeat(kb.Backspace, 15), 2), "") {
				d0 := eval[draws](t, ctx, `querylensBrowse.draws()`)
				if eval[bool](t, ctx, `(c => (`+stepMark+`, c.asked < c.known || c.outstanding > 0))(querylensBrowse.counts())`) {
					streaming++
				}
				if *pageProfile {
					eval[bool](t, ctx, `(console.timeStamp("ql-key"), true)`)
				}
				t0 := task()
				if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
					t.Fatal(err)
				}
				eval[bool](t, ctx, `(`+drawnPainted+`).then(v => (`+stepEnd+`, v))`)
				keys = append(keys, task()-t0)
				if settle {
					eval[bool](t, ctx, `querylensBrowse.whenSettled().then(() => true)`)
					settled = append(settled, task()-t0)
				}
				keyIdle = append(keyIdle, step())
				d1 := eval[draws](t, ctx, `querylensBrowse.draws()`)
				keyDraws = append(keyDraws, draws{d1.Refills - d0.Refills, d1.Moves - d0.Moves, d1.Inserts - d0.Inserts, d1.Shared - d0.Shared, d1.Narrowed - d0.Narrowed})
				if ot := eval[*orderTime](t, ctx, `(o => o && {...o, key: globalThis.__qlKeyAt ?? 0})(querylensBrowse.orderTimes(querylensBrowse.seq()))`); ot != nil && ot.Got > 0 && ot.Drawn > 0 {
					if ot.Key > 0 && ot.Key <= ot.Sent+1 {
						keyToDrawn = append(keyToDrawn, ot.Drawn-ot.Key)
					}
					if ot.Merge {
						merges++
					}
					toView = append(toView, ot.Got-ot.Sent)
					computing = append(computing, ot.Done-ot.Got)
					toDrawn = append(toDrawn, ot.Drawn-ot.Sent)
				}
			}
		})
		drawStats := func(f func(draws) int) string {
			v := make([]float64, len(keyDraws))
			for i, d := range keyDraws {
				v[i] = float64(f(d))
			}
			return stats(v)
		}
		done1 := done()
		typed := done1 - done0
		if reload {
			openBig(t, ctx, base, 1300, 900)
			done1 = done()
		}
		xy := eval[[]float64](t, ctx, `(() => { const w = document.getElementById("table-wrap"); w.scrollTop = 0; const r = w.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
		var frames []float64
		scrollTasks := traceMainTasks(t, ctx, func() {
			defer profileJS(t, ctx, "scrolling")()
			for range 60 {
				eval[bool](t, ctx, `(`+stepMark+`, true)`)
				t0 := task()
				// deltaX must be sent, and a zero would be left out.
				if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, xy[0], xy[1], func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 0.001, 120 })); err != nil {
					t.Fatal(err)
				}
				eval[bool](t, ctx, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => (`+stepEnd+`, r(true)))))`)
				frames = append(frames, task()-t0)
				scrollIdle = append(scrollIdle, step())
			}
		})
		if top := eval[float64](t, ctx, `document.getElementById("table-wrap").scrollTop`); top < 3000 {
			t.Errorf("the wheel scrolled to %.0f px", top)
		}
		done2 := done()
		c := eval[struct{ Known, Asked, Answered int }](t, ctx, `querylensBrowse.counts()`)
		profiled := ""
		if *pageProfile {
			profiled = " (profiled: inflated by the profiler)"
		}
		t.Logf("%s (%d known, %d asked, %d answered; conversations finished while typing %d, while scrolling %d); main-thread task ms, median / p90 / max%s:",
			phase, c.Known, c.Asked, c.Answered, typed, done2-done1, profiled)
		t.Logf("  measurement step alone: %s before typing; between the keystrokes %s; between the scroll steps %s", stats(idle), stats(keyIdle), stats(scrollIdle))
		t.Logf("  per filter keystroke (%d keys, %d of them while servers were being asked, to the frame showing the new order painted): %s; net of the measurement step between the keystrokes: %s",
			len(keys), streaming, stats(keys), stats(netOf(keys, keyIdle)))
		// The same spans in the trace: the tasks' thread (CPU) time, less
		// than their wall time when other processes held the cores.
		stepLog := func(what string, m mainTasks) {
			if len(m.stepCPU) == 0 {
				t.Logf("  per %s from the trace: no steps traced", what)
				return
			}
			t.Logf("  per %s from the trace (%d, the same span): main-thread tasks' thread (CPU) time %s; their wall time %s", what, len(m.stepCPU), stats(m.stepCPU), stats(m.stepWall))
		}
		stepLog("filter keystroke", keyTasks)
		if settle {
			t.Logf("  per filter keystroke to the whole window drawn (with the rows out of sight, two measurement steps): %s", stats(settled))
		}
		// Each keystroke in order, with the rows it refilled: the slowest
		// are those that refill the view (a digit of the search typed or
		// taken back), the others redraw the count and the box only.
		var each strings.Builder
		var refilling, others []float64
		for i, ms := range keys {
			fmt.Fprintf(&each, " %.1f(%d)", ms, keyDraws[i].Refills)
			if keyDraws[i].Refills > 0 {
				refilling = append(refilling, ms)
			} else {
				others = append(others, ms)
			}
		}
		t.Logf("  each keystroke, ms (rows refilled):%s", each.String())
		t.Logf("  keystrokes that refilled rows (%d): %s; the others (%d): %s", len(refilling), stats(refilling), len(others), stats(others))
		t.Logf("  rows per keystroke, median / p90 / max: refilled with another server %s; moved %s; put in the body %s",
			drawStats(func(d draws) int { return d.Refills }), drawStats(func(d draws) int { return d.Moves }), drawStats(func(d draws) int { return d.Inserts }))
		shared := 0
		for _, d := range keyDraws {
			if d.Shared > 0 {
				shared++
			}
		}
		t.Logf("  keystrokes whose order was read from the worker's shared memory at the frame showing the typed key: %d of %d", shared, len(keyDraws))
		narrowed := 0
		for _, d := range keyDraws {
			narrowed += d.Narrowed
		}
		t.Logf("  per keystroke's query (ms, median / p90 / max): from the page to view.js %s; view.js ordering %s; from the page's query to its order drawn %s; from the key to its order drawn %s; %d of them took in the changed rows, %d looked among a recent search's rows", stats(toView), stats(computing), stats(toDrawn), stats(keyToDrawn), merges, narrowed)
		t.Logf("  per scroll step (%d wheel steps of 120 px, one notch, two frames each): %s; net of the measurement step between the scroll steps: %s", len(frames), stats(frames), stats(netOf(frames, scrollIdle)))
		stepLog("scroll step", scrollTasks)
		t.Logf("  traced main-thread tasks while typing: %s", keyTasks)
		t.Logf("  traced main-thread tasks while scrolling: %s", scrollTasks)
		if *pageProfile {
			t.Logf("  main-thread thread ms by kind of work while typing (self time): %s", keyTasks.splitString())
			t.Logf("  main-thread thread ms by kind of work while scrolling (self time): %s", scrollTasks.splitString())
			t.Logf("  the tasks over 16 ms while typing, each by kind of work (self time):%s", keyTasks.longString())
			t.Logf("  the 8 keystrokes with the most main-thread time, to the next, by kind of work (self time):%s", keyTasks.keysString(8))
			if *pageProfileKeys {
				var b strings.Builder
				for _, k := range keyTasks.keys {
					b.WriteString("\n      " + splitOf(k, 12))
				}
				t.Logf("  every keystroke, in order, by kind of work (self time):%s", b.String())
			}
			sum := map[string]float64{}
			for _, k := range keyTasks.keys {
				for n, v := range k {
					sum[n] += v
				}
			}
			t.Logf("  all the keystrokes' time, to the next, by kind of work and function (self time): %s", splitOf(sum, 30))
			t.Logf("  invalidations while typing, by kind, reason and what changed: %s", splitOf(keyTasks.invalid, 24))
			t.Logf("  invalidations while scrolling, by kind, reason and what changed: %s", splitOf(scrollTasks.invalid, 24))
		}
	}
	measure("while the 20,000 servers are asked", false, true)
	waitAllAnswered(t, ctx, 5*time.Minute)
	measure("once every server answered", true, false)
}

// orderTime is querylensBrowse.orderTimes: when a query was sent, came to
// view.js, had its order written, and was drawn (ms on the page's clock),
// and whether it took in the changed rows; and when the key that sent it
// came.
type orderTime struct {
	Sent, Got, Done, Drawn float64
	Merge                  bool
	// Key is when the last key came (the test's keydown listener).
	Key float64
}

// netOf is each of steps less the median of the measurement step alone
// taken in the same conditions (idle).
func netOf(steps, idle []float64) []float64 {
	m := median(idle)
	out := make([]float64, len(steps))
	for i, v := range steps {
		out[i] = v - m
	}
	return out
}

// median is the middle of v (the upper one of an even count), as stats gives it.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// mainTasks sums up the renderer main thread's top-level tasks of a trace.
type mainTasks struct {
	n, over16 int
	wall, cpu []float64 // ms
	// stepCPU and stepWall are each step's main-thread tasks (those begun
	// from its stepMark to its stepEnd): their thread (CPU) time and their
	// wall time, ms.
	stepCPU, stepWall []float64
	lost              bool
	// split is, with -page-profile, the main thread's thread time by
	// trace event name, each event's own time (less its children's).
	split map[string]float64
	// layouts counts the Layout events, and dirty and total their
	// layout objects to lay out and in the tree.
	layouts, dirty, total int
	// restyled counts, with -page-profile, the elements whose style was
	// computed (UpdateLayoutTree events' elementCount).
	restyled int
	// invalid counts, with -page-profile, the invalidation tracking
	// events by kind, reason, node and what changed.
	invalid map[string]float64
	// keys is, with -page-profile, the split of the main thread's time
	// from each "ql-key" time stamp to the next (a keystroke and its
	// measurement), with the keystroke's number.
	keys []map[string]float64
	// long is, with -page-profile, the split of each task over 16 ms of
	// thread time, with each FunctionCall's function named, and the
	// elements it restyled and the layout objects it laid out.
	long []map[string]float64
}

// longString lists, for each task over 16 ms, its largest parts.
func (m mainTasks) longString() string {
	var b strings.Builder
	for _, l := range m.long {
		b.WriteString("\n      " + splitOf(l, 8))
	}
	return b.String()
}

// keysString lists the n keystrokes with the most time, most first.
func (m mainTasks) keysString(n int) string {
	total := func(s map[string]float64) float64 {
		v := 0.0
		for k, x := range s {
			if !strings.HasPrefix(k, "(") {
				v += x
			}
		}
		return v
	}
	ks := slices.Clone(m.keys)
	slices.SortFunc(ks, func(a, b map[string]float64) int { return cmpFloat(total(b), total(a)) })
	var b strings.Builder
	for i, k := range ks {
		if i == n {
			break
		}
		b.WriteString("\n      " + splitOf(k, 10))
	}
	return b.String()
}

// splitString lists split's largest parts, largest first.
func (m mainTasks) splitString() string {
	return strconv.Itoa(m.layouts) + " layouts of " + strconv.Itoa(m.dirty/max(1, m.layouts)) + " dirty objects of " +
		strconv.Itoa(m.total/max(1, m.layouts)) + " on average; " + splitOf(m.split, 14)
}

// splitOf lists split's n largest parts, largest first, after their total
// (of the ms: the parts named in parentheses are counts, left out of it).
func splitOf(split map[string]float64, n int) string {
	type part struct {
		name string
		ms   float64
	}
	var parts []part
	total := 0.0
	for k, v := range split {
		parts = append(parts, part{k, v})
		if !strings.HasPrefix(k, "(") { // a count, not ms
			total += v
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return int(b.ms*1000) - int(a.ms*1000) })
	var b strings.Builder
	b.WriteString("total " + strconv.FormatFloat(total, 'f', 1, 64))
	for i, p := range parts {
		if i == n || p.ms < 1 {
			break
		}
		b.WriteString(", " + p.name + " " + strconv.FormatFloat(p.ms, 'f', 0, 64))
	}
	return b.String()
}

// profileJS starts, with -page-profile, the page's CPU profiler; the
// function it returns stops it and logs the functions with the most self
// time.
func profileJS(t *testing.T, ctx context.Context, what string) func() {
	t.Helper()
	if !*pageProfile || !*pageProfileJS {
		return func() {}
	}
	if _, err := chromedp.Call(ctx, profiler.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, profiler.Start, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	return func() {
		res, err := chromedp.Call(ctx, profiler.Stop, cdp.Empty{})
		if err != nil || res.Profile == nil {
			t.Fatalf("the CPU profile: %v", err)
		}
		p := res.Profile
		self := map[int64]float64{}
		for i, id := range p.Samples {
			if i < len(p.TimeDeltas) && i+1 < len(p.TimeDeltas) {
				self[id] += float64(p.TimeDeltas[i+1]) / 1000
			}
		}
		byFunc := map[string]float64{}
		total := 0.0
		for _, n := range p.Nodes {
			ms := self[n.ID]
			if ms == 0 || n.CallFrame == nil {
				continue
			}
			name := n.CallFrame.FunctionName
			if name == "" {
				name = "(anonymous)"
			}
			if u := n.CallFrame.URL; u != "" {
				name += " " + u[strings.LastIndex(u, "/")+1:] + ":" + strconv.FormatInt(n.CallFrame.LineNumber+1, 10)
			}
			byFunc[name] += ms
			if name != "(idle)" {
				total += ms
			}
		}
		names := slices.Collect(maps.Keys(byFunc))
		slices.SortFunc(names, func(a, b string) int { return int(byFunc[b]*1000) - int(byFunc[a]*1000) })
		var b strings.Builder
		for i, n := range names {
			if i == 15 {
				break
			}
			b.WriteString("\n      " + strconv.FormatFloat(byFunc[n], 'f', 1, 64) + " ms " + n)
		}
		t.Logf("  CPU profile while %s, %.0f ms sampled but idle; the most self time:%s", what, total, b.String())
	}
}

func (m mainTasks) String() string {
	if m.n == 0 {
		return "none traced"
	}
	return strconv.Itoa(m.n) + " tasks, wall ms median / p90 / max " + stats(m.wall) + ", thread ms " + stats(m.cpu) +
		", " + strconv.Itoa(m.over16) + " over 16 ms of thread time"
}

// stepMark and stepEnd, evaluated in the page, mark the start and the end
// of a measured step in the trace (traceMain's stepCPU and stepWall).
const (
	stepMark = `performance.mark("ql-step")`
	stepEnd  = `performance.mark("ql-step-end")`
)

// traceMainTasks records a Chrome trace (category toplevel) while fn runs
// and returns the renderer main threads' top-level tasks: each task's wall
// duration and thread (CPU) duration; with -page-profile, the detail of
// traceMain too.
func traceMainTasks(t *testing.T, ctx context.Context, fn func()) mainTasks {
	t.Helper()
	return traceMain(t, ctx, *pageProfile, fn)
}

// traceMain is traceMainTasks, with the timeline's events and their
// analysis (the split by kind of work, the counts, the invalidations) when
// detail is set.
func traceMain(t *testing.T, ctx context.Context, detail bool, fn func()) mainTasks {
	t.Helper()
	var mu sync.Mutex
	var raw []jsonv2.Value
	done := make(chan bool, 1)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := chromedp.Listen(lctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			raw = append(raw, e.Value...)
			mu.Unlock()
		case *tracing.EventTracingComplete:
			select {
			case done <- e.DataLossOccurred:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	cats := []string{"toplevel", "__metadata", "blink.user_timing"}
	if detail {
		cats = append(cats, "devtools.timeline", "blink", "v8", "disabled-by-default-devtools.timeline.invalidationTracking")
	}
	if _, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{IncludedCategories: cats}}); err != nil {
		t.Fatal(err)
	}
	fn()
	if _, err := chromedp.Call(ctx, tracing.End, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	var m mainTasks
	select {
	case m.lost = <-done:
	case <-ctx.Done():
		t.Fatal("no end of the trace")
	}
	type event struct {
		Name, Ph      string
		Pid, Tid      int
		Ts, Dur, Tdur float64
		Args          struct {
			Name      string
			BeginData struct{ DirtyObjects, TotalObjects int }
			// ElementCount is, on an UpdateLayoutTree event, the
			// elements whose style was recalculated.
			ElementCount int `json:"elementCount"`
			Data         struct {
				FunctionName, URL string
				// The invalidation tracking events': why a node was
				// restyled or laid out, and what changed.
				Reason, NodeName, ChangedClass, ChangedAttribute, ChangedID, ChangedPseudo string
				// Message is a console.timeStamp's.
				Message string
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var evs []event
	main := map[[2]int]bool{}
	for _, v := range raw {
		var e event
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatal(err)
		}
		if e.Ph == "M" && e.Name == "thread_name" && e.Args.Name == "CrRendererMain" {
			main[[2]int{e.Pid, e.Tid}] = true
		}
		evs = append(evs, e)
	}
	// The steps fn marked (stepMark, stepEnd), in order.
	var starts, ends []float64
	for _, e := range evs {
		switch e.Name {
		case "ql-step":
			starts = append(starts, e.Ts)
		case "ql-step-end":
			ends = append(ends, e.Ts)
		}
	}
	slices.Sort(starts)
	slices.Sort(ends)
	if len(ends) > len(starts) {
		ends = ends[:len(starts)]
	}
	m.stepCPU = make([]float64, len(ends))
	m.stepWall = make([]float64, len(ends))
	for _, e := range evs {
		if e.Ph != "X" || !main[[2]int{e.Pid, e.Tid}] || (e.Name != "ThreadControllerImpl::RunTask" && e.Name != "RunTask") {
			continue
		}
		m.n++
		m.wall = append(m.wall, e.Dur/1000)
		m.cpu = append(m.cpu, e.Tdur/1000)
		if e.Tdur > 16000 {
			m.over16++
		}
		// A task begun within a step counts for it whole.
		if k, _ := slices.BinarySearch(starts, e.Ts); k > 0 && k <= len(ends) && e.Ts < ends[k-1] {
			m.stepCPU[k-1] += e.Tdur / 1000
			m.stepWall[k-1] += e.Dur / 1000
		}
	}
	if detail {
		m.invalid = map[string]float64{}
		for _, e := range evs {
			if !main[[2]int{e.Pid, e.Tid}] || !strings.HasSuffix(e.Name, "InvalidationTracking") {
				continue
			}
			d := e.Args.Data
			k := "(" + strings.TrimSuffix(e.Name, "InvalidationTracking") + " " + strings.Join(slices.DeleteFunc([]string{d.Reason, d.NodeName,
				d.ChangedClass, d.ChangedAttribute, d.ChangedID, d.ChangedPseudo}, func(s string) bool { return s == "" }), " ") + ")"
			m.invalid[k]++
		}
		// Each complete event's own thread time: its time less that of
		// the events it encloses, on the main thread.
		var xs []event
		for _, e := range evs {
			if e.Ph == "X" && main[[2]int{e.Pid, e.Tid}] && e.Tdur > 0 {
				xs = append(xs, e)
			}
		}
		slices.SortStableFunc(xs, func(a, b event) int {
			if a.Ts != b.Ts {
				return cmpFloat(a.Ts, b.Ts)
			}
			return cmpFloat(b.Dur, a.Dur)
		})
		m.split = map[string]float64{}
		type open struct {
			end         float64
			name, lname string             // lname: with a FunctionCall's function
			long        map[string]float64 // the split of the task over 16 ms it is in
		}
		// The keystrokes' time stamps, in order.
		var stamps []float64
		for _, e := range evs {
			if e.Name == "TimeStamp" && main[[2]int{e.Pid, e.Tid}] && e.Args.Data.Message == "ql-key" {
				stamps = append(stamps, e.Ts)
			}
		}
		slices.Sort(stamps)
		for i := range stamps {
			m.keys = append(m.keys, map[string]float64{"(key)": float64(i + 1)})
		}
		var stack []open
		for _, e := range xs {
			for len(stack) > 0 && stack[len(stack)-1].end <= e.Ts {
				stack = stack[:len(stack)-1]
			}
			name := e.Name
			if e.Name == "FunctionCall" && e.Args.Data.FunctionName != "" {
				name = "FunctionCall " + e.Args.Data.FunctionName + " " + path.Base(e.Args.Data.URL)
			}
			d := e.Tdur / 1000
			// The split of the task over 16 ms the event is in, and of
			// the keystroke it is in (after its time stamp): each gets its
			// time, less its children's, and its counts.
			var long, key map[string]float64
			if len(stack) > 0 {
				m.split[stack[len(stack)-1].name] -= d
				long = stack[len(stack)-1].long
			} else if e.Tdur > 16000 {
				long = map[string]float64{}
				m.long = append(m.long, long)
			}
			if k, _ := slices.BinarySearch(stamps, e.Ts); k > 0 {
				key = m.keys[k-1]
			}
			for _, sp := range []map[string]float64{long, key} {
				if sp == nil {
					continue
				}
				if len(stack) > 0 {
					sp[stack[len(stack)-1].lname] -= d
				}
				sp[name] += d
				switch e.Name {
				case "UpdateLayoutTree":
					sp["(elements restyled)"] += float64(e.Args.ElementCount)
				case "Layout":
					sp["(layout dirty objects)"] += float64(e.Args.BeginData.DirtyObjects)
				}
			}
			m.split[e.Name] += d
			stack = append(stack, open{e.Ts + e.Dur, e.Name, name, long})
			if e.Name == "UpdateLayoutTree" {
				m.restyled += e.Args.ElementCount
			}
			if e.Name == "Layout" {
				m.layouts++
				m.dirty += e.Args.BeginData.DirtyObjects
				m.total += e.Args.BeginData.TotalObjects
			}
		}
	}
	return m
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func stats(ms []float64) string {
	if len(ms) == 0 {
		return "none"
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	at := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return strconv.FormatFloat(at(0.5), 'f', 1, 64) + " / " + strconv.FormatFloat(at(0.9), 'f', 1, 64) + " / " + strconv.FormatFloat(s[len(s)-1], 'f', 1, 64)
}

var pageRefill = flag.Bool("page-refill", false, "measure the browse page's main-thread time per new order that refills every row in view, 20,000 rows answered (TestBrowserBigListRefill)")

// TestBrowserBigListRefill measures, with -page-refill, the main-thread
// time of a new order that refills every row in view (the cost behind a
// keystroke's slowest frames): the sort by name, one way then the other,
// 40 times, each to the frame that shows it painted, once every server
// answered, with the page's rows out of sight drawn before the next:
//
//	go test ./web -run TestBrowserBigListRefill -page-refill -v
func TestBrowserBigListRefill(t *testing.T) {
	if !*pageRefill {
		t.Skip("a measurement: run with -page-refill")
	}
	ctx, task := bigTimingTab(t)
	waitAllAnswered(t, ctx, 5*time.Minute)
	var ms, refills []float64
	tasks := traceMainTasks(t, ctx, func() {
		defer profileJS(t, ctx, "refilling")()
		for i := range 40 {
			d0 := eval[int](t, ctx, `querylensBrowse.draws().refills`)
			t0 := task()
			eval[bool](t, ctx, `querylensBrowse.sort("name", `+strconv.Itoa(1-2*(i%2))+`).then(() => new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 0))))`)
			ms = append(ms, task()-t0)
			eval[bool](t, ctx, `querylensBrowse.whenSettled().then(() => true)`)
			refills = append(refills, float64(eval[int](t, ctx, `querylensBrowse.draws().refills`)-d0))
		}
	})
	t.Logf("per new order refilling the rows in view, main-thread task ms, median / p90 / max: %s (rows refilled, in view and out of sight: %s)", stats(ms), stats(refills))
	t.Logf("  traced main-thread tasks: %s", tasks)
	if *pageProfile {
		t.Logf("  main-thread thread ms by kind of work (self time): %s", tasks.splitString())
	}
}

// TestBrowserBigListFloor measures, with -page-refill, what the browser
// itself costs the 20,000-row page, once every server answered, in
// main-thread ms to the frame after the one that shows the change (the
// keystroke timing's span): a frame that changes nothing; one that
// repaints every row in view (each row's background), laying out nothing;
// one that rewrites every text of the rows in view with another of those
// texts (laid out and repainted, no new word to shape); then a keystroke
// into the page's address box, which filters nothing (the box's own
// editing, its validity restyled), against one into the search box. Each
// kind is taken in turn, so that the machine's load falls on all alike:
//
//	go test ./web -run TestBrowserBigListFloor -page-refill -v
func TestBrowserBigListFloor(t *testing.T) {
	if !*pageRefill {
		t.Skip("a measurement: run with -page-refill")
	}
	ctx, task := bigTimingTab(t)
	waitAllAnswered(t, ctx, 5*time.Minute)
	n := eval[int](t, ctx, `(() => {
  const texts = [];
  for (const tr of document.querySelectorAll("#table-wrap tbody tr")) {
    if (tr.hidden) continue;
    const w = document.createTreeWalker(tr, NodeFilter.SHOW_TEXT);
    for (let n; (n = w.nextNode()); ) if (n.data.trim().length > 1) texts.push(n);
  }
  globalThis.__floor = {texts, was: texts.map((n) => n.data), k: 0};
  return texts.length;
})()`)
	if n == 0 {
		t.Fatal("no text in the rows in view")
	}
	frames := []struct{ name, js string }{
		{"nothing", ``},
		{"repaint", `for (const tr of document.querySelectorAll("#table-wrap tbody tr")) tr.style.backgroundColor = z.k % 2 ? "rgba(0,0,0,.01)" : "rgba(0,0,0,.02)";`},
		{"texts", `for (let j = 0; j < z.texts.length; j++) z.texts[j].data = z.was[(j + z.k * 7) % z.was.length];`},
	}
	ms := map[string][]float64{}
	// Before each change: two frames, and a task after them.
	const rest = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => r(true), 0))))`
	frame := func(name, js string) {
		eval[bool](t, ctx, rest)
		t0 := task()
		eval[bool](t, ctx, `new Promise(r => requestAnimationFrame(() => { const z = __floor; z.k++; `+js+` requestAnimationFrame(() => setTimeout(() => r(true), 0)); }))`)
		ms[name] = append(ms[name], task()-t0)
	}
	// A key, to the frame after the one that draws its order (none for
	// the address box), as TestBrowserBigListTiming times it; the search
	// box's keys apart by whether they refilled rows in view.
	key := func(name, box, k string) {
		eval[bool](t, ctx, `(document.getElementById("`+box+`").focus(), `+rest+`)`)
		if !eval[bool](t, ctx, `document.activeElement.id === "`+box+`"`) {
			t.Fatalf("#%s did not take the focus", box)
		}
		refills := eval[int](t, ctx, `querylensBrowse.draws().refills`)
		t0 := task()
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
		eval[bool](t, ctx, drawnPainted)
		d := task() - t0
		if box == "q" && eval[int](t, ctx, `querylensBrowse.draws().refills`) > refills {
			name += " (refilling)"
		}
		ms[name] = append(ms[name], d)
	}
	// The frames first, with every row in view shown (a search would hide
	// some), then the keystrokes.
	typed := strings.Split(strings.Repeat("tf2 server 1999"+strings.Repeat(kb.Backspace, 15), 2), "")
	for range typed {
		for _, f := range frames {
			frame(f.name, f.js)
		}
	}
	// The rows as the page drew them again (its refills write only the
	// texts that differ from what it wrote), and the address box's card,
	// closed until opened.
	eval[bool](t, ctx, `(() => {
  const z = __floor;
  z.texts.forEach((n, j) => n.data = z.was[j]);
  for (const tr of document.querySelectorAll("#table-wrap tbody tr")) tr.style.backgroundColor = "";
  document.querySelector("[data-testid=add-server]").open = true;
  return true;
})()`)
	for i, k := range typed {
		// The search box's key (its view refilled or not) and the address
		// box's, in turn, each box left focused as it was typed in.
		if i%2 == 0 {
			key("key, search box", "q", k)
			key("key, address box", "add-addr", k)
		} else {
			key("key, address box", "add-addr", k)
			key("key, search box", "q", k)
		}
	}
	t.Logf("main-thread ms to the frame after the change, median / p90 / max (%d rounds; %d texts in the rows in view):", len(typed), n)
	for _, name := range []string{"nothing", "repaint", "texts", "key, address box", "key, search box", "key, search box (refilling)"} {
		t.Logf("  %-28s %s (%d)", name, stats(ms[name]), len(ms[name]))
	}
	t.Logf("  per text rewritten, beyond a frame that changes nothing: %.0f µs at the median", (median(ms["texts"])-median(ms["nothing"]))*1000/float64(n))
}

// TestBrowserBigListRestyle counts the elements whose style the browser
// computes again for each kind of change the page makes to its row
// elements, each made to every row element in the body at once, then the
// next frame awaited, on the big list once every server answered (allowing
// a few elements the page restyles meanwhile): a row moved (its transform)
// restyles that row alone, not its cells (the browser's own vertical-align:
// inherit on cells made every cell of a row restyle with it); its number,
// id and key restyle nothing; a cell's text restyles nothing; a row dimmed
// or not restyles the row and the cells it greys, not their children. With
// -v it logs every count.
func TestBrowserBigListRestyle(t *testing.T) {
	ctx, _ := bigTimingTab(t)
	waitAllAnswered(t, ctx, 2*time.Minute)
	frame := `new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 0)))`
	// others is how many elements outside the rows the page may restyle
	// in the same frame (its progress line, as the auto-refresh asks a
	// server again): a change that restyled the rows' cells would restyle
	// hundreds.
	const others = 4
	for _, c := range []struct {
		name, js string
		max      func(rows int) int // the most elements it may restyle
	}{
		{"nothing", `0`, func(int) int { return others }},
		{"transform", `trs.forEach((tr, j) => tr.style.transform = "translateY(" + (j * 30 + 1) + "px)")`, func(n int) int { return n + others }},
		{"transform back", `trs.forEach((tr, j) => tr.style.transform = "translateY(" + (j * 30) + "px)")`, func(n int) int { return n + others }},
		{"id", `trs.forEach((tr, j) => tr.id = "row-x" + j)`, func(int) int { return others }},
		{"aria-rowindex", `trs.forEach((tr, j) => tr.setAttribute("aria-rowindex", String(j + 100)))`, func(int) int { return others }},
		{"data-i", `trs.forEach((tr, j) => tr.dataset.i = String(j + 100))`, func(int) int { return others }},
		{"data-key", `trs.forEach((tr, j) => tr.dataset.key = "k" + j)`, func(int) int { return others }},
		{"text", `trs.forEach((tr, j) => tr.cells[4].firstChild.data = "map" + j)`, func(int) int { return others }},
		{"href", `trs.forEach((tr, j) => tr.querySelector("a.name").href = "/x" + j)`, func(int) int { return others }},
		{"badge class", `trs.forEach((tr) => tr.querySelector(".state").className = "state state-offline")`, func(n int) int { return n + others }},
		{"aria-hidden", `trs.forEach((tr) => tr.setAttribute("aria-hidden", "true"))`, func(int) int { return others }},
		{"hidden", `trs.forEach((tr) => tr.hidden = true)`, func(n int) int { return n + others }},
		{"hidden off", `trs.forEach((tr) => tr.hidden = false)`, func(n int) int { return n + others }},
		// A row refilled with a server in another state: the row and the
		// cells it greys (app.css .dm), not every element in it.
		{"dim", `trs.forEach((tr) => tr.classList.toggle("dim"))`, func(n int) int { return 7*n + others }},
		{"dim back", `trs.forEach((tr) => tr.classList.toggle("dim"))`, func(n int) int { return 7*n + others }},
	} {
		var n int
		tasks := traceMain(t, ctx, true, func() {
			n = eval[int](t, ctx, `(() => { const trs = [...document.querySelectorAll("#rows > tr")]; `+c.js+`; return trs.length; })()`)
			eval[bool](t, ctx, frame)
		})
		t.Logf("%-15s on %d rows: %d elements restyled, %d layouts of %d dirty objects", c.name, n, tasks.restyled, tasks.layouts, tasks.dirty)
		if n == 0 || tasks.restyled > c.max(n) {
			t.Errorf("%s on %d row elements restyled %d elements, want at most %d", c.name, n, tasks.restyled, c.max(n))
		}
	}
}

// TestBrowserBigListTypingPausesRefresh: while a person types in the
// search of a 20,000-row list whose servers are being asked, the page asks
// no more servers (the answers that come are held), and once typing pauses
// the refresh goes on to its end with nothing left held. A sample counts
// only if taken within 350 ms of the key (the page waits 400 ms): on a
// machine too slow for that, the key is typed again, a few times.
func TestBrowserBigListTypingPausesRefresh(t *testing.T) {
	ctx, _ := bigTimingTab(t)
	type sample struct {
		Running       bool
		Samples, Grew int
	}
	var s sample
	for try := 0; try < 5 && s.Samples == 0; try++ {
		s = eval[sample](t, ctx, `(async () => {
  const c0 = querylensBrowse.counts();
  if (c0.asked >= c0.known && c0.outstanding === 0) return {running: false, samples: 0, grew: 0};
  const q = document.getElementById("q");
  q.value += "1";
  q.dispatchEvent(new Event("input", {bubbles: true}));
  const t0 = performance.now(), asked0 = querylensBrowse.counts().asked;
  let samples = 0, grew = 0;
  for (;;) {
    await new Promise(r => setTimeout(r, 20));
    if (performance.now() - t0 >= 350) break;
    samples++;
    if (querylensBrowse.counts().asked > asked0) grew++;
  }
  return {running: true, samples, grew};
})()`)
		if !s.Running {
			t.Fatal("the refresh was over before the first keystroke: nothing to pause")
		}
	}
	if s.Samples == 0 {
		t.Skip("no sample within 350 ms of a keystroke in 5 tries: the machine is too slow to tell")
	}
	if s.Grew > 0 {
		t.Errorf("servers were asked in %d of %d samples taken while typing", s.Grew, s.Samples)
	}
	waitAllAnswered(t, ctx, 5*time.Minute)
	waitFor(t, ctx, "no answer left held", `querylensBrowse.counts().held === 0`, 10*time.Second)
	if c := eval[struct{ Known, Asked, Answered int }](t, ctx, `querylensBrowse.counts()`); c.Asked < c.Known || c.Answered < c.Known {
		t.Errorf("after typing paused, %+v: want every server asked and answered", c)
	}
}

// TestBrowserBigListScrollPausesAsks: while a person scrolls a 20,000-row
// list whose servers are being asked, the page asks no more servers (the
// answers of those asked already are drawn as they come); once scrolling
// rests, the rows in view are asked before any other, and the refresh goes
// on to its end. The rows in view are read as the first ask leaves, in the
// order drawn then: the answers that follow move rows, and the rows in
// view with them (read once the page settled, they were other rows). A sample
// counts only if every moment since the last was within 200 ms of a
// scroll (the page waits 250): on a machine too slow for that, the
// scrolling is tried again, a few times.
func TestBrowserBigListScrollPausesAsks(t *testing.T) {
	ctx, _, _ := bigTimingTabAt(t, recordAskOrder)
	type sample struct {
		Running       bool
		Samples, Grew int
		// Window is the rows drawn (the rows in view and a few around
		// them) when the first ask left once scrolling rested; InView, the
		// rows in view then that were not asked before it rested; After,
		// the servers asked once it rested.
		Window        int
		InView, After []string
	}
	var s sample
	for try := 0; try < 5 && s.Samples == 0; try++ {
		s = eval[sample](t, ctx, `(async () => {
  const c0 = querylensBrowse.counts();
  if (c0.asked >= c0.known) return {running: false, samples: 0, grew: 0, window: 0, inView: [], after: []};
  const wrap = document.getElementById("table-wrap");
  let last = 0;
  const onScroll = () => last = performance.now();
  wrap.addEventListener("scroll", onScroll, {passive: true});
  const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  // Ahead of the refresh, which asks in the order shown (30 px a row).
  wrap.scrollTop = Math.min(c0.asked + 2000, c0.known - 200) * 30;
  await frame();
  let prev = querylensBrowse.counts().asked, prevAt = performance.now();
  let samples = 0, grew = 0;
  for (let i = 0; i < 25; i++) {
    wrap.scrollTop += 120;
    await frame();
    const now = performance.now(), asked = querylensBrowse.counts().asked;
    if (now - prevAt < 200 && now - last < 200) {
      samples++;
      if (asked > prev) grew++;
    }
    prev = asked;
    prevAt = now;
  }
  wrap.removeEventListener("scroll", onScroll);
  const n0 = window.__qlAskOrder.length;
  const before = new Set(window.__qlAskOrder);
  // As the first ask leaves: the rows in view in the order drawn.
  let first = null;
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    if (m?.type === "ask" && !first) {
      const keys = querylensBrowse.view().map(r => r.key);
      const head = wrap.querySelector("thead").offsetHeight;
      const inView = keys.slice(Math.floor(wrap.scrollTop / 30), Math.ceil((wrap.scrollTop + wrap.clientHeight - head) / 30));
      first = {window: document.querySelectorAll("#rows > tr:not([hidden])").length, inView: inView.filter(k => !before.has(k))};
    }
    return post.call(this, m, ...rest);
  };
  const t0 = performance.now();
  while ((!first || window.__qlAskOrder.length < n0 + first.window + 8) && performance.now() - t0 < 20000) await new Promise(r => setTimeout(r, 20));
  Worker.prototype.postMessage = post;
  return {running: true, samples, grew, ...(first ?? {window: 0, inView: []}), after: window.__qlAskOrder.slice(n0)};
})()`)
		if !s.Running {
			t.Skip("every server was asked before the scrolling began")
		}
	}
	if s.Samples == 0 {
		t.Skip("no sample within 200 ms of a scroll in 5 tries: the machine is too slow to tell")
	}
	t.Logf("%d samples while scrolling, servers asked in %d; once it rested, %d rows in view left to ask, %d rows drawn", s.Samples, s.Grew, len(s.InView), s.Window)
	if s.Grew > 0 {
		t.Errorf("servers were asked in %d of %d samples taken while scrolling", s.Grew, s.Samples)
	}
	if s.Window == 0 || len(s.InView) == 0 {
		t.Fatalf("once scrolling rested, no ask within 20 s, or no row in view left to ask (%d rows drawn, %d in view)", s.Window, len(s.InView))
	}
	// The rows in view not asked yet are among the first asks, those of
	// the rows drawn.
	if len(s.After) < s.Window {
		t.Fatalf("%d servers asked once scrolling rested, want the %d rows drawn at least", len(s.After), s.Window)
	}
	for _, k := range s.InView {
		if !slices.Contains(s.After[:s.Window], k) {
			t.Errorf("%s, in view once scrolling rested, is not among the first %d asks", k, s.Window)
		}
	}
	waitAllAnswered(t, ctx, 5*time.Minute)
	if c := eval[struct{ Known, Asked, Answered int }](t, ctx, `querylensBrowse.counts()`); c.Asked < c.Known || c.Answered < c.Known {
		t.Errorf("after scrolling rested, %+v: want every server asked and answered", c)
	}
}

// TestBrowserBigListSearch: once the 20,000 rows are answered, a search
// typed on (its text only growing), or typed back to with a backspace, is
// looked for among the rows a recent search found (view.js), and finds
// exactly the rows a search of every row finds; the page is cross-origin
// isolated, and each order is also in the memory it shares with view.js,
// the same as the order drawn.
func TestBrowserBigListSearch(t *testing.T) {
	ctx, _ := bigTimingTab(t)
	waitAllAnswered(t, ctx, 2*time.Minute)
	if !eval[bool](t, ctx, `globalThis.crossOriginIsolated === true`) {
		t.Fatal("the browse page is not cross-origin isolated: it can share no memory with its workers")
	}
	eval[bool](t, ctx, `querylensBrowse.sort("name", 1).then(() => true)`)
	keys := func() []string { return eval[[]string](t, ctx, `querylensBrowse.view().map(r => r.key)`) }
	narrowedSoFar := func() int { return eval[int](t, ctx, `querylensBrowse.draws().narrowed`) }
	// press types k in the search and returns the order drawn for it.
	press := func(k string) []string {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
		eval[bool](t, ctx, drawn)
		return keys()
	}
	if err := chromedp.Do(ctx, chromedp.Focus("#q")); err != nil {
		t.Fatal(err)
	}
	press("199")
	n0 := narrowedSoFar()
	narrowed := press("9")
	if n := narrowedSoFar(); n <= n0 {
		t.Errorf("the search 1999, typed on from 199 with no row changed, searched every row (orders found among a recent search's rows: %d before, %d after)", n0, n)
	}
	sh := eval[struct{ Keys []string }](t, ctx, `querylensBrowse.sharedOrder()`)
	if !slices.Equal(sh.Keys, narrowed) {
		t.Errorf("the shared memory's order (%d rows) is not the order drawn (%d rows)", len(sh.Keys), len(narrowed))
	}
	// Every row searched again: the sort turned and turned back.
	eval[bool](t, ctx, `querylensBrowse.sort("name", -1).then(() => querylensBrowse.sort("name", 1)).then(() => true)`)
	full := keys()
	if len(full) < 2 || !slices.Equal(narrowed, full) {
		t.Errorf("search 1999: %d rows found in the last search's rows, %d in every row:\n%q\n%q", len(narrowed), len(full), narrowed, full)
	}
	// Back and forth with a backspace: each search is found among the
	// rows of the same search made a moment ago, and finds them again.
	back := press(kb.Backspace)
	n1 := narrowedSoFar()
	if again := press("9"); !slices.Equal(again, full) {
		t.Errorf("search 1999 typed again: %d rows, want %d", len(again), len(full))
	}
	if again := press(kb.Backspace); !slices.Equal(again, back) || len(back) <= len(full) {
		t.Errorf("search 199 typed back to: %d rows, %d the first time (1999: %d)", len(again), len(back), len(full))
	}
	if n := narrowedSoFar(); n < n1+2 {
		t.Errorf("searches typed again were not found among the rows found a moment ago (%d before, %d after)", n1, n)
	}
}

// TestBrowserBigListSearchForeseen: a key typed in the search sends its
// query as the key comes (beforeinput), before the box takes it in, and
// the input that follows sends none: one query a key, each drawn as the
// search the box then says. Keys whose edit is not plain to see (a
// forward delete) or that the box refuses (its maxlength reached, the
// edit prevented) send the box's own search once it took them, or none.
func TestBrowserBigListSearchForeseen(t *testing.T) {
	ctx, _ := bigTimingTab(t)
	waitAllAnswered(t, ctx, 2*time.Minute)
	eval[bool](t, ctx, `querylensBrowse.sort("name", 1).then(() => true)`)
	if err := chromedp.Do(ctx, chromedp.Focus("#q")); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Seq      int
		Foreseen bool
		Box      string
		Keys     []string
	}
	read := func() state {
		return eval[state](t, ctx, `querylensBrowse.whenDrawn().then(() => ({seq: querylensBrowse.seq(), foreseen: querylensBrowse.orderTimes(querylensBrowse.seq())?.foreseen ?? false,
			box: document.getElementById("q").value, keys: querylensBrowse.view().map(r => r.key)}))`)
	}
	// every is the order a search of every row finds for the box's text:
	// the sort turned and turned back (no recent search's rows kept).
	every := func() []string {
		eval[bool](t, ctx, `querylensBrowse.sort("name", -1).then(() => querylensBrowse.sort("name", 1)).then(() => true)`)
		return read().Keys
	}
	press := func(k string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		setup    string // run in the page before the key
		key      string
		box      string // the box's text after the key
		queries  int    // the queries the key sends
		foreseen bool
	}{
		{"typed", ``, "1", "1", 1, true},
		{"typed on", ``, "9", "19", 1, true},
		{"typed in the middle", `q.setSelectionRange(1, 1)`, "8", "189", 1, true},
		{"backspace", `q.setSelectionRange(3, 3)`, kb.Backspace, "18", 1, true},
		{"over the selection", `q.setSelectionRange(0, 2)`, "7", "7", 1, true},
		{"selection deleted", `q.value = "1998"; q.dispatchEvent(new Event("input", {bubbles: true})); q.setSelectionRange(1, 3)`, kb.Backspace, "18", 1, true},
		{"forward delete", `q.setSelectionRange(0, 0)`, kb.Delete, "8", 1, false},
		{"refused", `q.maxLength = 1; q.setSelectionRange(1, 1)`, "5", "8", 0, false},
		{"prevented", `q.removeAttribute("maxlength"); q.addEventListener("beforeinput", e => e.preventDefault(), {once: true})`, "5", "8", 0, false},
		// Prevented once its query left: the box's search is sent after.
		{"prevented later", `addEventListener("beforeinput", e => e.preventDefault(), {once: true})`, "5", "8", 2, false},
		{"typed after", ``, "5", "85", 1, true},
	} {
		if c.setup != "" {
			eval[bool](t, ctx, `(q => { `+c.setup+`; return true; })(document.getElementById("q"))`)
		}
		before := read()
		press(c.key)
		// The refused key's check runs in a task after the key.
		eval[bool](t, ctx, `new Promise(r => setTimeout(() => r(true), 50))`)
		got := read()
		if got.Box != c.box {
			t.Fatalf("%s: the box says %q, want %q", c.name, got.Box, c.box)
		}
		if n := got.Seq - before.Seq; n != c.queries {
			t.Errorf("%s: %d queries sent, want %d", c.name, n, c.queries)
		}
		if c.queries > 0 && got.Foreseen != c.foreseen {
			t.Errorf("%s: the query foreseen %v, want %v", c.name, got.Foreseen, c.foreseen)
		}
		if want := every(); !slices.Equal(got.Keys, want) {
			t.Errorf("%s: %q shows %d rows, a search of every row %d", c.name, c.box, len(got.Keys), len(want))
		}
	}
}

// scrollAndDraw is a script that scrolls the table to top and resolves
// after the animation frame that follows the scroll event, in which the
// page draws what the scroll shows (its frame was asked first); at once
// when the table was there already.
func scrollAndDraw(top string) string {
	return `new Promise((done) => {
  const w = document.getElementById("table-wrap"), before = w.scrollTop;
  const seen = () => requestAnimationFrame(() => done(true));
  w.addEventListener("scroll", seen, { once: true });
  w.scrollTop = ` + top + `;
  if (w.scrollTop === before) { w.removeEventListener("scroll", seen); done(true); }
})`
}
