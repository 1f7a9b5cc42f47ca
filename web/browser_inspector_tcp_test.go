package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
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

// startStreamStack is startStack with the demo's TCP servers (Minecraft
// Java) among the addresses the relay may reach, and no configured
// servers: the inspector asks them itself.
func startStreamStack(t *testing.T) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 1})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var own []netip.AddrPort
	for _, tg := range append(d.Targets(), d.StreamTargets()...) {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
	}
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow,
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	h, err := web.New(web.Config{Exchanger: rs, Logger: logger, StatusTimeout: testStatusTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{URL: serve(t, rs, h), Demo: d, Relay: rs}
}

// streamTarget is the demo's first TCP server of protocol with behaviour b
// and no options.
func streamTarget(t *testing.T, d *demo.Demo, protocol string, b demo.Behavior) demo.Target {
	t.Helper()
	for _, tg := range d.StreamTargets() {
		if tg.Protocol == protocol && tg.Behavior == b && tg.Options == nil {
			return tg
		}
	}
	t.Fatalf("the demo has no %s server over TCP behaving %v", protocol, b)
	return demo.Target{}
}

// askFromForm opens the inspector with the query form set to protocol and
// target, presses Send through relay and waits until the exchange ended
// (the status line says what came, or that nothing did).
func askFromForm(t *testing.T, ctx context.Context, base, protocol, target string, w, h int64) {
	t.Helper()
	u := base + "/inspect?protocol=" + url.QueryEscape(protocol) + "&target=" + url.QueryEscape(target)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h), chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the inspector", `!!globalThis.querylensInspect && document.querySelector("[data-testid=build-protocol]").value === `+jsString(protocol), 15*time.Second)
	eval[bool](t, ctx, `(document.querySelector("[data-testid=build-send]").click(), true)`)
	waitFor(t, ctx, "the exchange to end", `!document.querySelector("[data-testid=build-send]").disabled && querylensInspect.packets().length > 0`, 30*time.Second)
}

// tcpPacket is what the tests read of a session packet.
type tcpPacket struct {
	Direction, Transport, End, Hex, Kind string
	Chunks, Stream                       int
}

const tcpPacketsJS = `querylensInspect.packets().map(p => ({direction: p.direction, transport: p.transport, end: p.end, hex: p.hex, kind: p.kind, chunks: p.chunks, stream: p.stream}))`

