package relay

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

func TestHello(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.MaxInFlight = 12
	f := newRelay(t, cfg)
	c := dialRaw(t, ctx, f.url)
	want := wire.Hello{Version: 1, MaxDatagram: DefaultMaxDatagram, ReplyWindowMS: 300, MaxInFlight: 12, CacheTTLMS: 10000}
	if c.hello != want {
		t.Fatalf("hello %+v, want %+v", c.hello, want)
	}
}

func TestQueryReply(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	f := newRelay(t, testConfig())
	r := newResponder(t, func(d []byte) [][]byte {
		return [][]byte{append([]byte("RA1"), d[2:]...), append([]byte("RA2"), d[2:]...)}
	})
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 7, r.addr, "RQhello")
	replies, final := c.collect(ctx, 7)
	wantEnd(t, final, wire.EndWindow, 2)
	if len(replies) != 2 || string(replies[0].Datagram) != "RA1hello" || string(replies[1].Datagram) != "RA2hello" {
		t.Fatalf("replies %+v", replies)
	}
	for _, rp := range replies {
		if rp.Flags != 0 || rp.RTT == 0 {
			t.Fatalf("reply flags %d rtt %d", rp.Flags, rp.RTT)
		}
	}
	// Ping on the same connection.
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FramePing, 99))
	if p := c.read(ctx); p.Type != wire.FramePong || p.ID != 99 {
		t.Fatalf("got %v %d, want pong 99", p.Type, p.ID)
	}
	if got := f.metric("querylens_relay_queries_forwarded_total"); got != 1 {
		t.Fatalf("forwarded %v", got)
	}
}

func TestCancel(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 5 * time.Second
	f := newRelay(t, cfg)
	r := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, r.addr, "RQa")
	if rp := c.read(ctx); rp.Type != wire.FrameReply {
		t.Fatalf("got %v", rp.Type)
	}
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 1))
	_, final := c.collect(ctx, 1)
	wantEnd(t, final, wire.EndCancelled, 1)
	// Cancelling an id that is not open is ignored; the id is free again.
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 1))
	c.query(ctx, 1, r.addr, "RQb")
	if rp := c.read(ctx); rp.Type != wire.FrameReply || string(rp.Datagram) != "RAb" {
		t.Fatalf("got %v %q", rp.Type, rp.Datagram)
	}
	// A CANCEL before any reply still gets its END.
	silent := newResponder(t, nil)
	c.query(ctx, 2, silent.addr, "RQc")
	c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 2))
	for {
		fr := c.read(ctx)
		if fr.ID == 2 {
			wantEnd(t, fr, wire.EndCancelled, 0)
			break
		}
	}
}

func TestTimeout(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	f := newRelay(t, testConfig())
	r := newResponder(t, nil)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 3, r.addr, "RQx")
	_, final := c.collect(ctx, 3)
	wantError(t, final, wire.CodeTimeout, wire.RuleTimeout)
	if r.count.Load() != 1 {
		t.Fatalf("responder saw %d datagrams", r.count.Load())
	}
	// A closed port is reported as unreachable, still code 6.
	pc, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	closed := pc.LocalAddr().String()
	pc.Close()
	c.query(ctx, 4, closed, "RQx")
	_, final = c.collect(ctx, 4)
	if final.Type != wire.FrameError || final.Code != wire.CodeTimeout {
		t.Fatalf("closed port: %v %v %q", final.Type, final.Code, final.Message)
	}
}

