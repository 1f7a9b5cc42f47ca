package web_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/relay/wire"
)

// TestBrowserRelayExchange: on querylens.relay.v2, Relay.exchange sends an
// EXCHANGE the relay reads (wire.ParseFrame: its options in order) and
// hands the CHUNKs to the handlers with their offsets, then END's stream
// reason; on an older relay it fails the exchange without sending it.
func TestBrowserRelayExchange(t *testing.T) {
	ctx := harnessTab(t)
	got := eval[struct {
		Frames [][]int
		Seen   []string
		Old    []string
		OldOut int
	}](t, ctx, `(async () => {
  `+fakeRelayJS+`
  const frames = [];
  const fake = await fakeRelay(16, (v) => frames.push(Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))), "querylens.relay.v2");
  const seen = [];
  try {
    const id = fake.relay.exchange("toytcp", "Play.Example", { port: "25565", host: "Play.Example", players: "true" }, {
      chunk: (b, off, flags) => seen.push("chunk " + off + " " + new TextDecoder().decode(b) + " " + flags),
      end: (reason, k) => seen.push("end " + reason + " " + k),
      error: (code, msg) => seen.push("error " + code + " " + msg),
    });
    await Promise.resolve();
    await Promise.resolve();
    const chunk = (off, text, flags) => {
      const t = new TextEncoder().encode(text);
      const f = new Uint8Array(10 + t.length);
      const v = new DataView(f.buffer);
      f[0] = 0x86; v.setUint32(1, id); v.setUint32(5, off); f[9] = flags; f.set(t, 10);
      return f.buffer;
    };
    fake.sock.onmessage({ data: chunk(0, "abc", 0) });
    fake.sock.onmessage({ data: chunk(3, "de", 1) });
    const end = new Uint8Array(8); const ev = new DataView(end.buffer);
    end[0] = 0x82; ev.setUint32(1, id); end[5] = 3; ev.setUint16(6, 2);
    fake.sock.onmessage({ data: end.buffer });
  } finally {
    fake.restore();
  }
  let oldOut = 0;
  const old = await fakeRelay(16, () => oldOut++, "querylens.relay.v1.batch");
  const oldSeen = [];
  try {
    old.relay.exchange("toytcp", "127.0.0.1:1", {}, { error: (code, msg) => oldSeen.push(code + ": " + msg), end: () => oldSeen.push("end") });
    await Promise.resolve();
    await Promise.resolve();
  } finally {
    old.restore();
  }
  return { frames, seen, old: oldSeen, oldOut };
})()`)
	if len(got.Frames) != 1 {
		t.Fatalf("sent %d frames, want one EXCHANGE", len(got.Frames))
	}
	b := make([]byte, len(got.Frames[0]))
	for i, v := range got.Frames[0] {
		b[i] = byte(v)
	}
	f, err := wire.ParseFrame(b)
	if err != nil || f.Type != wire.FrameExchange || f.Protocol != "toytcp" || f.Target != "Play.Example" ||
		f.Options["host"] != "Play.Example" || f.Options["port"] != "25565" || f.Options["players"] != "true" {
		t.Fatalf("ParseFrame(% x) = %+v, %v", b, f, err)
	}
	if want := []string{"chunk 0 abc 0", "chunk 3 de 1", "end done 2"}; !slices.Equal(got.Seen, want) {
		t.Errorf("handlers saw %q, want %q", got.Seen, want)
	}
	if len(got.Old) != 1 || got.Old[0] != "not-a-query: not-a-stream: this relay does not hold TCP exchanges" || got.OldOut != 0 {
		t.Errorf("on an older relay: %q, %d frames sent", got.Old, got.OldOut)
	}
}

