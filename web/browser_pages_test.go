package web_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/web"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// normalTargets are the demo servers that answer promptly and completely.
func normalTargets(d *demo.Demo) []demo.Target {
	var out []demo.Target
	for _, tg := range d.Targets() {
		if tg.Behavior == demo.Normal {
			out = append(out, tg)
		}
	}
	return out
}

func TestBrowserBrowse(t *testing.T) {
	needWasm(t)
	st := startStack(t, 8)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
		t.Fatal(err)
	}
	// The servers the Go codecs read directly: the page, which reads them
	// through the relay, must show every one of them, with the same name.
	var want []demo.Target
	truth := map[string]*codecs.Message{}
	for _, tg := range normalTargets(st.Demo) {
		m, err := goQuery(t, st, tg)
		if err != nil || m.Info == nil {
			t.Logf("not expected online: %s %s: %v", tg.Protocol, tg.Addr, err)
			continue
		}
		want = append(want, tg)
		truth[tg.Protocol+"/"+tg.Addr] = m
	}
	if len(want) == 0 {
		t.Fatal("no demo server answers the Go codecs")
	}
	// Every normal server, from the master list or the configured extras,
	// answers and shows its name, decoded in the page.
	missing := `(() => { const v = new Map((globalThis.querylensBrowse?.view() ?? []).map(r => [r.key, r])); return ` +
		jsArray(keys(want)) + `.filter(k => v.get(k)?.state !== "online").map(k => k + " " + (v.get(k)?.state ?? "absent") + ": " + (v.get(k)?.detail ?? "")); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](missing+`.length === 0`, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("servers the Go codecs decode directly are not online in the page:\n%s", strings.Join(eval[[]string](t, ctx, missing), "\n"))
	}
	type row struct {
		Key, Name, State, Protocol string
		Players                    int
	}
	rows := eval[[]row](t, ctx, `querylensBrowse.view()`)
	byKey := map[string]row{}
	for _, r := range rows {
		byKey[r.Key] = r
	}
	// The page's names are what the Go codecs decode from the same server.
	protocols := map[string]bool{}
	for _, tg := range want {
		r := byKey[tg.Protocol+"/"+tg.Addr]
		m := truth[tg.Protocol+"/"+tg.Addr]
		if r.Name != codecs.StripColors(m.Info.Name) {
			t.Errorf("%s %s: name %q in the page, the Go decoder says %+v", tg.Protocol, tg.Addr, r.Name, m.Info)
		}
		protocols[tg.Protocol] = true
	}
	if len(protocols) < 2 {
		t.Errorf("only %v among the answering servers", protocols)
	}
	// The names are in the table's DOM too, not only in the JS array. The
	// table draws only the rows in view, so the Zandronum rows are shown
	// alone (the protocol filter) while their cells are read; it is
	// redrawn a moment after the data changes, so wait for it.
	setProtocol := func(p string) {
		eval[bool](t, ctx, `(s => (s.value = `+strconv.Quote(p)+`, s.dispatchEvent(new Event("input", {bubbles: true})), true))(document.getElementById("f-protocol"))`)
	}
	setProtocol("zandronum")
	cellsJS := `[...document.querySelectorAll("[data-testid=server-row][data-state=online] [data-testid=cell-name] a")].map(a => a.textContent)`
	var wantNames []string
	for _, tg := range want {
		if tg.Protocol == "zandronum" {
			wantNames = append(wantNames, codecs.StripColors(tg.Name))
		}
	}
	chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const c = new Set(`+cellsJS+`); return `+jsArray(wantNames)+`.every(n => c.has(n)); })()`,
		chromedp.WithPollingTimeout(5*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	cells := eval[[]string](t, ctx, cellsJS)
	for _, tg := range want {
		if tg.Protocol != "zandronum" {
			continue
		}
		found := false
		for _, c := range cells {
			found = found || c == codecs.StripColors(tg.Name)
		}
		if !found {
			t.Errorf("%q not among the rendered names %q", codecs.StripColors(tg.Name), cells)
		}
	}
	setProtocol("")
	waitFor(t, ctx, "the relay latency in the header", `/relay: [\d.]+ ms/.test(document.getElementById("top-status").textContent)`, 5*time.Second)
	progress := eval[string](t, ctx, `document.getElementById("progress-text").textContent`)
	if !strings.Contains(progress, "answered") {
		t.Errorf("progress text %q", progress)
	}
	// Wait for the stragglers (slow, silent) so the screenshot shows states.
	waitFor(t, ctx, "all servers settled", `querylensBrowse.view().every(r => r.state !== "pending" && r.state !== "querying")`, 15*time.Second)
	states := eval[map[string]int](t, ctx, `querylensBrowse.view().reduce((m, r) => (m[r.state] = (m[r.state] ?? 0) + 1, m), {})`)
	t.Logf("row states: %v", states)
	first := eval[float64](t, ctx, `globalThis.qlFirstDecodeMs ?? -1`)
	t.Logf("browse: first decode %.0f ms after navigation start", first)
	shoot(t, ctx, "browse.png")
}

