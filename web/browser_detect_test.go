package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/web"
)

// TestBrowserDetect adds demo servers on the browse page with the "Detect"
// protocol choice: the page, knowing none of them beforehand (no master, no
// configured servers), must find the protocol each one speaks and show it
// online; a silent server is reported as not answering and is not added.
func TestBrowserDetect(t *testing.T) {
	d, _, ctx := detectPage(t, testReplyWindow)
	add := func(addr string) string { return addByDetection(t, ctx, addr) }

	seen := map[string]bool{}
	for _, tg := range d.Targets() {
		// OGP 0.04 servers answer only a query with version=0.04, which
		// detection (each protocol's default query) does not send.
		if tg.Behavior != demo.Normal || tg.Options != nil {
			continue
		}
		msg := add(tg.Addr)
		title := ""
		for _, c := range codecs.Protocols() {
			if c.Name() == tg.Protocol {
				title = c.Title()
			}
		}
		if !strings.Contains(msg, title+" answered") {
			t.Errorf("%s %s: message %q, want %q answered", tg.Protocol, tg.Addr, msg, title)
		}
		type row struct{ Key, Protocol, State, Name string }
		rows := eval[[]row](t, ctx, `querylensBrowse.view().filter(r => r.key.endsWith("/"+`+jsString(tg.Addr)+`))`)
		if len(rows) != 1 || rows[0].Protocol != tg.Protocol || rows[0].State != "online" || rows[0].Name != codecs.StripColors(tg.Name) {
			t.Errorf("%s %s: rows %+v, want one online %s row named %q", tg.Protocol, tg.Addr, rows, tg.Protocol, tg.Name)
		}
		seen[tg.Protocol] = true
	}
	for _, p := range []string{"zandronum", "gamespy2", "ogp", "bloodmasters"} {
		if !seen[p] {
			t.Errorf("no demo server of %s was detected", p)
		}
	}

	for _, tg := range d.Targets() {
		if tg.Behavior != demo.Silent {
			continue
		}
		if msg := add(tg.Addr); !strings.Contains(msg, "No protocol answered") {
			t.Errorf("silent %s: message %q", tg.Addr, msg)
		}
		if n := eval[int](t, ctx, `querylensBrowse.view().filter(r => r.key.endsWith("/"+`+jsString(tg.Addr)+`)).length`); n != 0 {
			t.Errorf("silent %s was added (%d rows)", tg.Addr, n)
		}
	}
}

// detectPage serves the browse page with no master and no configured
// servers, through a relay that may reach the demo's servers and waits
// window for their replies, and opens the add form.
func detectPage(t *testing.T, window time.Duration) (*demo.Demo, *relay.Server, context.Context) {
	t.Helper()
	needWasm(t)
	ctx0, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx0, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey, IPRate: fast, ConnRate: fast, TargetHostRate: fast, ReplyWindow: window},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	h, err := web.New(web.Config{Exchanger: rs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)

	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the page to connect", `globalThis.querylensBrowse?.ready === true`, 20*time.Second)
	if n := eval[int](t, ctx, `querylensBrowse.view().length`); n != 0 {
		t.Fatalf("the page starts with %d rows; the test needs none", n)
	}
	if got := eval[string](t, ctx, `document.getElementById("add-protocol").value`); got != "detect" {
		t.Errorf("the add form's protocol starts as %q, want detect", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=add-server] summary`))); err != nil {
		t.Fatal(err)
	}
	return d, rs, ctx
}

// addByDetection adds addr with the Detect choice and returns the form's
// message once detection has ended.
func addByDetection(t *testing.T, ctx context.Context, addr string) string {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#add-protocol`), "detect"),
		chromedp.SetValue(chromedp.CSS(`#add-addr`), addr),
		chromedp.Click(chromedp.CSS(`[data-testid=add-submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	msg := `document.getElementById("add-msg").textContent`
	waitFor(t, ctx, "the detection of "+addr, msg+`.includes(`+jsString(addr)+`) && !`+msg+`.startsWith("Detecting")`, 15*time.Second)
	return eval[string](t, ctx, msg)
}

// TestBrowserDetectFreesSlots: once a protocol answers, detection ends the
// other protocols' queries at once (CANCEL), instead of leaving each in
// one of the connection's in-flight slots for the relay's whole reply
// window, where the next servers added waited on them. The relay here
// waits two minutes for replies: every upstream exchange must close long
// before, as soon as each server is found.
func TestBrowserDetectFreesSlots(t *testing.T) {
	d, rs, ctx := detectPage(t, 2*time.Minute)
	n := 0
	for _, tg := range d.Targets() {
		switch {
		case tg.Behavior != demo.Normal || tg.Options != nil:
			continue
		case tg.Protocol != "a2s" && tg.Protocol != "quake3" && tg.Protocol != "gamespy1" && tg.Protocol != "samp":
			continue // UDP protocols whose queries the relay holds open
		}
		if msg := addByDetection(t, ctx, tg.Addr); !strings.Contains(msg, " answered") {
			t.Fatalf("%s %s: %q", tg.Protocol, tg.Addr, msg)
		}
		deadline := time.Now().Add(30 * time.Second)
		for open := upstreamOpen(t, rs); open != 0; open = upstreamOpen(t, rs) {
			if time.Now().After(deadline) {
				t.Fatalf("after %s %s was found, the relay still holds %d upstream exchanges", tg.Protocol, tg.Addr, open)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n++; n == 3 {
			break
		}
	}
	if n < 3 {
		t.Fatalf("%d demo servers detected; the test needs 3", n)
	}
}

// relayMetric is the value of the relay's sample named name (with its
// labels, as the exposition spells them), and whether the relay has it (a
// labelled counter appears once it counted something).
func relayMetric(t *testing.T, rs *relay.Server, name string) (int, bool) {
	t.Helper()
	rec := httptest.NewRecorder()
	rs.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s %q: %v", name, v, err)
			}
			return n, true
		}
	}
	return 0, false
}

// upstreamOpen is the relay's querylens_relay_upstream_open gauge.
func upstreamOpen(t *testing.T, rs *relay.Server) int {
	t.Helper()
	n, ok := relayMetric(t, rs, "querylens_relay_upstream_open")
	if !ok {
		t.Fatal("no querylens_relay_upstream_open in the relay's metrics")
	}
	return n
}
