package web_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/relay/wire"
)

// relayBatchHarness runs relay.js's Relay over a fake WebSocket: it records
// the subprotocols offered, delivers a BATCH of a REPLY and an END for one
// query and a REPLY for another, then a BATCH whose second frame's length
// runs past the message's end, and reports what the handlers saw and how
// the socket was closed. Frames are delivered by hand.
const relayBatchHarness = `(async () => {
  ` + fakeRelayJS + `
  const fake = await fakeRelay(16);
  const { relay, sock } = fake;
  try {
    const seen = [];
    const h = (n) => ({
      reply: (b) => seen.push(n + " reply " + new TextDecoder().decode(b)),
      end: (reason, k) => seen.push(n + " end " + reason + " " + k),
      error: (code, msg) => seen.push(n + " error " + code + " " + msg),
    });
    const dg = new Uint8Array([0xff]);
    const a = relay.query("a2s", "127.0.0.1:27015", dg, h("a"));
    const b = relay.query("a2s", "127.0.0.1:27016", dg, h("b"));
    const reply = (id, text) => {
      const t = new TextEncoder().encode(text);
      const f = new Uint8Array(10 + t.length);
      const v = new DataView(f.buffer);
      f[0] = 0x81; v.setUint32(1, id); v.setUint32(5, 1000); f[9] = 0; f.set(t, 10);
      return f;
    };
    const end = (id, k) => { const f = new Uint8Array(8); const v = new DataView(f.buffer); f[0] = 0x82; v.setUint32(1, id); f[5] = 0; v.setUint16(6, k); return f; };
    const batch = (frames, cut = 0) => {
      const n = 1 + frames.reduce((s, f) => s + 2 + f.length, 0);
      const m = new Uint8Array(n);
      m[0] = 0x85;
      let o = 1;
      for (const f of frames) { m[o] = f.length >> 8; m[o + 1] = f.length & 255; m.set(f, o + 2); o += 2 + f.length; }
      return m.buffer.slice(0, n - cut);
    };
    sock.onmessage({ data: batch([reply(a, "RA1"), end(a, 1), reply(b, "RB1")]) });
    const afterGood = [...seen];
    sock.onmessage({ data: batch([reply(b, "RB2"), reply(b, "RB3")], 2) });
    return { offered: fake.offered, afterGood, seen, closed: fake.closed };
  } finally {
    fake.restore();
  }
})()`

// TestBrowserRelayBatch: relay.js offers v2 (stream exchanges), then the
// BATCH subprotocol before v1,
// hands each frame of a BATCH to its query in order, and closes the socket
// on a malformed BATCH with a reason naming the byte at fault, failing the
// queries open.
func TestBrowserRelayBatch(t *testing.T) {
	ctx := harnessTab(t)
	got := eval[struct {
		Offered         []string
		AfterGood, Seen []string
		Closed          *struct {
			Code   int
			Reason string
		}
	}](t, ctx, relayBatchHarness)
	if want := []string{"querylens.relay.v2", "querylens.relay.v1.batch", "querylens.relay.v1"}; !slices.Equal(got.Offered, want) {
		t.Errorf("offered %v, want %v", got.Offered, want)
	}
	if want := []string{"a reply RA1", "a end window 1", "b reply RB1"}; !slices.Equal(got.AfterGood, want) {
		t.Errorf("after a BATCH: %v, want %v", got.AfterGood, want)
	}
	if got.Closed == nil || got.Closed.Code != 4000 || !strings.Contains(got.Closed.Reason, "runs past the message's end") {
		t.Fatalf("after a bad BATCH, closed %+v; want code 4000 and the reason", got.Closed)
	}
	if n := len(got.Seen); n != 4 || !strings.HasPrefix(got.Seen[3], "b error closed relay: BATCH frame of") {
		t.Errorf("after a bad BATCH: %v; want b failed with the reason, and none of its frames read", got.Seen)
	}
}

