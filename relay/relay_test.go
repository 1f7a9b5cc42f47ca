package relay

import (
	"net"
	"net/netip"
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
