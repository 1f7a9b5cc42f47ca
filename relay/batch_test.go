package relay

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// TestMessageEnd: the writer sends each queued frame alone in
// wire.Subprotocol, and with wire.SubprotocolBatch as many together as fit in
// wire.MaxBatch bytes, a frame that would pass it starting the next message.
func TestMessageEnd(t *testing.T) {
	small := make([]byte, 100)
	big := make([]byte, wire.MaxBatch-1-2-100-2) // fits with one small one exactly
	for _, tc := range []struct {
		name    string
		queued  [][]byte
		batches bool
		want    []int // the ends, message by message
	}{
		{"v1", [][]byte{small, small, small}, false, []int{1, 2, 3}},
		{"batch, all in one", [][]byte{small, small, small}, true, []int{3}},
		{"batch, one alone", [][]byte{small}, true, []int{1}},
		{"batch, full", [][]byte{small, big, small}, true, []int{2, 3}},
		{"batch, past wire.MaxBatch", [][]byte{small, append(big, 0), small}, true, []int{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for i := 0; i < len(tc.queued); {
				i = messageEnd(tc.queued, i, tc.batches)
				got = append(got, i)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("messages end at %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBatchSubprotocol: a client that offers wire.SubprotocolBatch gets it, and
// every frame comes whole and in order whether the relay sent it alone or
// in a BATCH with others: per query, its REPLYs, then one END counting
// them. (Which frames share a message depends on how they queued; the
// grouping is TestMessageEnd's.)
func TestBatchSubprotocol(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	f := newRelay(t, testConfig())
	many := newResponder(t, func(d []byte) [][]byte {
		var out [][]byte
		for i := range 8 {
			out = append(out, append([]byte("RA"+strconv.Itoa(i)), d[2:]...))
		}
		return out
	})
	ws, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{Subprotocols: []string{wire.SubprotocolBatch, wire.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	if ws.Subprotocol() != wire.SubprotocolBatch {
		t.Fatalf("subprotocol %q, want %q", ws.Subprotocol(), wire.SubprotocolBatch)
	}
	const queries = 16
	for id := uint32(1); id <= queries; id++ {
		if err := ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, id, testProto, many.addr, []byte("RQ"+strconv.Itoa(int(id))))); err != nil {
			t.Fatal(err)
		}
	}
	replies := map[uint32]int{}
	ended := 0
	hello, batches := false, 0
	for ended < queries {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		frames := [][]byte{b}
		if len(b) > 0 && wire.FrameType(b[0]) == wire.FrameBatch {
			batches++
			if frames, err = wire.SplitBatch(b); err != nil {
				t.Fatalf("a bad BATCH %x: %v", b, err)
			}
		}
		for _, fb := range frames {
			fr, err := wire.ParseFrame(fb)
			if err != nil {
				t.Fatalf("a bad frame %x: %v", fb, err)
			}
			switch fr.Type {
			case wire.FrameHello:
				hello = true
			case wire.FrameReply:
				if !bytes.HasPrefix(fr.Datagram, []byte("RA")) || !bytes.HasSuffix(fr.Datagram, []byte(strconv.Itoa(int(fr.ID)))) {
					t.Errorf("reply %q for query %d", fr.Datagram, fr.ID)
				}
				replies[fr.ID]++
			case wire.FrameEnd:
				if int(fr.Replies) != replies[fr.ID] || fr.Replies == 0 {
					t.Errorf("query %d: END counts %d replies, %d came before it", fr.ID, fr.Replies, replies[fr.ID])
				}
				ended++
			default:
				t.Fatalf("unexpected %v frame", fr.Type)
			}
		}
	}
	if !hello {
		t.Error("no HELLO")
	}
	t.Logf("%d BATCH messages", batches)
}

// TestClientBatch: a client on wire.SubprotocolBatch may send its frames in a
// BATCH, which the relay reads as if each had come alone, in order (a
// QUERY, another QUERY and its CANCEL, a PING); a BATCH that does not split
// is refused whole with one ERROR naming the byte at fault, a bad frame
// inside gets its own ERROR, and a client on wire.Subprotocol that sends 0x85
// gets the unknown frame's ERROR. The connection stays open throughout.
func TestClientBatch(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	f := newRelay(t, testConfig())
	echo := newResponder(t, func(d []byte) [][]byte { return [][]byte{append([]byte("RA"), d[2:]...)} })
	batch := func(frames ...[]byte) []byte { return wire.AppendBatch(nil, frames) }
	dial := func(protos ...string) *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{Subprotocols: protos})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		ws.SetReadLimit(1 << 20)
		return ws
	}
	// next reads frames (split out of BATCHes) until want says done.
	read := func(ws *websocket.Conn, done func(wire.Frame) bool) []wire.Frame {
		t.Helper()
		var got []wire.Frame
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("read after %v: %v", got, err)
			}
			frames := [][]byte{b}
			if wire.FrameType(b[0]) == wire.FrameBatch {
				if frames, err = wire.SplitBatch(b); err != nil {
					t.Fatal(err)
				}
			}
			for _, fb := range frames {
				fr, err := wire.ParseFrame(fb)
				if err != nil {
					t.Fatal(err)
				}
				fr.Datagram = bytes.Clone(fr.Datagram)
				got = append(got, fr)
				if done(fr) {
					return got
				}
			}
		}
	}
	ws := dial(wire.SubprotocolBatch, wire.Subprotocol)
	read(ws, func(fr wire.Frame) bool { return fr.Type == wire.FrameHello })
	if err := ws.Write(ctx, websocket.MessageBinary, batch(
		wire.AppendQuery(nil, 1, testProto, echo.addr, []byte("RQ1")),
		wire.AppendQuery(nil, 2, testProto, echo.addr, []byte("RQ2")),
		wire.AppendIDFrame(nil, wire.FrameCancel, 2),
		wire.AppendIDFrame(nil, wire.FramePing, 9),
	)); err != nil {
		t.Fatal(err)
	}
	ended := map[uint32]wire.Frame{}
	pong := false
	read(ws, func(fr wire.Frame) bool {
		switch fr.Type {
		case wire.FrameEnd, wire.FrameError:
			ended[fr.ID] = fr
		case wire.FramePong:
			pong = fr.ID == 9
		}
		return len(ended) == 2 && pong
	})
	if e := ended[1]; e.Type != wire.FrameEnd || e.Reason != wire.EndWindow || e.Replies != 1 {
		t.Errorf("query 1 ended with %+v; want END window 1", e)
	}
	if e := ended[2]; e.Type != wire.FrameEnd || e.Reason != wire.EndCancelled {
		t.Errorf("query 2 ended with %+v; want END cancelled", e)
	}
	for _, c := range []struct {
		name string
		msg  []byte
		want string // the ERROR's message
	}{
		{"empty", []byte{byte(wire.FrameBatch)}, "batch.frame_len at offset 1"},
		{"past the end", append(batch(wire.AppendIDFrame(nil, wire.FramePing, 10)), 0, 9, 1), "batch.frame at offset 10"},
		{"nested", batch(batch(wire.AppendIDFrame(nil, wire.FramePing, 11))), "batch.frame at offset 3: unknown frame type"},
	} {
		if err := ws.Write(ctx, websocket.MessageBinary, c.msg); err != nil {
			t.Fatal(err)
		}
		got := read(ws, func(fr wire.Frame) bool { return fr.Type == wire.FrameError || fr.Type == wire.FramePong })
		last := got[len(got)-1]
		if last.Type != wire.FrameError || last.ID != 0 || last.Code != wire.CodeBadFrame || !strings.Contains(last.Message, c.want) {
			t.Errorf("%s BATCH: got %+v; want ERROR 0 bad-frame %q and no frame of it read", c.name, last, c.want)
		}
	}
	// A bad frame inside: its own ERROR; the frames around it are read.
	if err := ws.Write(ctx, websocket.MessageBinary, batch(
		wire.AppendIDFrame(nil, wire.FramePing, 12),
		wire.AppendQuery(nil, 0, testProto, echo.addr, []byte("RQ0")),
		wire.AppendIDFrame(nil, wire.FramePing, 13),
	)); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	read(ws, func(fr wire.Frame) bool {
		kinds = append(kinds, fr.Type.String()+" "+strconv.Itoa(int(fr.ID)))
		return fr.Type == wire.FramePong && fr.ID == 13
	})
	if want := []string{"pong 12", "error 0", "pong 13"}; !slices.Equal(kinds, want) {
		t.Errorf("a BATCH with a bad QUERY inside: %v, want %v", kinds, want)
	}
	// BATCHes about a frame's read buffer (the relay's read limit for v1,
	// one more byte: past it the rest is read into a 64 KiB buffer) and of
	// 64 KiB are read whole: CANCELs of ids not open (7 bytes each with
	// their length, nothing back), then a PING.
	var full []byte
	for _, size := range []int{f.srv.readLimit() - 6, f.srv.readLimit() + 1, f.srv.readLimit() + 8, wire.MaxBatch} {
		var frames [][]byte
		for n := 1 + 7; n+7 <= size; n += 7 {
			frames = append(frames, wire.AppendIDFrame(nil, wire.FrameCancel, uint32(1000+len(frames))))
		}
		frames = append(frames, wire.AppendIDFrame(nil, wire.FramePing, uint32(size)))
		full = batch(frames...)
		if len(full) > size || len(full) <= size-7 {
			t.Fatalf("the BATCH for %d bytes is %d", size, len(full))
		}
		if err := ws.Write(ctx, websocket.MessageBinary, full); err != nil {
			t.Fatal(err)
		}
		if got := read(ws, func(fr wire.Frame) bool { return fr.Type == wire.FramePong || fr.Type == wire.FrameError }); got[len(got)-1].Type != wire.FramePong || got[len(got)-1].ID != uint32(size) {
			t.Errorf("a BATCH of %d bytes: %+v, want the PONG at its end", len(full), got)
		}
	}
	// Longer is over the read limit: closed with 1009.
	over := dial(wire.SubprotocolBatch)
	read(over, func(fr wire.Frame) bool { return fr.Type == wire.FrameHello })
	if err := over.Write(ctx, websocket.MessageBinary, append(full, make([]byte, wire.MaxBatch+1-len(full))...)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := over.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("a BATCH of %d bytes: %v, want close %d", wire.MaxBatch+1, err, websocket.StatusMessageTooBig)
	}
	// On wire.Subprotocol, BATCH is no client frame.
	v1 := dial(wire.Subprotocol)
	read(v1, func(fr wire.Frame) bool { return fr.Type == wire.FrameHello })
	if err := v1.Write(ctx, websocket.MessageBinary, batch(wire.AppendIDFrame(nil, wire.FramePing, 14))); err != nil {
		t.Fatal(err)
	}
	got := read(v1, func(fr wire.Frame) bool { return fr.Type == wire.FrameError || fr.Type == wire.FramePong })
	if last := got[len(got)-1]; last.Type != wire.FrameError || last.Code != wire.CodeBadFrame || !strings.Contains(last.Message, "unknown frame type") {
		t.Errorf("a BATCH on %s: %+v; want ERROR bad-frame, unknown frame type", wire.Subprotocol, last)
	}
}
