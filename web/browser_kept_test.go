package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// growingList is a kept master's list the server is still fetching: each
// read finds keptStep more servers, until keptTotal, and the reads after
// the first are expected to ask only for what came since (?after=N).
type growingList struct {
	t     *testing.T
	spec  server.MasterSpec
	mu    sync.Mutex
	reads []string // the after parameter of each read ("" for none)
}

const keptStep, keptTotal = 200, 600

func (g *growingList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.reads = append(g.reads, r.URL.Query().Get("after"))
	have := min(keptStep*len(g.reads), keptTotal)
	g.mu.Unlock()
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	if after > have {
		after = 0
	}
	list := server.MasterList{Master: g.spec, Fetched: time.Unix(1700000000, 0).UTC(), Complete: have == keptTotal,
		Total: have, Offset: after, Servers: []server.Summary{}}
	for i := after; i < have; i++ {
		addr := "10.1." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255) + ":27015"
		ref, err := server.New("a2s", addr, nil)
		if err != nil {
			g.t.Error(err)
			return
		}
		list.Servers = append(list.Servers, server.Summary{Protocol: "a2s", Address: addr, Key: ref.Key().String(),
			Status: ref.Path(), Name: "growing " + strconv.Itoa(i)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

// TestBrowserKeptListGrows: while the server is still fetching a kept
// list, the page re-reads only what came since its last read, and ends
// with every server of the list in the table once.
func TestBrowserKeptListGrows(t *testing.T) {
	needWasm(t)
	spec, err := server.ParseMasterSpec(bigMaster)
	if err != nil {
		t.Fatal(err)
	}
	lists := &growingList{t: t, spec: spec}
	rs := relay.New(relay.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h, err := web.New(web.Config{Exchanger: fakes, Masters: []server.MasterSpec{spec}, MasterLists: lists})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the whole list shown", `globalThis.querylensBrowse?.counts().shown === `+strconv.Itoa(keptTotal), 60*time.Second)
	lists.mu.Lock()
	reads := append([]string(nil), lists.reads...)
	lists.mu.Unlock()
	want := []string{"", "200", "400"}
	if len(reads) != len(want) {
		t.Fatalf("reads with after = %q, want %q", reads, want)
	}
	for i := range want {
		if reads[i] != want[i] {
			t.Fatalf("reads with after = %q, want %q", reads, want)
		}
	}
	if n := eval[int](t, ctx, `querylensBrowse.counts().known`); n != keptTotal {
		t.Errorf("%d servers known, want %d", n, keptTotal)
	}
}

// pageList is a kept list the page comes with (web.KeptLister): the demo's
// A2S servers and a server the relay refuses, of which Current gives the
// first shown, as the server's cut of a longer list; reads records what
// the page read from GET /api/v1/masters/… (the after parameter).
type pageList struct {
	t       *testing.T
	spec    server.MasterSpec
	servers []server.Summary
	shown   int
	mu      sync.Mutex
	reads   []string
}

func (p *pageList) list(after, limit int) server.MasterList {
	end := min(after+limit, len(p.servers))
	return server.MasterList{Master: p.spec, Fetched: time.Unix(1700000000, 0).UTC(), Complete: true, Total: len(p.servers),
		Offset: after, Servers: append([]server.Summary{}, p.servers[after:end]...)}
}

func (p *pageList) Current(_ context.Context, protocol, addr string, limit int) (server.MasterList, bool) {
	if protocol != p.spec.Protocol || addr != p.spec.Addr {
		p.t.Errorf("Current(%s, %s), want the kept master %s", protocol, addr, p.spec)
		return server.MasterList{}, false
	}
	return p.list(0, min(limit, p.shown)), true
}

func (p *pageList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.reads = append(p.reads, r.URL.Query().Get("after"))
	p.mu.Unlock()
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(p.list(after, len(p.servers)))
}

// TestBrowserKeptListInPage: the page comes with the first servers of a
// kept list. They are shown, and their queries leave through the relay
// (built by the server, in the worker's boot), while the browser module
// cannot even be compiled; the page reads only the rest of the list from
// the server; the decoder, once in, takes over the queries that left (it
// sends none again: a Zandronum server answers an address once per 10 s)
// and the servers answer. The server the relay refuses is neither shown
// nor asked. For each protocol whose masters the server keeps and whose
// servers the demo runs over UDP.
func TestBrowserKeptListInPage(t *testing.T) {
	needWasm(t)
	ctx0, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx0, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 3, A2SServers: 3})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	for _, tc := range []struct{ protocol, spec string }{
		{"a2s", `a2s=127.0.0.1:27011?label=Steam`},
		{"zandronum", `zandronum=127.0.0.1:15300`},
	} {
		t.Run(tc.protocol, func(t *testing.T) { testKeptListInPage(t, d, tc.protocol, tc.spec) })
	}
}

func testKeptListInPage(t *testing.T, d *demo.Demo, protocol, master string) {
	spec, err := server.ParseMasterSpec(master)
	if err != nil {
		t.Fatal(err)
	}
	kept := &pageList{t: t, spec: spec}
	var own []netip.AddrPort
	for _, tg := range append(d.Targets(), d.Fleet()...) {
		if tg.Protocol != protocol || len(kept.servers) == 3 {
			continue
		}
		own = append(own, netip.MustParseAddrPort(tg.Addr))
		ref, err := server.New(protocol, tg.Addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		kept.servers = append(kept.servers, server.Summary{Protocol: protocol, Address: tg.Addr, Key: ref.Key().String(), Status: ref.Path()})
	}
	if len(kept.servers) < 3 {
		t.Fatalf("the demo has %d %s servers, want 3", len(kept.servers), protocol)
	}
	refused := server.Summary{Protocol: protocol, Address: "10.9.9.9:27015", Key: protocol + "/10.9.9.9:27015", State: server.Refused}
	kept.servers = append(kept.servers[:1], append([]server.Summary{refused}, kept.servers[1:]...)...)
	kept.shown = 3 // two answering servers and the refused one; the rest is read
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{spec}, MasterLists: kept, Logger: logger, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	base, hold := serveHeld(t, rs, h)

	ctx := openPage(t, base+"/")
	first := []string{kept.servers[0].Key, kept.servers[2].Key}
	firstJS, _ := json.Marshal(first)
	waitFor(t, ctx, "the page's kept servers shown and their queries sent", `(() => {
		const sent = globalThis.querylensBrowse?.stats().sentAhead ?? [];
		return `+string(firstJS)+`.every((k) => sent.includes(k)) && querylensBrowse.counts().shown === `+strconv.Itoa(len(kept.servers)-1)+`;
	})()`, 20*time.Second)
	hold.waitAsked(t)
	if ready := eval[bool](t, ctx, `querylensBrowse.ready === true`); ready {
		t.Fatal("the decoder was ready while its module was held")
	}
	kept.mu.Lock()
	reads := append([]string(nil), kept.reads...)
	kept.mu.Unlock()
	if want := []string{"3"}; !slices.Equal(reads, want) {
		t.Errorf("the page read the list with after = %q, want %q (only what it did not come with)", reads, want)
	}

	hold.Release()
	waitFor(t, ctx, "the kept servers answered", `querylensBrowse.ready === true && querylensBrowse.view().filter(r => r.protocol === `+jsString(protocol)+` && r.state === "online").length === `+strconv.Itoa(len(kept.servers)-1), 20*time.Second)
	type ahead struct{ Sent, Adopted int }
	got := eval[struct {
		Ahead     ahead
		SentAhead []string
	}](t, ctx, `querylensBrowse.stats()`)
	if got.Ahead.Sent != got.Ahead.Adopted || got.Ahead.Sent < len(first) || slices.Contains(got.SentAhead, refused.Key) {
		t.Errorf("queries sent before the decoder was ready %+v (%q): want those of %q, each taken over by its conversation, none to the refused server", got.Ahead, got.SentAhead, first)
	}
	if view := eval[[]string](t, ctx, `querylensBrowse.view().map(r => r.key)`); slices.Contains(view, refused.Key) {
		t.Errorf("the refused server is shown: %q", view)
	}
}
