package web_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// fakeRelayJS defines fakeRelay(maxInFlight, onSend, protocol) for the relay.js
// harnesses: relay.js's Relay connected over a fake WebSocket that has
// delivered a HELLO allowing maxInFlight queries. It resolves to {R, relay,
// sock, offered, closed, restore}: the module, the Relay, the fake socket
// (sock.onmessage delivers a frame), the subprotocols offered, the code and
// reason of the page's close, and restore() putting the real WebSocket
// back. onSend gets a DataView of each message the page sends; protocol is
// the subprotocol the fake relay chose (querylens.relay.v1 when not
// given: one frame a message).
const fakeRelayJS = `async function fakeRelay(maxInFlight, onSend, protocol) {
  const R = await import("/static/relay.js");
  const RealWS = globalThis.WebSocket;
  const fake = { R, relay: null, sock: null, offered: null, closed: null, restore: () => { globalThis.WebSocket = RealWS; } };
  class FakeWS {
    static OPEN = 1;
    constructor(url, protocols) { this.readyState = 1; this.protocol = protocol ?? "querylens.relay.v1"; fake.offered = protocols; fake.sock = this; }
    send(b) { onSend?.(new DataView(b instanceof ArrayBuffer ? b : b.buffer)); }
    close(code, reason) { fake.closed = { code, reason }; this.readyState = 3; this.onclose({ code: 1006, reason: "" }); }
  }
  globalThis.WebSocket = FakeWS;
  try {
    fake.relay = new R.Relay("/relay");
    const ready = fake.relay.connect();
    const hello = new DataView(new ArrayBuffer(14));
    hello.setUint8(0, 0x80); hello.setUint8(1, 1); hello.setUint16(2, 8192); hello.setUint32(4, 2000); hello.setUint16(8, maxInFlight); hello.setUint32(10, 0);
    fake.sock.onmessage({ data: hello.buffer });
    await ready;
  } catch (e) {
    fake.restore();
    throw e;
  }
  return fake;
}
`

// relayQueueHarness runs relay.js's Relay over a fake WebSocket whose
// HELLO allows 2 queries in flight: it sends three first queries, then a
// follow-up, ends the first query, cancels the second and then ends it
// (END cancelled), and reports the frames sent in order (Q id, C id) and
// the in-flight count at each point. Nothing waits on the clock: frames
// are delivered by hand.
const relayQueueHarness = `(async () => {
  ` + fakeRelayJS + `
  const sent = [];
  const { relay, sock, restore } = await fakeRelay(2, (v) => {
    const t = v.getUint8(0);
    if (t === 0x01 || t === 0x03) sent.push((t === 0x01 ? "Q" : "C") + v.getUint32(1));
  });
  try {
    const ended = [];
    const h = (n) => ({ end: () => ended.push(n), error: () => ended.push(n) });
    const dg = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x54]);
    const a = relay.query("a2s", "127.0.0.1:27015", dg, h("a"));
    const b = relay.query("a2s", "127.0.0.1:27016", dg, h("b"));
    const c = relay.query("a2s", "127.0.0.1:27017", dg, h("c"));
    const afterFirst = { sent: [...sent], inFlight: relay.inFlight };
    const f = relay.query("a2s", "127.0.0.1:27015", dg, h("f"), true);
    const end = new DataView(new ArrayBuffer(8));
    end.setUint8(0, 0x82); end.setUint32(1, a); end.setUint8(5, 0); end.setUint16(6, 1);
    sock.onmessage({ data: end.buffer });
    const afterEnd = { sent: [...sent], inFlight: relay.inFlight };
    relay.cancel(b);
    const afterCancel = { sent: [...sent], inFlight: relay.inFlight };
    end.setUint32(1, b); end.setUint8(5, 2); end.setUint16(6, 0);
    sock.onmessage({ data: end.buffer });
    const afterCancelEnd = { sent: [...sent], inFlight: relay.inFlight };
    return { afterFirst, afterEnd, afterCancel, afterCancelEnd, ids: { a, b, c, f }, ended };
  } finally {
    restore();
  }
})()`