// TestBrowserRelayStreamCaps: the client starts with eight stream
// exchanges in progress (the relay's default per client address), holds
// the rest, and raises its cap by one as each ends; an exchange the relay refuses at a cap of
// connections in progress (tcp-per-target, tcp-per-client) is held and
// asked again, with the same id, once one of the client's own to that host
// ends, its handlers hearing nothing of the refusal; refused too often, it
// fails with the relay's message. Frames are delivered by hand.
func TestBrowserRelayStreamCaps(t *testing.T) {
	ctx := harnessTab(t)
	got := eval[struct {
		First, AfterEnd, AfterRefusal, AfterHostEnd []int
		Seen                                        []string
		Failed                                      []string
	}](t, ctx, `(async () => {
  `+fakeRelayJS+`
  const sent = [];
  const record = (v) => {
    const t = v.getUint8(0);
    if (t === 0x85) {
      for (let o = 1; o < v.byteLength;) {
        const n = v.getUint16(o);
        record(new DataView(v.buffer, v.byteOffset + o + 2, n));
        o += 2 + n;
      }
      return;
    }
    if (t === 0x05) sent.push(v.getUint32(1));
  };
  const fake = await fakeRelay(64, record, "querylens.relay.v2");
  const tick = async () => { for (let i = 0; i < 4; i++) await Promise.resolve(); };
  const end = (id) => {
    const f = new DataView(new ArrayBuffer(8));
    f.setUint8(0, 0x82); f.setUint32(1, id); f.setUint8(5, 3); f.setUint16(6, 1);
    fake.sock.onmessage({ data: f.buffer });
  };
  const refuse = (id, msg) => {
    const m = new TextEncoder().encode(msg);
    const f = new Uint8Array(8 + m.length);
    const v = new DataView(f.buffer);
    f[0] = 0x83; v.setUint32(1, id); f[5] = 5; v.setUint16(6, m.length); f.set(m, 8);
    fake.sock.onmessage({ data: f.buffer });
  };
  const seen = [];
  const h = (n) => ({ end: (r) => seen.push(n + " end " + r), error: (c, m) => seen.push(n + " error " + m) });
  try {
    const ids = [];
    // Two to one host, ten to others: twelve asked, eight go.
    ids.push(fake.relay.exchange("toytcp", "10.0.0.1:25565", {}, h("a")));
    ids.push(fake.relay.exchange("toytcp", "10.0.0.1:25566", {}, h("b")));
    for (let i = 0; i < 10; i++) ids.push(fake.relay.exchange("toytcp", "10.0.1." + i + ":25565", {}, h("c" + i)));
    await tick();
    const first = [...sent];
    end(ids[2]);
    await tick();
    const afterEnd = [...sent];
    // The relay refuses b: another client holds 10.0.0.1's other slot.
    refuse(ids[1], "tcp-per-target: 10.0.0.1:25566");
    await tick();
    const afterRefusal = [...sent];
    end(ids[0]);
    await tick();
    const afterHostEnd = [...sent];
    end(ids[1]);
    // Refused past its retries, an exchange fails with the message:
    // each refusal lowers the client's cap to the exchanges left in
    // progress (and it grows no more), and each END of one of them lets
    // it go again.
    for (const x of ids) end(x);
    const failed = [];
    const lone = fake.relay.exchange("toytcp", "10.0.2.1:25565", {}, { end: () => failed.push("end"), error: (c, m) => failed.push(c + ": " + m) });
    const keepers = [];
    for (let i = 0; i < 7; i++) keepers.push(fake.relay.exchange("toytcp", "10.0.3." + i + ":25565", {}, {}));
    await tick();
    let resent = 0;
    for (let i = 0; i < 7 && !failed.length; i++) {
      const before = sent.length;
      refuse(lone, (i % 2 ? "tcp-cap: " : "tcp-per-client: ") + "10.0.2.1:25565");
      await tick();
      end(keepers[i]);
      await tick();
      if (sent.length > before && sent[sent.length - 1] === lone) resent++;
    }
    seen.push("resent " + resent);
    return { first, afterEnd, afterRefusal, afterHostEnd, seen, failed };
  } finally {
    fake.restore();
  }
})()`)
	if len(got.First) != 8 {
		t.Fatalf("sent %v at first, want 8 EXCHANGEs", got.First)
	}
	if len(got.AfterEnd) != 10 || got.AfterEnd[8] != 9 || got.AfterEnd[9] != 10 {
		t.Errorf("after one END: sent %v, want exchanges 9 and 10 to go (the cap raised by one while exchanges wait)", got.AfterEnd)
	}
	if len(got.AfterRefusal) != 11 || !slices.Equal(got.AfterRefusal[:10], got.AfterEnd) || got.AfterRefusal[10] != 11 {
		t.Errorf("after the refusal: sent %v, want exchange 11 in the refused one's place and the refused one held", got.AfterRefusal)
	}
	if n := len(got.AfterHostEnd); n < 12 || !slices.Contains(got.AfterHostEnd[11:], 2) {
		t.Errorf("after the END of the host's other exchange: sent %v, want the refused exchange (id 2) asked again", got.AfterHostEnd)
	}
	for _, s := range got.Seen {
		if strings.HasPrefix(s, "b error") {
			t.Errorf("the held exchange's handlers heard of the refusal: %q", got.Seen)
		}
	}
	if !slices.Contains(got.Seen, "b end done") {
		t.Errorf("handlers saw %q, want b's END after it was asked again", got.Seen)
	}
	if !slices.Contains(got.Seen, "resent 6") {
		t.Errorf("handlers saw %q, want the exchange refused at tcp-per-client and tcp-cap asked again 6 times", got.Seen)
	}
	if len(got.Failed) != 1 || !strings.Contains(got.Failed[0], "tcp-per-client: 10.0.2.1:25565") {
		t.Errorf("an exchange refused past its retries: %q, want one error with the relay's message", got.Failed)
	}
}
