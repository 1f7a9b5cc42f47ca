package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// TestBrowserKeptMasters: the rows of the Steam-like and Quake III
// masters, whose lists the server keeps, show in the browse page and are
// asked like any other; none of their servers is configured otherwise.
// Small fleets ride along: the Quake III one on its master's list, the
// GameSpy v1 one configured, as `serve --demo-gamespy1-servers` lists it.
func TestBrowserKeptMasters(t *testing.T) {
	needWasm(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx, demo.Config{Servers: 2, A2SServers: 3, Quake3Servers: 3, GameSpy1Servers: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// As `querylens serve --demo` does: exactly the demo's addresses.
	own := []netip.AddrPort{netip.MustParseAddrPort(d.Master()), netip.MustParseAddrPort(d.A2SMaster()), netip.MustParseAddrPort(d.Quake3Master())}
	for _, tg := range append(d.Targets(), d.Fleet()...) {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
	}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow}, logger)
	specs := []server.MasterSpec{
		{Protocol: "zandronum", Addr: d.Master()},
		{Protocol: "a2s", Addr: d.A2SMaster(), Kept: true},
		{Protocol: "quake3", Addr: d.Quake3Master(), Kept: true},
	}
	k, err := masters.New(masters.Config{Masters: specs, Exchanger: rs, Allow: rs.CheckTarget, Logger: logger,
		Pacer: masters.NewLocalPacer(10*time.Millisecond, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	var configured []server.Ref
	for _, tg := range d.Fleet() {
		if tg.Protocol == "gamespy1" {
			configured = append(configured, tg.Ref())
		}
	}
	h, err := web.New(web.Config{Exchanger: rs, Masters: specs, Servers: configured, MasterLists: k, Logger: logger, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	var want []string
	for _, tg := range append(d.Targets(), d.Fleet()...) {
		// A server that needs options (the demo's A2S server that answers
		// INFO only) is listed without them: a master knows addresses only.
		if (tg.Protocol == "a2s" || tg.Protocol == "quake3") && tg.Behavior == demo.Normal && tg.Options == nil {
			want = append(want, tg.Protocol+"/"+netip.MustParseAddrPort(tg.Addr).String())
		}
	}
	for _, ref := range configured {
		want = append(want, ref.Protocol+"/"+ref.Addr)
	}
	tctx := tab(t)
	if err := chromedp.Do(tctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	missing := `(() => { const v = new Map((globalThis.querylensBrowse?.view() ?? []).map(r => [r.key, r])); return ` +
		jsArray(want) + `.filter(k => v.get(k)?.state !== "online").map(k => k + " " + (v.get(k)?.state ?? "absent") + ": " + (v.get(k)?.detail ?? "")); })()`
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](missing+`.length === 0`, chromedp.WithPollingTimeout(30*time.Second),
		chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("kept masters' servers not online in the page:\n%s", strings.Join(eval[[]string](t, tctx, missing), "\n"))
	}
}