// TestBrowserRelayFollowUpsFirst: relay.js keeps at most HELLO's
// in-flight limit of queries sent, and when one ends, a conversation's
// follow-up waiting goes out before first queries that waited longer, so
// that conversations under way finish before new ones start. A cancelled
// query counts out as its CANCEL leaves (the relay frees its id, its
// in-flight place and its upstream slot before it reads the next frame),
// so a waiting query goes at once, and its END later counts nothing twice.
func TestBrowserRelayFollowUpsFirst(t *testing.T) {
	ctx := harnessTab(t)
	type step struct {
		Sent     []string
		InFlight int
	}
	got := eval[struct {
		AfterFirst, AfterEnd, AfterCancel, AfterCancelEnd step
		IDs                                               struct{ A, B, C, F int }
		Ended                                             []string
	}](t, ctx, relayQueueHarness)
	q := func(id int) string { return "Q" + strconv.Itoa(id) }
	first := []string{q(got.IDs.A), q(got.IDs.B)}
	if !slices.Equal(got.AfterFirst.Sent, first) || got.AfterFirst.InFlight != 2 {
		t.Errorf("after three first queries: sent %v, in flight %d; want %v and 2 (the limit)", got.AfterFirst.Sent, got.AfterFirst.InFlight, first)
	}
	afterEnd := append(slices.Clone(first), q(got.IDs.F))
	if !slices.Equal(got.AfterEnd.Sent, afterEnd) || got.AfterEnd.InFlight != 2 {
		t.Errorf("after the first ended: sent %v, in flight %d; want %v (the follow-up before query %d) and 2", got.AfterEnd.Sent, got.AfterEnd.InFlight, afterEnd, got.IDs.C)
	}
	afterCancel := append(slices.Clone(afterEnd), "C"+strconv.Itoa(got.IDs.B), q(got.IDs.C))
	if !slices.Equal(got.AfterCancel.Sent, afterCancel) || got.AfterCancel.InFlight != 2 {
		t.Errorf("after cancelling the second: sent %v, in flight %d; want %v and 2 (query %d goes as the CANCEL leaves)", got.AfterCancel.Sent, got.AfterCancel.InFlight, afterCancel, got.IDs.C)
	}
	if !slices.Equal(got.AfterCancelEnd.Sent, afterCancel) || got.AfterCancelEnd.InFlight != 2 {
		t.Errorf("after the cancelled query's END: sent %v, in flight %d; want %v and 2 (counted out once)", got.AfterCancelEnd.Sent, got.AfterCancelEnd.InFlight, afterCancel)
	}
	if !slices.Equal(got.Ended, []string{"a", "b"}) {
		t.Errorf("ended %v, want [a b]", got.Ended)
	}
}

// batchEagerHarness queues n decoder steps on a Batch with its default
// schedule over a fake decoder, and reports whether they were all
// answered before the next task of the event loop (a zero timeout set
// before them), and in how many calls.
const batchEagerHarness = `(async (n) => {
  const R = await import("/static/relay.js");
  const enc = new TextEncoder();
  const ql = {
    in: new Uint8Array(1 << 16),
    out: new Uint8Array(0),
    batch(bytes) {
      const k = bytes / 10; // a step of a one-byte datagram is 10 bytes
      ql.out = enc.encode(JSON.stringify(Array.from({ length: k }, () => ({ send: [], done: true }))));
      return 0;
    },
  };
  const b = new R.Batch(ql);
  let task = false;
  setTimeout(() => (task = true), 0);
  const ps = [];
  for (let i = 0; i < n; i++) ps.push(b.step(i + 1, new Uint8Array([0x49])));
  const rs = await Promise.all(ps);
  return { beforeTask: !task, calls: b.calls, done: rs.filter((r) => r.done).length };
})`

// TestBrowserBatchEager: a Batch runs a full batch (16 requests) at once,
// after the task that queued it, instead of waiting for its scheduled
// flush behind every other task; fewer requests still run, at the
// scheduled flush.
func TestBrowserBatchEager(t *testing.T) {
	ctx := harnessTab(t)
	type result struct {
		BeforeTask  bool
		Calls, Done int
	}
	full := eval[result](t, ctx, batchEagerHarness+`(16)`)
	if !full.BeforeTask || full.Calls != 1 || full.Done != 16 {
		t.Errorf("16 requests: answered before the next task %v, %d calls, %d done; want true, 1, 16", full.BeforeTask, full.Calls, full.Done)
	}
	few := eval[result](t, ctx, batchEagerHarness+`(3)`)
	if few.Calls != 1 || few.Done != 3 {
		t.Errorf("3 requests: %d calls, %d done; want 1 and 3 (at the scheduled flush)", few.Calls, few.Done)
	}
}