// TestBrowserInspectTCPExchange asks a demo Minecraft Java server from the
// inspector's form: the session shows the request the relay wrote and ONE
// reply, the CHUNKs joined, both marked TCP; the reply decodes whole into
// the server's description and players with their spans, and a field
// clicked selects its bytes. At a phone's width and a desktop's nothing
// overlaps and the name is readable. Its permalink (one h= buffer) opens
// the same decode.
func TestBrowserInspectTCPExchange(t *testing.T) {
	needWasm(t)
	st := startStreamStack(t)
	tg := streamTarget(t, st.Demo, "minecraft", demo.Normal)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ctx := tab(t)
			askFromForm(t, ctx, st.URL, "minecraft", tg.Addr, vp.w, vp.h)
			waitFor(t, ctx, "the reply", `querylensInspect.packets().some(p => p.direction === "received" && p.end !== "" && p.kind !== "…")`, 10*time.Second)
			pkts := eval[[]tcpPacket](t, ctx, tcpPacketsJS)
			if len(pkts) != 2 || pkts[0].Direction != "sent" || pkts[1].Direction != "received" {
				t.Fatalf("packets %+v, want the request sent and one reply", pkts)
			}
			for _, p := range pkts {
				if p.Transport != "tcp" || p.Stream != pkts[0].Stream {
					t.Errorf("packet %+v not marked TCP of one stream", p)
				}
			}
			if r := pkts[1]; r.End != "done" || r.Chunks < 1 || r.Kind != "response" {
				t.Errorf("reply %+v, want a whole response (END done)", r)
			}
			// The request is the handshake naming the target the relay
			// connected to, and the status request.
			if !strings.Contains(pkts[0].Hex, "3132372e302e302e31") || pkts[0].Kind != "query" {
				t.Errorf("request %s (%s), want a query naming 127.0.0.1", pkts[0].Hex, pkts[0].Kind)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("[data-testid=packet-row] [data-testid=tcp-badge]").length`); n != 2 {
				t.Errorf("%d TCP badges, want 2", n)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("[data-testid=tcp-end]").length`); n != 0 {
				t.Errorf("%d END warnings on a whole reply", n)
			}
			if got := eval[string](t, ctx, `document.querySelectorAll("[data-testid=packet-row]")[1].children[3].textContent`); got != strconv.Itoa(len(pkts[1].Hex)/2) {
				t.Errorf("size cell %q, want %d", got, len(pkts[1].Hex)/2)
			}
			// The reply is shown, decoded whole.
			waitFor(t, ctx, "the reply's fields", `document.querySelector("[data-testid=packet-row][aria-selected=true]")?.dataset.i === "1" && [...document.querySelectorAll("[data-testid=tree-row] .fn")].some(e => e.textContent === "players")`, 10*time.Second)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=decode-status]").textContent`); !strings.Contains(got, "minecraft response") || !strings.Contains(got, tg.Name) {
				t.Errorf("decode status %q, want the response and the name %q", got, tg.Name)
			}
			desc := eval[string](t, ctx, `[...document.querySelectorAll("[data-testid=tree-row]")].filter(e => e.title.startsWith("description")).map(e => e.querySelector(".fv").textContent).join("")`)
			for _, word := range strings.Fields(tg.Name) {
				if !strings.Contains(desc, word) {
					t.Errorf("description fields %q lack %q of the name %q", desc, word, tg.Name)
				}
			}
			// Clicking the players field selects exactly its bytes.
			span := eval[[]int](t, ctx, `(() => { const n = [...document.querySelectorAll("[data-testid=tree-row]")].find(e => e.querySelector(".fn").textContent === "players"); n.click(); return n.querySelector(".fr").textContent.split(":").map(Number); })()`)
			if len(span) != 2 || span[1] <= span[0] {
				t.Fatalf("players span %v", span)
			}
			sel := eval[[]int](t, ctx, `[...document.querySelectorAll("#hex .x.sel")].map(e => Number(e.dataset.o))`)
			if len(sel) != span[1]-span[0] || sel[0] != span[0] {
				t.Errorf("selected bytes %d from %v, want %d from %d", len(sel), sel[:min(len(sel), 1)], span[1]-span[0], span[0])
			}
			if probs := eval[[]string](t, ctx, layoutProblemsJS); len(probs) > 0 {
				t.Errorf("layout at %d px: %s", vp.w, strings.Join(probs, "; "))
			}
			if probs := eval[[]string](t, ctx, visibleJS("[data-testid=decode-status]", 120)); len(probs) > 0 {
				t.Errorf("the name at %d px: %s", vp.w, strings.Join(probs, "; "))
			}
			shoot(t, ctx, "inspect-tcp-"+vp.name+".png")
			// Edit and resend: the request loads and decodes, and sending
			// it says why it cannot go (the relay writes only its codec's
			// request), adding no packet.
			eval[bool](t, ctx, `(querylensInspect.select(0), document.querySelector("[data-testid=edit-selected]").click(), true)`)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-status]").textContent`); !strings.Contains(got, "minecraft query") {
				t.Errorf("edit status %q, want the request decoded", got)
			}
			eval[bool](t, ctx, `(document.querySelector("[data-testid=edit-send]").click(), true)`)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-result]").className + " " + document.querySelector("[data-testid=edit-result]").textContent`); !strings.Contains(got, "bad") || !strings.Contains(got, "speaks over TCP") {
				t.Errorf("edit result %q, want why a TCP request cannot be resent", got)
			}
			if n := eval[int](t, ctx, `querylensInspect.packets().length`); n != 2 {
				t.Errorf("%d packets after the refused resend, want 2", n)
			}
			// The permalink carries the request and the reply as one
			// buffer, which opens decoded whole.
			link := eval[string](t, ctx, `querylensInspect.permalink()`)
			if !strings.Contains(link, "&h="+pkts[1].Hex) || strings.Contains(link, ",") {
				t.Errorf("permalink %s, want the reply as one h= buffer", link)
			}
			openInspector(t, ctx, st.URL+"/inspect?again=1"+link[strings.Index(link, "#"):], vp.w, vp.h)
			waitFor(t, ctx, "the linked reply decoded", `document.querySelector("[data-testid=decode-status]").textContent.includes("minecraft response")`, 10*time.Second)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=decode-status]").textContent`); !strings.Contains(got, tg.Name) {
				t.Errorf("linked reply: decode status %q, want the name %q", got, tg.Name)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("[data-testid=packet-row] [data-testid=tcp-badge]").length`); n != 2 {
				t.Errorf("linked exchange: %d TCP badges, want 2", n)
			}
		})
	}
}