// TestRefusalsEndToEnd checks the refusals of loopback targets outside the
// allowed set and of malformed queries: each gets its ERROR, nothing
// reaches the responder, and the connection keeps working.
func TestRefusalsEndToEnd(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	r := newResponder(t, echoReply)
	port := netip.MustParseAddrPort(r.addr).Port()
	cfg := testConfig()
	cfg.AllowTargets = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	cfg.Resolver = fakeResolver{
		"game.test":    {netip.MustParseAddr("127.0.0.1")},
		"private.test": {netip.MustParseAddr("10.1.2.3")},
		"mixed.test":   {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")},
		"mapped.test":  {netip.AddrFrom16(netip.MustParseAddr("::ffff:127.0.0.1").As16())},
		"empty.test":   {},
	}
	f := newRelay(t, cfg)
	c := dialRaw(t, ctx, f.url)
	p := strconv.Itoa(int(port))
	cases := []struct {
		name, proto, target, datagram string
		code                          wire.Code
		rule                          wire.Rule
	}{
		{"loopback not allowed", testProto, "127.0.0.2:" + p, "RQ", wire.CodeDenied, wire.RuleLoopback},
		{"ipv6 loopback", testProto, "[::1]:" + p, "RQ", wire.CodeDenied, wire.RuleLoopback},
		{"v4-mapped spelling", testProto, "[::ffff:127.0.0.1]:" + p, "RQ", wire.CodeDenied, wire.RuleV4Mapped},
		{"well-known port", testProto, "127.0.0.1:53", "RQ", wire.CodeDenied, wire.RuleWellKnownPort},
		{"port zero", testProto, "127.0.0.1:0", "RQ", wire.CodeDenied, wire.RulePortZero},
		{"unknown protocol", "nope", "127.0.0.1:" + p, "RQ", wire.CodeUnknownProtocol, "unknown-protocol"},
		{"not a query", testProto, "127.0.0.1:" + p, "XX", wire.CodeNotAQuery, "not-a-query"},
		{"empty datagram", testProto, "127.0.0.1:" + p, "", wire.CodeNotAQuery, "not-a-query"},
		{"codec panics", testProto, "127.0.0.1:" + p, "RQpanic", wire.CodeNotAQuery, "not-a-query"},
		{"bad target", testProto, "127.0.0.1", "RQ", wire.CodeBadFrame, "target"},
		{"numeric name", testProto, "2130706433:" + p, "RQ", wire.CodeBadFrame, "target"},
		{"name to private", testProto, "private.test:" + p, "RQ", wire.CodeResolve, wire.RulePrivate},
		{"name with one refused address", testProto, "mixed.test:" + p, "RQ", wire.CodeResolve, wire.RuleLoopback},
		{"name not found", testProto, "missing.test:" + p, "RQ", wire.CodeResolve, "resolve"},
		{"name without address", testProto, "empty.test:" + p, "RQ", wire.CodeResolve, "resolve"},
		{"name with well-known port", testProto, "game.test:53", "RQ", wire.CodeDenied, wire.RuleWellKnownPort},
		{"oversized datagram", testProto, "127.0.0.1:" + p, "RQ" + strings.Repeat("x", DefaultMaxDatagram), wire.CodeBadFrame, "datagram-size"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := uint32(100 + i)
			c.sendRaw(ctx, wire.AppendQuery(nil, id, tc.proto, tc.target, []byte(tc.datagram)))
			_, final := c.collect(ctx, id)
			wantError(t, final, tc.code, tc.rule)
		})
	}
	// A name mapping to an allowed address works, including the resolver
	// returning it in its IPv4-in-IPv6 form.
	for i, name := range []string{"game.test", "mapped.test"} {
		id := uint32(200 + i)
		c.query(ctx, id, name+":"+p, "RQok"+name)
		replies, final := c.collect(ctx, id)
		wantEnd(t, final, wire.EndWindow, 1)
		if string(replies[0].Datagram) != "RAok"+name {
			t.Fatalf("%s: reply %q", name, replies[0].Datagram)
		}
	}
	if n := r.count.Load(); n != 2 {
		t.Fatalf("responder saw %d datagrams, want only the 2 allowed", n)
	}
	if got := f.metric(`querylens_relay_refusals_total{rule="loopback"}`); got != 3 {
		t.Fatalf("loopback refusals %v, want 3", got)
	}
}

func TestDefaultPolicyRefusesLoopback(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	r := newResponder(t, echoReply)
	cfg := testConfig()
	cfg.AllowTargets = nil
	f := newRelay(t, cfg)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, r.addr, "RQ")
	_, final := c.collect(ctx, 1)
	wantError(t, final, wire.CodeDenied, wire.RuleLoopback)
	if r.count.Load() != 0 {
		t.Fatal("a refused target received a datagram")
	}
}