// lateReadHarness runs converseSummary (or kind, converse) on a fake
// clock (as converseTimerHarness) with a fake relay that is connected or
// not, lets `timeouts` of its timeouts pass with its query open, then
// delivers the answer, and reports whether the conversation had ended
// before it and what it got. The relay sends the query at once (sendsAt 0)
// or after sendsAt timeouts spent waiting for a slot.
const lateReadHarness = `(async (connected, timeouts, sendsAt, kind = "converseSummary") => {
  const R = await import("/static/relay.js");
` + fakeClockJS + `  try {
    const queries = [];
    let onQuery = () => {};
    const relay = {
      connected,
      query(protocol, target, dg, handlers) {
        queries.push({ handlers });
        if (sendsAt === 0) handlers.sent?.();
        onQuery();
        return queries.length;
      },
      cancel() {},
    };
    const asked = (n) => new Promise((res) => { onQuery = () => queries.length >= n && res(); onQuery(); });
    const dec = {
      open: async () => ({ handle: 1, send: ["01"] }),
      step: async () => ({ done: true, summary: { row: [] } }),
      finish: async () => null,
    };
    const ql = {
      newQuery: () => ({
        start: () => [new Uint8Array([1])],
        feed: () => ({ send: [], done: true }),
        result: () => ({ ok: true }),
        close() {},
      }),
    };
    let settled = false;
    const timing = R.newTiming();
    const opts = { timeoutMs: 1000, timing };
    const p = (kind === "converse" ? R.converse(ql, relay, "a2s", "127.0.0.1:27015", null, opts)
      : R.converseSummary(dec, relay, "a2s", "127.0.0.1:27015", null, opts)).then((out) => ((settled = true), out));
    await asked(1);
    for (let i = 0; i < timeouts; i++) {
      if (sendsAt === i + 1) queries[0].handlers.sent();
      advance(1000);
      await drained();
    }
    const endedBefore = settled;
    queries[0].handlers.reply(new Uint8Array([0x49]), 1, 0);
    await drained();
    queries[0].handlers.end("window", 1);
    advance(10000);
    const out = await p;
    return { endedBefore, replies: out.replies, late: timing.late };
  } finally {` + fakeClockEndJS + `}
})`

// TestBrowserConverseLateReads: when a conversation's timer fires while
// its query is open at a live relay (the relay ends every query it reads
// within its window, so its frames are waiting unread), the conversation
// waits up to two timeouts more and takes the answer; without a relay
// connection, or after those, it ends at its timeout as before.
func TestBrowserConverseLateReads(t *testing.T) {
	ctx := harnessTab(t)
	type result struct {
		EndedBefore   bool
		Replies, Late int
	}
	for _, tc := range []struct {
		name      string
		connected bool
		timeouts  int
		sendsAt   int
		want      result
	}{
		{"answer in time", true, 0, 0, result{false, 1, 0}},
		{"read one timeout late", true, 1, 0, result{false, 1, 1}},
		{"read two timeouts late", true, 2, 0, result{false, 1, 2}},
		{"three timeouts: ended", true, 3, 0, result{true, 0, 2}},
		{"not connected: ended at the timeout", false, 1, 0, result{true, 0, 0}},
		// Time waiting for a slot in the relay client does not count.
		{"sent after two timeouts, answered late", true, 4, 3, result{false, 1, 2}},
		{"sent after one timeout, three late: ended", true, 4, 1, result{true, 0, 2}},
	} {
		// converseSummary is the server browser's, converse the
		// inspector's (a full decode): one driver runs both.
		for _, kind := range []string{"converseSummary", "converse"} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				got := eval[result](t, ctx, lateReadHarness+"("+strconv.FormatBool(tc.connected)+", "+strconv.Itoa(tc.timeouts)+", "+strconv.Itoa(tc.sendsAt)+`, "`+kind+`")`)
				if got != tc.want {
					t.Errorf("got %+v, want %+v", got, tc.want)
				}
			})
		}
	}
}

// TestBrowserRelayCancelledEndsAnyway: a cancelled query whose END the
// relay never sends ends (cancelled) once CANCEL_WAIT_MS has passed,
// however many there are (one timer for them all), and one whose END
// came ends once, not again.
func TestBrowserRelayCancelledEndsAnyway(t *testing.T) {
	ctx := harnessTab(t)
	got := eval[struct {
		Ends    []string
		Pending int
	}](t, ctx, `(async () => {
  `+fakeRelayJS+`
  const fake = await fakeRelay(64);
  try {
    const ends = [];
    const ids = [];
    for (let i = 0; i < 40; i++) {
      const n = i;
      ids.push(fake.relay.query("a2s", "127.0.0.1:27015", new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x54]), {
        end: (reason) => ends.push(n + " " + reason), error: (code) => ends.push(n + " error " + code),
      }));
    }
    for (const id of ids) fake.relay.cancel(id);
    // The relay's END for the first one only.
    const end = new Uint8Array(8); const v = new DataView(end.buffer);
    end[0] = 0x82; v.setUint32(1, ids[0]); end[5] = 2;
    fake.sock.onmessage({ data: end.buffer });
    const t0 = performance.now();
    while (ends.length < 40 && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 200)); // nothing more after
    return { ends, pending: fake.relay.ending.length };
  } finally {
    fake.restore();
  }
})()`)
	if len(got.Ends) != 40 || got.Pending != 0 {
		t.Fatalf("%d ends (%v), %d still waiting; want 40 and none", len(got.Ends), got.Ends, got.Pending)
	}
	seen := map[string]bool{}
	for _, e := range got.Ends {
		n, reason, _ := strings.Cut(e, " ")
		if reason != "cancelled" || seen[n] {
			t.Errorf("end %q: want each query ended once, cancelled (all: %v)", e, got.Ends)
		}
		seen[n] = true
	}
}