// TestBrowserQueryFrame: the QUERY frames relay.js writes are the ones
// the relay reads (wire.ParseFrame), for a target in ASCII (written
// byte by byte) and one with an internationalized host name (UTF-8, by
// TextEncoder), and a target too long for its length byte fails the
// query in the page with the relay's bad-frame code, sending nothing.
func TestBrowserQueryFrame(t *testing.T) {
	ctx := harnessTab(t)
	long := strings.Repeat("a", 250) + ".example:27015"
	for _, c := range []struct {
		protocol, target string
		id               uint32
		bad              string // the failure's words, when the frame cannot be written
	}{
		{protocol: "a2s", target: "127.0.0.1:27015", id: 1},
		{protocol: "gamespy1", target: "[::1]:7778", id: 0xfedcba98},
		{protocol: "quake3", target: "bücher.example:27960", id: 0x01000000},
		{protocol: "zandronum", target: long, id: 7, bad: "target of 264 bytes (at most 255)"},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			got := eval[struct {
				Frame []int
				Bad   string
			}](t, ctx, `(async () => {
  const R = await import("/static/relay.js");
  const f = R.queryFrame(`+strconv.FormatUint(uint64(c.id), 10)+`, `+strconv.Quote(c.protocol)+`, `+strconv.Quote(c.target)+`, new Uint8Array([0xff, 0x00, 0x5c]));
  return typeof f === "string" ? { frame: [], bad: f } : { frame: Array.from(f), bad: "" };
})()`)
			if c.bad != "" {
				if !strings.Contains(got.Bad, c.bad) || len(got.Frame) > 0 {
					t.Fatalf("queryFrame = %v, %q; want no frame and %q", got.Frame, got.Bad, c.bad)
				}
				return
			}
			b := make([]byte, len(got.Frame))
			for i, v := range got.Frame {
				b[i] = byte(v)
			}
			f, err := wire.ParseFrame(b)
			if err != nil || got.Bad != "" {
				t.Fatalf("ParseFrame(% x) = %v (page: %q)", b, err, got.Bad)
			}
			if f.Type != wire.FrameQuery || f.ID != c.id || f.Protocol != c.protocol || f.Target != c.target || !slices.Equal(f.Datagram, []byte{0xff, 0x00, 0x5c}) {
				t.Errorf("ParseFrame = %+v; want QUERY %d %s %s ff005c", f, c.id, c.protocol, c.target)
			}
		})
	}
	// Through Relay.query: the bad one fails with bad-frame, and no frame
	// leaves for it.
	got := eval[struct {
		Seen []string
		Sent int
	}](t, ctx, `(async () => {
  `+fakeRelayJS+`
  let sent = 0;
  const fake = await fakeRelay(16, () => sent++);
  try {
    const seen = [];
    fake.relay.query("zandronum", `+strconv.Quote(long)+`, new Uint8Array([1]), {
      error: (code, msg) => seen.push(code + ": " + msg), end: () => seen.push("end"),
    });
    await Promise.resolve();
    await Promise.resolve();
    return { seen, sent };
  } finally {
    fake.restore();
  }
})()`)
	if len(got.Seen) != 1 || !strings.HasPrefix(got.Seen[0], "bad-frame: target of 264 bytes") || got.Sent != 0 {
		t.Errorf("a query with a 264-byte target: handlers saw %q, %d frames sent; want one bad-frame error and none", got.Seen, got.Sent)
	}
}

// TestBrowserRelaySendsBatch: on querylens.relay.v1.batch, the frames one
// task of the page makes (three queries and a cancel) leave in one BATCH,
// in order, and a frame made alone in a later task leaves alone; on v1
// each frame is its own message.
func TestBrowserRelaySendsBatch(t *testing.T) {
	ctx := harnessTab(t)
	for _, c := range []struct {
		protocol string
		want     [][]string // per message, its frames ("Q id", "C id")
	}{
		{"querylens.relay.v1.batch", [][]string{{"Q 1", "Q 2", "Q 3", "C 2"}, {"Q 4"}}},
		{"querylens.relay.v1", [][]string{{"Q 1"}, {"Q 2"}, {"Q 3"}, {"C 2"}, {"Q 4"}}},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			got := eval[[][]string](t, ctx, `(async () => {
  `+fakeRelayJS+`
  const msgs = [];
  const name = (v) => (v.getUint8(0) === 1 ? "Q " : v.getUint8(0) === 3 ? "C " : "? ") + v.getUint32(1);
  const fake = await fakeRelay(16, (v) => {
    if (v.getUint8(0) !== 0x85) { msgs.push([name(v)]); return; }
    const frames = [];
    for (let o = 1; o < v.byteLength;) {
      const n = v.getUint16(o);
      frames.push(name(new DataView(v.buffer, v.byteOffset + o + 2, n)));
      o += 2 + n;
    }
    msgs.push(frames);
  }, `+strconv.Quote(c.protocol)+`);
  try {
    const h = { end() {}, error() {} };
    const dg = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x54]);
    fake.relay.query("a2s", "127.0.0.1:27015", dg, h);
    const b = fake.relay.query("a2s", "127.0.0.1:27016", dg, h);
    fake.relay.query("a2s", "127.0.0.1:27017", dg, h);
    fake.relay.cancel(b);
    await new Promise((r) => setTimeout(r, 0));
    fake.relay.query("a2s", "127.0.0.1:27018", dg, h);
    await new Promise((r) => setTimeout(r, 0));
    return msgs;
  } finally {
    fake.restore();
  }
})()`)
			if !slices.EqualFunc(got, c.want, slices.Equal[[]string]) {
				t.Errorf("messages sent %v, want %v", got, c.want)
			}
		})
	}
}
