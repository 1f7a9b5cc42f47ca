package web_test

import (
	"slices"
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