// harnessTab opens the page of a stack without a master in a tab, for
// the relay.js harnesses (they import the page's modules).
func harnessTab(t *testing.T) context.Context {
	t.Helper()
	base := startStackNoMaster(t)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// TestBrowserFromHex: fromHex reads the decoder's hex into bytes, either
// case, a character that is no hex digit as 0 and a last odd digit
// dropped, as parseInt of each pair did before.
func TestBrowserFromHex(t *testing.T) {
	ctx := harnessTab(t)
	for _, tc := range []struct {
		hex  string
		want []int
	}{
		{"", []int{}},
		{"00", []int{0}},
		{"ffffffff54", []int{255, 255, 255, 255, 0x54}},
		{"DEADbeef", []int{0xde, 0xad, 0xbe, 0xef}},
		{"0a1", []int{0x0a}},
		{"zz7g", []int{0, 0x70}},
	} {
		got := eval[[]int](t, ctx, `import("/static/relay.js").then((R) => [...R.fromHex(`+strconv.Quote(tc.hex)+`)])`)
		if !slices.Equal(got, tc.want) {
			t.Errorf("fromHex(%q) = %v, want %v", tc.hex, got, tc.want)
		}
	}
}

// TestBrowserBatchOpens: a Batch writes each way of asking's OPEN once
// and sends Go the same bytes for every conversation opened that way; a
// protocol or an option that differs is another request, and one too
// long fails without reaching Go.
func TestBrowserBatchOpens(t *testing.T) {
	ctx := harnessTab(t)
	type result struct {
		Requests []string
		Opens    int
		Error    string
	}
	got := eval[result](t, ctx, `(async () => {
  const R = await import("/static/relay.js");
  const requests = [];
  const ql = {
    in: new Uint8Array(1 << 16),
    out: new Uint8Array(0),
    batch(n) {
      let o = 0, k = 0;
      while (o < n) { // OPENs only: protocol, then name and value pairs
        const start = o;
        o += 2 + ql.in[o + 1];
        const pairs = ql.in[o++];
        for (let i = 0; i < pairs; i++) { o += 1 + ql.in[o]; o += 2 + (ql.in[o] << 8 | ql.in[o + 1]); }
        requests.push([...ql.in.subarray(start, o)].map((x) => x.toString(16).padStart(2, "0")).join(""));
        k++;
      }
      ql.out = new TextEncoder().encode(JSON.stringify(Array.from({ length: k }, (_, i) => ({ handle: i + 1, send: [] }))));
      return 0;
    },
  };
  const b = new R.Batch(ql, (f) => setTimeout(f, 0));
  await Promise.all([
    b.open("a2s", { players: "true" }), b.open("a2s", { players: "true" }),
    b.open("a2s", { players: "false" }), b.open("a2s", null), b.open("a2s", { players: null }),
    b.open("quake3", { players: "true" }),
  ]);
  const failed = await b.open("a2s", { players: "x".repeat(70000) });
  return { requests, opens: b.opens.size, error: failed.error?.message ?? "" };
})()`)
	hex := func(s string) string { return fmt.Sprintf("%x", s) }
	a2s := "0103" + hex("a2s")
	players := func(v string) string { return "01" + "07" + hex("players") + fmt.Sprintf("%04x", len(v)) + hex(v) }
	want := []string{
		a2s + players("true"), a2s + players("true"), a2s + players("false"), a2s + "00", a2s + "00",
		"0106" + hex("quake3") + players("true"),
	}
	if !slices.Equal(got.Requests, want) {
		t.Errorf("requests Go read:\n got %v\nwant %v", got.Requests, want)
	}
	if got.Opens != 5 {
		t.Errorf("%d OPEN requests kept, want 5 (the same options written once; null and a null value apart, as they are spelt apart)", got.Opens)
	}
	if !strings.Contains(got.Error, "too long") {
		t.Errorf("an option value of 70,000 bytes: error %q, want one saying it is too long", got.Error)
	}
}
