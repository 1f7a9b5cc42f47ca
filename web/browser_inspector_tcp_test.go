package web_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/pcapng"
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
	// A stream's deadline long enough for the demo's server that writes a
	// byte at a time to finish on a loaded machine.
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey, ReplyWindow: testReplyWindow, StreamDeadline: 50 * time.Second,
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
// target, presses Send through relay and waits up to wait until the
// exchange ended (the status line says what came, or that nothing did).
func askFromForm(t *testing.T, ctx context.Context, base, protocol, target string, w, h int64, wait time.Duration) {
	t.Helper()
	u := base + "/inspect?protocol=" + url.QueryEscape(protocol) + "&target=" + url.QueryEscape(target)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h), chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the inspector", `!!globalThis.querylensInspect && document.querySelector("[data-testid=build-protocol]").value === `+jsString(protocol), 15*time.Second)
	eval[bool](t, ctx, `(document.querySelector("[data-testid=build-send]").click(), true)`)
	waitFor(t, ctx, "the exchange to end", `!document.querySelector("[data-testid=build-send]").disabled && querylensInspect.packets().length > 0`, wait)
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
			askFromForm(t, ctx, st.URL, "minecraft", tg.Addr, vp.w, vp.h, 30*time.Second)
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
			if got := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=packet-row]")].map(r => r.children[2].textContent)`); strings.Join(got, "|") != "→ sent TCP|← recv TCP" {
				t.Errorf("direction cells %q, want → sent TCP and ← recv TCP", got)
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
			// The export hands the module the pair as TCP of one stream.
			exp := eval[[]struct {
				Direction, Transport string
				Stream               int
			}](t, ctx, `(() => {
  const keep = querylens.pcapng;
  let got = [];
  querylens.pcapng = (list, ...rest) => { got = list.map(p => ({direction: p.direction, transport: p.transport, stream: p.stream})); return keep(list, ...rest); };
  try { document.querySelector("[data-testid=export-pcapng]").click(); } finally { querylens.pcapng = keep; }
  return got;
})()`)
			if len(exp) != 2 || exp[0].Direction != "sent" || exp[1].Direction != "received" ||
				exp[0].Transport != "tcp" || exp[1].Transport != "tcp" || exp[0].Stream != exp[1].Stream || exp[0].Stream != pkts[0].Stream {
				t.Errorf("the export's packets %+v, want the request sent and the reply received, TCP of stream %d", exp, pkts[0].Stream)
			}
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

// exportJS presses Export pcapng and returns the file's bytes: the page
// hands the file to URL.createObjectURL, which this wraps to keep it.
const exportJS = `(async () => {
  const keep = URL.createObjectURL;
  let blob = null;
  URL.createObjectURL = (b) => { blob = b; return keep.call(URL, b); };
  try {
    document.querySelector("[data-testid=export-pcapng]").click();
  } finally {
    URL.createObjectURL = keep;
  }
  if (!blob) return [];
  return [...new Uint8Array(await blob.arrayBuffer())];
})()`

// exported presses Export pcapng and returns the file.
func exported(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	ints := eval[[]int](t, ctx, exportJS)
	if len(ints) == 0 {
		t.Fatalf("Export pcapng gave no file; status %q", eval[string](t, ctx, `document.querySelector("[data-testid=decode-status]").textContent`))
	}
	b := make([]byte, len(ints))
	for i, v := range ints {
		b[i] = byte(v)
	}
	return b
}

// tcpTurns reads a pcapng file with the pcapng package's reader and
// returns its TCP turns (payloads in hex), failing on a UDP datagram or a
// reader error.
func tcpTurns(t *testing.T, file []byte) []pcapng.Datagram {
	t.Helper()
	r := pcapng.NewReader(bytes.NewReader(file))
	var turns []pcapng.Datagram
	for {
		dg, err := r.Next()
		if err == io.EOF {
			return turns
		}
		if err != nil {
			t.Fatalf("reading the export: %v", err)
		}
		if !dg.TCP {
			t.Errorf("frame %d is a UDP datagram (% x…), want TCP turns only (a browser module built before pcapng() read transport?)", dg.Frame, dg.Payload[:min(len(dg.Payload), 16)])
			continue
		}
		dg.Payload = bytes.Clone(dg.Payload)
		turns = append(turns, dg)
	}
}