// goQuery asks tg with the Go codecs over direct UDP (loopback), not
// through the relay, so the page's own queries meet a cold relay cache: what
// the page shows must match what this decodes.
func goQuery(t *testing.T, st *stack, tg demo.Target) (*codecs.Message, error) {
	t.Helper()
	c, err := codecs.Lookup(tg.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(tg.Options)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	u := &netquery.UDP{Timeout: 2 * time.Second}
	if _, err := u.Exchange(ctx, tg.Protocol, tg.Addr, q); err != nil {
		return nil, err
	}
	return q.Result(codecs.DecodeOptions{})
}

func keys(ts []demo.Target) []string {
	var out []string
	for _, tg := range ts {
		out = append(out, tg.Protocol+"/"+tg.Addr)
	}
	return out
}

func jsArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = jsString(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// TestBrowserTable checks sorting and filtering on 1,000 synthetic rows,
// and that only the rows in view are in the DOM. It checks results, not
// speed; timings are logged for the record.
func TestBrowserTable(t *testing.T) {
	needWasm(t)
	st := startStackNoMaster(t)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(st+"/")); err != nil {
		t.Fatal(err)
	}
	// Inject after the page's own start, so its first round of queries
	// cannot touch the synthetic rows.
	waitFor(t, ctx, "the page's start", `globalThis.querylensBrowse?.ready === true`, 10*time.Second)
	type syn struct {
		Name     string
		Players  int
		Ping     int
		Mode     string
		Password bool
	}
	var list []syn
	modes := []string{"Capture the Flag", "Deathmatch", "Duel"}
	for i := 0; i < 1000; i++ {
		list = append(list, syn{Name: fmt.Sprintf("server %04d", (i*7919)%1000), Players: i % 17, Ping: (i * 37) % 300, Mode: modes[i%3], Password: i%5 == 0})
	}
	var js strings.Builder
	js.WriteString("(async () => { const t0 = performance.now(); await querylensBrowse.inject([")
	for i, s := range list {
		fmt.Fprintf(&js, `{addr:"127.0.0.%d:%d",name:%s,players:%d,max:16,ping:%d,mode:%s,password:%v},`, i/250+1, 10000+i, jsString(s.Name), s.Players, s.Ping, jsString(s.Mode), s.Password)
	}
	js.WriteString("]); return performance.now() - t0; })()")
	injectMs := eval[float64](t, ctx, js.String())

	type vrow struct {
		Name    string
		Players int
		Ping    int
	}
	view := func() []vrow { return eval[[]vrow](t, ctx, `querylensBrowse.view()`) }
	timed := func(expr string) float64 {
		return eval[float64](t, ctx, `(async () => { const t0 = performance.now(); `+expr+`; return performance.now() - t0; })()`)
	}
	sortMs := timed(`await querylensBrowse.sort("name", 1)`)
	v := view()
	if len(v) != 1000 {
		t.Fatalf("view has %d rows, want 1000", len(v))
	}
	if !sort.SliceIsSorted(v, func(i, j int) bool { return v[i].Name < v[j].Name }) {
		t.Errorf("not sorted by name ascending: %v …", v[:5])
	}
	timed(`await querylensBrowse.sort("players", -1)`)
	v = view()
	for i := 1; i < len(v); i++ {
		if v[i].Players > v[i-1].Players {
			t.Fatalf("players not descending at %d: %d after %d", i, v[i].Players, v[i-1].Players)
		}
	}
	timed(`await querylensBrowse.sort("ping", 1)`)
	v = view()
	for i := 1; i < len(v); i++ {
		if v[i].Ping < v[i-1].Ping {
			t.Fatalf("ping not ascending at %d", i)
		}
	}
	if n := eval[int](t, ctx, `querylensBrowse.rendered()`); n == 0 || n > 120 {
		t.Errorf("%d rows in the DOM for 1000 servers: the body must be virtualised", n)
	}
	// The row elements stay in the body in the order shown (read and
	// tabbed in that order) as a scroll moves the window both ways.
	for _, top := range []int{300, 900, 600, 0} {
		eval[bool](t, ctx, `(() => { document.getElementById("table-wrap").scrollTop = `+strconv.Itoa(top)+`; return true; })()`)
		eval[bool](t, ctx, `querylensBrowse.whenSettled().then(() => true)`)
		if bad := eval[[]string](t, ctx, inBodyOrder); len(bad) > 0 {
			t.Errorf("scrolled to %d px, the body's rows out of order (aria-rowindex in body order): %q", top, bad)
		}
	}
	// The keyboard moves through the rows, past the drawn ones, and a row
	// links to its server's status page.
	eval[bool](t, ctx, `(() => { const w = document.getElementById("table-wrap"); w.scrollTop = 0; w.focus(); return true; })()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowDown+kb.ArrowDown+kb.PageDown+kb.PageDown+kb.PageDown+kb.PageDown+kb.PageDown+kb.PageDown)); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, `querylensBrowse.whenDrawn().then(() => true)`)
	act := eval[[]string](t, ctx, `(() => { const w = document.getElementById("table-wrap"), id = w.getAttribute("aria-activedescendant"), tr = id && document.getElementById(id); return [id ?? "", tr?.classList.contains("active") ? "active" : "", tr?.querySelector("a.name")?.getAttribute("href") ?? "", tr && tr.getBoundingClientRect().top >= w.getBoundingClientRect().top && tr.getBoundingClientRect().bottom <= w.getBoundingClientRect().bottom + 1 ? "in view" : "out of view", String(querylensBrowse.rendered())]; })()`)
	if k, _ := strconv.Atoi(strings.TrimPrefix(act[0], "row-")); k < 40 || act[1] != "active" || !strings.HasPrefix(act[2], "/s/zandronum/127.0.0.") || act[3] != "in view" {
		t.Errorf("after two arrows and six pages down: active row %q (%s, link %q, %s, %s rows drawn)", act[0], act[1], act[2], act[3], act[4])
	}

	count := func(keep func(syn) bool) int {
		n := 0
		for _, s := range list {
			if keep(s) {
				n++
			}
		}
		return n
	}
	setFilter := func(js string) (int, float64) {
		ms := timed(js + `; document.getElementById("filters").dispatchEvent(new Event("input")); await querylensBrowse.rebuild()`)
		return len(view()), ms
	}
	for _, tc := range []struct {
		name string
		js   string
		want int
	}{
		{"search", `document.getElementById("q").value = "server 01"`, count(func(s syn) bool { return strings.Contains(s.Name, "server 01") })},
		{"hide empty", `document.getElementById("q").value = ""; document.getElementById("f-empty").checked = true`, count(func(s syn) bool { return s.Players > 0 })},
		{"max ping", `document.getElementById("f-empty").checked = false; document.getElementById("f-ping").value = "100"`, count(func(s syn) bool { return s.Ping <= 100 })},
		{"password", `document.getElementById("f-ping").value = ""; document.getElementById("f-password").value = "locked"`, count(func(s syn) bool { return s.Password })},
		{"hide full", `document.getElementById("f-password").value = ""; document.getElementById("f-full").checked = true`, count(func(s syn) bool { return s.Players < 16 })},
		{"mode", `document.getElementById("f-full").checked = false; document.getElementById("f-mode").value = "Duel"`, count(func(s syn) bool { return s.Mode == "Duel" })},
	} {
		got, ms := setFilter(tc.js)
		if got != tc.want {
			t.Errorf("filter %s: %d rows, want %d", tc.name, got, tc.want)
		}
		t.Logf("filter %s: %d rows in %.1f ms", tc.name, got, ms)
	}
	t.Logf("1000 rows: inject+render %.1f ms, sort by name %.1f ms", injectMs, sortMs)
}

// startStackNoMaster serves the pages with a relay but no servers, for
// tests that inject their own rows.
func startStackNoMaster(t *testing.T) string {
	t.Helper()
	rs := relay.New(relay.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h, err := web.New(web.Config{Exchanger: fakes})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, rs, h)
}

// zandronumTarget is the first normal Zandronum server for which keep is
// true.
func zandronumTarget(t *testing.T, st *stack, keep func(demo.Target) bool) demo.Target {
	t.Helper()
	for _, x := range normalTargets(st.Demo) {
		if x.Protocol == "zandronum" && keep(x) {
			return x
		}
	}
	t.Fatal("no suitable Zandronum server in the demo")
	return demo.Target{}
}

func TestBrowserStatus(t *testing.T) {
	needWasm(t)
	st := startStack(t, 8)
	// A Zandronum server with people on it.
	tg := zandronumTarget(t, st, func(x demo.Target) bool {
		m, err := goQuery(t, st, x)
		return err == nil && m.Info != nil && len(m.Info.Players) > 0
	})
	url := st.URL + "/s/zandronum/" + tg.Addr
	// Without JavaScript: the raw HTML carries the state, players and the
	// tags link unfurlers read.
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	d := ht.Parse(t, body)
	if got := ht.Attr(d.TestID(t, "status"), "data-state"); got != "online" {
		t.Fatalf("state %q: %s", got, ht.Text(d.TestID(t, "status")))
	}
	name := codecs.StripColors(tg.Name)
	if got := ht.Text(d.TestID(t, "server-name")); got != name {
		t.Errorf("name %q, want %q", got, name)
	}
	for _, k := range []string{"og:title", "og:description", "og:type", "og:url", "og:image", "twitter:card", "twitter:title", "description"} {
		if v, ok := d.Meta(k); !ok || v == "" {
			t.Errorf("meta %s missing", k)
		}
	}
	if v, _ := d.Meta("og:title"); !strings.Contains(v, name) {
		t.Errorf("og:title %q lacks the name", v)
	}
	if n := len(d.TestIDs("player-row")); n == 0 {
		t.Errorf("no player rows in the raw HTML")
	}
	if got := ht.Attr(d.TestID(t, "join-link"), "href"); got != "zds://"+tg.Addr+"/za" {
		t.Errorf("join link %q", got)
	}

	// With JavaScript: the page stays live by swapping in the article the
	// server renders again (GET …/live). Take the players out of the DOM
	// and open "All decoded fields" first: the refresh must bring the
	// players back and leave the fields open.
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live refresh hook", `!!globalThis.querylensStatus`, 10*time.Second)
	eval[bool](t, ctx, `(() => { document.querySelectorAll("[data-testid=player-row]").forEach((e) => e.remove()); const d = document.querySelector("details[data-testid=fields]"); if (d) d.open = true; return true; })()`)
	hasFields := eval[bool](t, ctx, `!!document.querySelector("details[data-testid=fields]")`)
	eval[bool](t, ctx, `querylensStatus.refresh().then(() => true)`)
	if got := eval[string](t, ctx, `document.querySelector("[data-testid=status]").dataset.state`); got != "online" {
		t.Errorf("after the live refresh the state is %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("[data-testid=server-name]").textContent`); got != name {
		t.Errorf("live name %q, want %q", got, name)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("[data-testid=player-row]").length`); n == 0 {
		t.Errorf("no players after the live refresh")
	}
	if hasFields && !eval[bool](t, ctx, `document.querySelector("details[data-testid=fields]").open`) {
		t.Errorf("the live refresh closed \"All decoded fields\" under the reader")
	}
	if got := eval[string](t, ctx, `document.getElementById("live-state").textContent`); !strings.Contains(got, "live, every") {
		t.Errorf("live state %q", got)
	}
	if got := eval[string](t, ctx, `document.title`); !strings.HasPrefix(got, name+" · Online") {
		t.Errorf("title after the refresh %q", got)
	}
	// The page decodes nothing itself: no decoder, no relay connection.
	if eval[bool](t, ctx, `"querylens" in globalThis`) {
		t.Error("the status page loaded the decoder")
	}
	shoot(t, ctx, "status.png")
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", resp.Request.URL, resp.StatusCode)
	}
	return []byte(b.String())
}

// recorder keeps the datagrams of a conversation.
type recorder struct {
	codecs.Query
	got [][]byte
}

func (r *recorder) Feed(b []byte) ([][]byte, bool, error) {
	r.got = append(r.got, append([]byte(nil), b...))
	return r.Query.Feed(b)
}

func TestBrowserInspect(t *testing.T) {
	needWasm(t)
	st := startStack(t, 8)
	tg := zandronumTarget(t, st, func(demo.Target) bool { return true })
	// Capture a real reply (one datagram, not segmented) through the relay.
	c, _ := codecs.Lookup("zandronum")
	q, err := c.NewQuery(map[string]string{"segmented": "false"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Query: q}
	qctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := st.Relay.Exchange(qctx, "zandronum", tg.Addr, rec); err != nil || len(rec.got) != 1 {
		t.Fatalf("capture a reply from %s: %v (%d datagrams)", tg.Addr, err, len(rec.got))
	}
	reply := hex.EncodeToString(rec.got[0])

	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/inspect")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the decoder", `!!globalThis.querylensInspect`, 10*time.Second)
	// Paste the packet with spaces, as people copy hex, and decode it.
	spaced := strings.TrimSpace(strings.Join(splitEvery(reply, 2), " "))
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#paste-hex`), spaced),
		chromedp.Click(chromedp.CSS(`[data-testid=paste-decode]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a field tree", `document.querySelectorAll("#tree [data-s]").length > 5`, 5*time.Second)
	if s := eval[string](t, ctx, `document.getElementById("decode-status").textContent`); !strings.Contains(s, "zandronum response") {
		t.Errorf("decode status %q", s)
	}
	layers := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=layer-tab]")].map(b => b.textContent)`)
	if len(layers) < 2 {
		t.Errorf("layers %q: want the wire and the Huffman-decoded payload", layers)
	}

	// Tree → hex: hovering a field highlights exactly its bytes.
	leaf := eval[[]int](t, ctx, `(() => { const n = [...document.querySelectorAll("#tree .node[data-s]:not([aria-expanded])")].find(n => /\bname\b/.test(n.querySelector(".fn").textContent)) ?? document.querySelector("#tree .node[data-s]:not([aria-expanded])"); n.id = "probe"; const [a, b] = n.querySelector(".fr").textContent.split(":").map(Number); return [a, b]; })()`)
	hover(t, ctx, "#probe")
	hl := eval[[]int](t, ctx, `[...document.querySelectorAll("#hex .x.hl")].map(e => Number(e.dataset.o))`)
	if len(hl) != leaf[1]-leaf[0] || (len(hl) > 0 && hl[0] != leaf[0]) {
		t.Errorf("hovering the field [%d,%d) highlighted bytes %v", leaf[0], leaf[1], hl)
	}
	// Hex → tree: hovering a byte highlights the field that holds it.
	hover(t, ctx, `#hex .x[data-o="2"]`)
	row := eval[string](t, ctx, `document.querySelector("#tree .node.hl")?.title ?? ""`)
	if row == "" {
		t.Errorf("hovering byte 2 highlighted no field row")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#hex .x.hl").length`); n == 0 {
		t.Errorf("hovering byte 2 highlighted no bytes")
	}
	hover(t, ctx, "#probe")
	shoot(t, ctx, "inspect.png")

	// A truncated packet keeps its partial tree and marks the error.
	cut := spaced[:len(spaced)*2/3]
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#paste-hex`), cut[:len(cut)-len(cut)%3]),
		chromedp.SetValue(chromedp.CSS(`#paste-protocol`), "zandronum"),
		chromedp.Click(chromedp.CSS(`[data-testid=paste-decode]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the error marked in the tree", `!!document.querySelector("[data-testid=tree-error]") || document.getElementById("decode-status").classList.contains("bad")`, 5*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll("#tree [data-s]").length`); n == 0 {
		t.Errorf("the partial tree of a truncated packet is empty")
	}

	// Build a query and send it through the relay: the sent and received
	// datagrams join the packet list, with the relay's round trip.
	gs := normalTargets(st.Demo)
	var other demo.Target
	for _, x := range gs {
		if x.Protocol != "zandronum" {
			other = x
			break
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#b-protocol`), other.Protocol),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("b-protocol").dispatchEvent(new Event("change"))`),
		chromedp.SetValue(chromedp.CSS(`#b-target`), other.Addr),
		chromedp.Click(chromedp.CSS(`[data-testid=build-send]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a received datagram in the packet list", `[...document.querySelectorAll("[data-testid=packet-row] td:nth-child(3)")].some(td => td.textContent.includes("recv"))`, 10*time.Second)
	if s := eval[string](t, ctx, `document.getElementById("decode-status").textContent`); !strings.Contains(s, other.Protocol) {
		t.Errorf("after sending, the decode status is %q", s)
	}

	// A permalink reopens the capture decoded; time the first decode.
	ctx2 := tab(t)
	if err := chromedp.Do(ctx2, chromedp.Navigate(st.URL+"/inspect#p=zandronum&h="+reply)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx2, "the permalink's packet decoded", `document.querySelectorAll("#tree [data-s]").length > 5`, 10*time.Second)
	ms := eval[float64](t, ctx2, `performance.getEntriesByName("ql-first-decode")[0]?.startTime ?? -1`)
	load := eval[float64](t, ctx2, `performance.getEntriesByName("ql-decoder-load")[0]?.duration ?? -1`)
	t.Logf("inspector: first decode %.0f ms after navigation start (decoder load %.0f ms)", ms, load)
	if got := eval[int](t, ctx2, `querylens.pcapng(querylensInspect.packets().map(p => ({time: p.time, direction: "received", target: "127.0.0.1:10666", data: p.data}))).length`); got < 100 {
		t.Errorf("pcapng export is %d bytes", got)
	}
}

func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