func TestMalformedFrames(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	f := newRelay(t, testConfig())
	r := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)
	cases := []struct {
		name string
		b    []byte
		id   uint32
		rule wire.Rule
	}{
		{"empty", nil, 0, "bad-frame"},
		{"unknown type", []byte{0x42, 1, 2}, 0, "bad-frame"},
		{"short id", []byte{0x01, 0, 0}, 0, "bad-frame"},
		{"hostile protocol length", []byte{0x01, 0, 0, 0, 9, 255, 'a'}, 9, "bad-frame"},
		{"hostile target length", append(wire.AppendQuery(nil, 10, testProto, "", nil)[:6+len(testProto)], 255, 'x'), 10, "bad-frame"},
		{"ping trailing bytes", []byte{0x02, 0, 0, 0, 5, 0}, 5, "bad-frame"},
		{"relay-to-client type", wire.AppendEnd(nil, 11, 0, 0), 11, "bad-frame"},
		{"id zero", wire.AppendQuery(nil, 0, testProto, r.addr, []byte("RQ")), 0, "bad-frame"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.sendRaw(ctx, tc.b)
			fr := c.read(ctx)
			if fr.ID != tc.id {
				t.Fatalf("error for id %d, want %d", fr.ID, tc.id)
			}
			wantError(t, fr, wire.CodeBadFrame, tc.rule)
		})
	}
	t.Run("text message", func(t *testing.T) {
		if err := c.ws.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		wantError(t, c.read(ctx), wire.CodeBadFrame, wire.RuleBadFrame)
	})
	t.Run("duplicate id", func(t *testing.T) {
		silent := newResponder(t, nil)
		c.query(ctx, 20, silent.addr, "RQ")
		c.query(ctx, 20, silent.addr, "RQ")
		wantError(t, c.read(ctx), wire.CodeBadFrame, wire.RuleDuplicateID)
		c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 20))
		wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
	})
	// The connection survived all of it.
	c.query(ctx, 30, r.addr, "RQalive")
	replies, final := c.collect(ctx, 30)
	wantEnd(t, final, wire.EndWindow, 1)
	if string(replies[0].Datagram) != "RAalive" {
		t.Fatalf("reply %q", replies[0].Datagram)
	}
}

func TestOversizedFrameCloses(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	f := newRelay(t, testConfig())
	c := dialRaw(t, ctx, f.url)
	big := wire.AppendQuery(nil, 1, testProto, "127.0.0.1:1", make([]byte, f.srv.readLimit()))
	c.ws.Write(ctx, websocket.MessageBinary, big)
	_, _, err := c.ws.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status %v (%v), want 1009", got, err)
	}
	// The largest allowed frame is accepted.
	c2 := dialRaw(t, ctx, f.url)
	max := wire.AppendQuery(nil, 1, strings.Repeat("p", 255), strings.Repeat("a", 255), make([]byte, DefaultMaxDatagram))
	if len(max) != f.srv.readLimit() {
		t.Fatalf("largest query %d bytes, read limit %d", len(max), f.srv.readLimit())
	}
	c2.sendRaw(ctx, max)
	wantError(t, c2.read(ctx), wire.CodeUnknownProtocol, wire.RuleUnknownProtocol)
}

func TestReplyFromOtherAddressIgnored(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	f := newRelay(t, testConfig())
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	other, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		_, from, err := srv.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		// Another port on the same host answers first, then the server.
		other.WriteToUDPAddrPort([]byte("RAspoof"), from)
		time.Sleep(20 * time.Millisecond)
		srv.WriteToUDPAddrPort([]byte("RAreal"), from)
	}()
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, srv.LocalAddr().String(), "RQx")
	replies, final := c.collect(ctx, 1)
	<-done
	wantEnd(t, final, wire.EndWindow, 1)
	if string(replies[0].Datagram) != "RAreal" {
		t.Fatalf("reply %q", replies[0].Datagram)
	}
}

// TestBatchSubprotocol: a client that offers SubprotocolBatch gets it, and
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

// TestClientBatch: a client on SubprotocolBatch may send its frames in a
// BATCH, which the relay reads as if each had come alone, in order (a
// QUERY, another QUERY and its CANCEL, a PING); a BATCH that does not split
// is refused whole with one ERROR naming the byte at fault, a bad frame
// inside gets its own ERROR, and a client on Subprotocol that sends 0x85
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
	// On Subprotocol, BATCH is no client frame.
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