// TestBrowserInspectTCPCapture exports an exchange asked from the form:
// the pcapng reader finds one TCP stream of two turns, the request and the
// reply, byte for byte. Opened in the inspector as a capture, the turns
// are listed as TCP of that stream, the reply decodes whole with the
// server's name and players, and exporting that turn writes TCP again.
func TestBrowserInspectTCPCapture(t *testing.T) {
	needWasm(t)
	st := startStreamStack(t)
	tg := streamTarget(t, st.Demo, "minecraft", demo.Normal)
	ctx := tab(t)
	askFromForm(t, ctx, st.URL, "minecraft", tg.Addr, 1300, 900, 30*time.Second)
	waitFor(t, ctx, "the reply", `querylensInspect.packets().some(p => p.direction === "received" && p.end === "done" && p.kind !== "…")`, 10*time.Second)
	pkts := eval[[]tcpPacket](t, ctx, tcpPacketsJS)
	if len(pkts) != 2 {
		t.Fatalf("packets %+v, want the request and one reply", pkts)
	}
	check := func(what string, file []byte) {
		t.Helper()
		turns := tcpTurns(t, file)
		if len(turns) != 2 {
			t.Fatalf("%s: %d TCP turns, want 2 (the request and the reply)", what, len(turns))
		}
		for i, want := range []string{pkts[0].Hex, pkts[1].Hex} {
			if got := hex.EncodeToString(turns[i].Payload); got != want {
				t.Errorf("%s: turn %d is %s, want %s", what, i+1, got, want)
			}
			if turns[i].Stream != turns[0].Stream || turns[i].Turn != i+1 || turns[i].Cut || turns[i].Gap {
				t.Errorf("%s: turn %d %+v, want turn %d of one stream, whole", what, i+1, turns[i], i+1)
			}
		}
		if turns[0].Dst != turns[1].Src || turns[0].Dst.String() != tg.Addr {
			t.Errorf("%s: the request went to %v, the reply came from %v; want both %s", what, turns[0].Dst, turns[1].Src, tg.Addr)
		}
	}
	file := exported(t, ctx)
	check("the session's export", file)

	path := filepath.Join(t.TempDir(), "minecraft.pcapng")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	openCaptureFile(t, ctx, path, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector("[data-testid=capture-status]").textContent`); !strings.Contains(got, "2 TCP turns") || strings.Contains(got, "✖") {
		t.Errorf("capture status %q, want 2 TCP turns", got)
	}
	rows := eval[[][]string](t, ctx, `[...document.querySelectorAll("[data-testid=capture-row]")].map(r => [...[...r.children].map(c => c.textContent), r.children[7].title])`)
	if len(rows) != 2 {
		t.Fatalf("capture rows %q, want the two turns", rows)
	}
	for i, r := range rows {
		if len(r) < 9 || r[4] != "minecraft" || !strings.HasPrefix(r[7], "TCP ") || !strings.HasPrefix(r[8], "TCP stream ") {
			t.Errorf("capture row %d %q, want a minecraft TCP turn of a stream", i+1, r)
		}
	}
	if !strings.Contains(rows[1][7], "↩ #") || !strings.Contains(rows[1][8], "answers frame") {
		t.Errorf("the reply turn %q does not name the request it answers", rows[1])
	}
	eval[bool](t, ctx, `(querylensInspect.selectCapture(1), true)`)
	waitFor(t, ctx, "the reply turn decoded", `querylensInspect.capture().shown?.transport === "tcp" && [...document.querySelectorAll("[data-testid=tree-row] .fn")].some(e => e.textContent === "players")`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector("[data-testid=decode-status]").textContent`); !strings.Contains(got, "minecraft response") || !strings.Contains(got, tg.Name) {
		t.Errorf("decode status %q, want the response and the name %q", got, tg.Name)
	}
	if link := eval[string](t, ctx, `querylensInspect.permalink()`); !strings.Contains(link, "&tr=tcp") || !strings.Contains(link, "&h="+pkts[1].Hex) || !strings.Contains(link, "q="+pkts[0].Hex) {
		t.Errorf("the turn's permalink %s, want the request, the reply and tr=tcp", link)
	}
	check("the turn's export", exported(t, ctx))
}

// TestBrowserInspectTCPStops asks the demo's Minecraft servers that send
// their reply a byte at a time (many CHUNKs, joined into one reply that
// decodes whole) and whose reply's length field promises more than comes
// (the server gives up waiting for more of the query and closes, or the
// relay's deadline ends the stream: the row and the decode status carry
// END's reason as a warning).
func TestBrowserInspectTCPStops(t *testing.T) {
	needWasm(t)
	st := startStreamStack(t)
	for _, tc := range []struct {
		name string
		b    demo.Behavior
		done bool          // END's reason is done
		wait time.Duration // for the exchange to end: the server writing a byte
		// at a time takes 762 sleeps of 5 ms, many more on a loaded machine
	}{
		{"trickle", demo.Trickle, true, 60 * time.Second},
		{"bad length", demo.BadLength, false, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // two servers, two tabs: both waits at once
			tg := streamTarget(t, st.Demo, "minecraft", tc.b)
			ctx := tab(t)
			askFromForm(t, ctx, st.URL, "minecraft", tg.Addr, 1300, 900, tc.wait)
			waitFor(t, ctx, "the reply", `querylensInspect.packets().some(p => p.direction === "received" && p.end !== "" && p.kind !== "…")`, 10*time.Second)
			pkts := eval[[]tcpPacket](t, ctx, tcpPacketsJS)
			if len(pkts) != 2 || pkts[1].Direction != "received" {
				t.Fatalf("packets %+v, want the request and one reply", pkts)
			}
			r := pkts[1]
			if (r.End == "done") != tc.done {
				t.Errorf("reply END %q, want done %v", r.End, tc.done)
			}
			warn := eval[string](t, ctx, `[...document.querySelectorAll("[data-testid=tcp-end]")].map(e => e.textContent).join(" ")`)
			status := eval[string](t, ctx, `document.querySelector("[data-testid=decode-status]").className + " " + document.querySelector("[data-testid=decode-status]").textContent`)
			if tc.done {
				if r.Chunks < 2 {
					t.Errorf("%d chunks from a server writing a byte at a time", r.Chunks)
				}
				if warn != "" || !strings.Contains(status, tg.Name) || strings.Contains(status, "bad") {
					t.Errorf("warning %q, status %q: want the whole reply decoded with the name %q", warn, status, tg.Name)
				}
				return
			}
			if warn != "⚠ "+r.End {
				t.Errorf("row warning %q, want ⚠ %s", warn, r.End)
			}
			if !strings.Contains(status, "bad") || !strings.Contains(status, "⚠ "+r.End) {
				t.Errorf("decode status %q, want the END reason as a warning", status)
			}
		})
	}
}

// TestBrowserInspectTCPMasterRefused: asking GameSpy v1 with master set
// names a master over TCP that speaks first, a conversation the relay
// does not hold. The inspector says so before Send (the preview) and on
// Send, naming the command that asks it, and sends nothing: no packet in
// the session, no frame at the relay (before the fix it sent the
// master's empty start as UDP and waited out the reply window). At a
// phone's width and a desktop's the message does not overflow.
func TestBrowserInspectTCPMasterRefused(t *testing.T) {
	needWasm(t)
	st := startStreamStack(t)
	ctx := tab(t)
	target := st.Demo.GameSpy1Master()
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"desktop", 1300, 900}} {
		u := st.URL + "/inspect?protocol=gamespy1&target=" + url.QueryEscape(target)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the inspector", `!!globalThis.querylensInspect && document.querySelector("[data-testid=build-protocol]").value === "gamespy1"`, 15*time.Second)
		eval[bool](t, ctx, `(() => { const m = document.querySelector("#b-options [name=master]"); m.checked = true; m.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
		note := eval[string](t, ctx, `document.querySelector("[data-testid=preview-note]")?.textContent ?? ""`)
		if !strings.Contains(note, "speaks TCP") || !strings.Contains(note, "querylens master -p gamespy1") {
			t.Errorf("%s: the preview says %q", size.name, note)
		}
		eval[bool](t, ctx, `(document.querySelector("[data-testid=build-send]").click(), true)`)
		waitFor(t, ctx, "the refusal", `document.getElementById("decode-status").textContent.includes("relay does not hold")`, 15*time.Second)
		if bad := eval[bool](t, ctx, `document.getElementById("decode-status").classList.contains("bad")`); !bad {
			t.Errorf("%s: the refusal is not shown as an error", size.name)
		}
		if n := eval[int](t, ctx, `querylensInspect.packets().length`); n != 0 {
			t.Errorf("%s: the session has %d packets, want none", size.name, n)
		}
		for _, p := range eval[[]string](t, ctx, layoutProblemsJS) {
			t.Errorf("%s: %s", size.name, p)
		}
	}
	for _, frame := range []string{"query", "exchange"} {
		if n, _ := relayMetric(t, st.Relay, `querylens_relay_frames_in_total{type="`+frame+`"}`); n != 0 {
			t.Errorf("the relay read %d %s frames, want none", n, frame)
		}
	}
}
