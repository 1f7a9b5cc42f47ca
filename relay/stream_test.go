package relay

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/toyproto/tcpserver"
	"github.com/querylens/querylens/relay/wire"
)

// The TCP toy (internal/toyproto) is this package's stream protocol.
func init() { toyproto.RegisterTCP() }

// dialStream connects a raw client on wire.SubprotocolStream.
func dialStream(t testing.TB, ctx context.Context, url string) *rawClient {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{wire.SubprotocolStream, wire.SubprotocolBatch, wire.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	if ws.Subprotocol() != wire.SubprotocolStream {
		t.Fatalf("subprotocol %q", ws.Subprotocol())
	}
	ws.SetReadLimit(1 << 20)
	c := &rawClient{t: t, ws: ws}
	t.Cleanup(func() { ws.CloseNow() })
	f := c.read(ctx)
	if f.Type != wire.FrameHello || f.Hello.Version != wire.VersionStream {
		t.Fatalf("first frame %v version %d, want hello version %d", f.Type, f.Hello.Version, wire.VersionStream)
	}
	c.hello = f.Hello
	return c
}

// readFrames reads frames, opening BATCH messages.
func (c *rawClient) readFrames(ctx context.Context) []wire.Frame {
	c.t.Helper()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	raw := [][]byte{b}
	if wire.FrameType(b[0]) == wire.FrameBatch {
		if raw, err = wire.SplitBatch(b); err != nil {
			c.t.Fatal(err)
		}
	}
	var out []wire.Frame
	for _, r := range raw {
		f, err := wire.ParseFrame(r)
		if err != nil {
			c.t.Fatalf("relay sent a bad frame %x: %v", r, err)
		}
		f.Datagram = append([]byte(nil), f.Datagram...)
		out = append(out, f)
	}
	return out
}

// exchange sends an EXCHANGE of the TCP toy and returns the reply stream
// (checking the offsets), the CHUNK frames and the final frame.
func (c *rawClient) exchange(ctx context.Context, id uint32, target string, opts map[string]string) (stream []byte, chunks []wire.Frame, final wire.Frame) {
	c.t.Helper()
	c.sendRaw(ctx, wire.AppendExchange(nil, id, toyproto.TCPProtocol, target, opts))
	for {
		for _, f := range c.readFrames(ctx) {
			if f.ID != id {
				c.t.Fatalf("frame %v for id %d while waiting for %d", f.Type, f.ID, id)
			}
			switch f.Type {
			case wire.FrameChunk:
				if int(f.Offset) != len(stream) {
					c.t.Fatalf("chunk at offset %d after %d bytes", f.Offset, len(stream))
				}
				stream = append(stream, f.Datagram...)
				chunks = append(chunks, f)
			case wire.FrameEnd, wire.FrameError:
				return stream, chunks, f
			default:
				c.t.Fatalf("unexpected %v", f.Type)
			}
		}
	}
}

func listenToy(t *testing.T, mode tcpserver.Mode, players int) *tcpserver.Server {
	t.Helper()
	srv, err := tcpserver.Listen(mode, players)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func decodeToy(t *testing.T, stream []byte) *codecs.Message {
	t.Helper()
	msgs, rest, bad := codecs.CutStream(stream, toyproto.TCPMessageLen)
	if bad || len(rest) != 0 {
		t.Fatalf("stream %q does not cut: rest %q, bad %v", stream, rest, bad)
	}
	m, err := toyproto.TCPCodec{}.Decode(msgs, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStreamExchange(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	r := newRelay(t, testConfig())
	srv := listenToy(t, tcpserver.Answer, 3)
	c := dialStream(t, ctx, r.url)

	stream, chunks, final := c.exchange(ctx, 1, srv.Addr(), nil)
	wantEnd(t, final, wire.EndDone, len(chunks))
	if m := decodeToy(t, stream); m.Info.Name != toyproto.ServerName || m.Info.NumPlayers != 3 {
		t.Fatalf("decoded %+v", m.Info)
	}
	if got := srv.Asked(); len(got) != 1 || got[0] != "Q"+srv.Addr() {
		t.Fatalf("the server was asked %q", got)
	}

	// The same question again: from the cache, nothing more asked.
	r.settled(ctx)
	again, chunks, final := c.exchange(ctx, 2, srv.Addr(), nil)
	wantEnd(t, final, wire.EndDone, len(chunks))
	if string(again) != string(stream) || chunks[0].Flags&wire.FlagCached == 0 {
		t.Fatalf("cached stream %q flags %v, want %q cached", again, chunks[0].Flags, stream)
	}
	if srv.Conns() != 1 {
		t.Fatalf("the server got %d connections, want 1", srv.Conns())
	}
	// Other options are another question.
	_, _, final = c.exchange(ctx, 3, srv.Addr(), map[string]string{"players": "false"})
	if final.Type != wire.FrameEnd || final.Reason != wire.EndDone || srv.Conns() != 2 {
		t.Fatalf("final %+v after %d connections", final, srv.Conns())
	}
	if r.metric("querylens_relay_tcp_exchanges_total") != 2 {
		t.Errorf("tcp_exchanges_total %v, want 2", r.metric("querylens_relay_tcp_exchanges_total"))
	}
}

func TestStreamEndReasons(t *testing.T) {
	closedPort := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	for _, tc := range []struct {
		name   string
		mode   tcpserver.Mode
		reason wire.EndReason
		bytes  int // of the reply stream; -1: any
	}{
		{name: "trickle", mode: tcpserver.Trickle, reason: wire.EndDone, bytes: -1},
		{name: "endless", mode: tcpserver.Endless, reason: wire.EndStreamCap, bytes: -1},
		{name: "garbled", mode: tcpserver.Garbled, reason: wire.EndMalformed, bytes: -1},
		{name: "hang up", mode: tcpserver.HangUp, reason: wire.EndClosed, bytes: -1},
		{name: "silent", mode: tcpserver.Silent, reason: wire.EndTimeout, bytes: 0},
		{name: "refused", mode: -1, reason: wire.EndRefused, bytes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			cfg := testConfig()
			if tc.mode == tcpserver.Silent {
				cfg.StreamDeadline = 300 * time.Millisecond // the one case that waits for it
			}
			cfg.ReplyCaps = map[string]ReplyCap{toyproto.TCPProtocol: {Bytes: 64, Datagrams: 1000}}
			r := newRelay(t, cfg)
			target := closedPort()
			if tc.mode >= 0 {
				target = listenToy(t, tc.mode, 1).Addr()
			}
			c := dialStream(t, ctx, r.url)
			stream, chunks, final := c.exchange(ctx, 1, target, nil)
			wantEnd(t, final, tc.reason, len(chunks))
			if tc.bytes >= 0 && len(stream) != tc.bytes {
				t.Errorf("%d bytes, want %d", len(stream), tc.bytes)
			}
			if tc.reason == wire.EndStreamCap && len(stream) != 64 {
				t.Errorf("capped at %d bytes, want 64", len(stream))
			}
		})
	}
}

// srvResolver is fakeResolver with SRV records.
type srvResolver struct {
	fakeResolver
	srv map[string]*net.SRV
}

func (r srvResolver) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	if s, ok := r.srv[name]; ok {
		return "", []*net.SRV{s}, nil
	}
	return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func TestStreamSRV(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	srv := listenToy(t, tcpserver.Answer, 0)
	port, _ := strconv.Atoi(srv.Addr()[len("127.0.0.1:"):])
	cfg := testConfig()
	cfg.Resolver = srvResolver{
		fakeResolver: fakeResolver{"box.test": {netip.MustParseAddr("127.0.0.1")}},
		srv:          map[string]*net.SRV{"_toytcp._tcp.play.test": {Target: "box.test.", Port: uint16(port)}},
	}
	r := newRelay(t, cfg)
	c := dialStream(t, ctx, r.url)
	_, chunks, final := c.exchange(ctx, 1, "Play.Test", nil)
	wantEnd(t, final, wire.EndDone, len(chunks))
	// The query names the server as the user wrote it, on the default
	// port: what a proxy routes on.
	if got := srv.Asked(); len(got) != 1 || got[0] != "QPlay.Test:"+strconv.Itoa(toyproto.TCPPort) {
		t.Fatalf("the server was asked %q", got)
	}
}

// TestStreamRefusals proves each refusal is a policy decision: nothing is
// dialled (tcp_exchanges_total stays 0) and nothing reaches a server.
func TestStreamRefusals(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	srv := listenToy(t, tcpserver.Answer, 0)
	cfg := testConfig()
	cfg.AllowTargets = nil // the public policy
	cfg.Resolver = srvResolver{
		fakeResolver: fakeResolver{
			"private.test": {netip.MustParseAddr("10.1.2.3")},
			"mixed.test":   {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("192.168.0.1")},
			"mapped.test":  {netip.MustParseAddr("::ffff:127.0.0.1")},
			"inner.test":   {netip.MustParseAddr("172.16.0.9")},
		},
		srv: map[string]*net.SRV{
			"_toytcp._tcp.srv-private.test": {Target: "inner.test.", Port: 25565},
			"_toytcp._tcp.srv-literal.test": {Target: "127.0.0.1", Port: 25565},
		},
	}
	r := newRelay(t, cfg)
	c := dialStream(t, ctx, r.url)
	for i, tc := range []struct {
		target string
		opts   map[string]string
		code   wire.Code
		rule   wire.Rule
	}{
		{srv.Addr(), nil, wire.CodeDenied, wire.RuleLoopback},
		{"10.0.0.7:25565", nil, wire.CodeDenied, wire.RulePrivate},
		{"[::ffff:10.0.0.7]:25565", nil, wire.CodeDenied, wire.RuleV4Mapped},
		{"[::1]:25565", nil, wire.CodeDenied, wire.RuleLoopback},
		{"8.8.8.8:22", nil, wire.CodeDenied, wire.RuleWellKnownPort},
		{"private.test:25565", nil, wire.CodeResolve, wire.RulePrivate},
		{"mixed.test:25565", nil, wire.CodeResolve, wire.RulePrivate},
		{"mapped.test:25565", nil, wire.CodeResolve, wire.RuleLoopback},
		{"srv-private.test", nil, wire.CodeResolve, wire.RulePrivate},
		{"srv-literal.test", nil, wire.CodeDenied, wire.RuleLoopback},
		{"nowhere.test", nil, wire.CodeResolve, wire.RuleResolve},
		{"8.8.8.8", nil, wire.CodeBadFrame, wire.RuleTarget},
		{"8.8.8.8:25565", map[string]string{"host": "other.example"}, wire.CodeNotAQuery, wire.RuleTargetInQuery},
		{"8.8.8.8:25565", map[string]string{"port": "25566"}, wire.CodeNotAQuery, wire.RuleTargetInQuery},
		{"8.8.8.8:25565", map[string]string{"nonsense": "1"}, wire.CodeNotAQuery, wire.RuleOptions},
	} {
		_, _, final := c.exchange(ctx, uint32(i+1), tc.target, tc.opts)
		t.Run(tc.target, func(t *testing.T) { wantError(t, final, tc.code, tc.rule) })
	}
	// A datagram protocol over EXCHANGE, a stream one over QUERY.
	c.sendRaw(ctx, wire.AppendExchange(nil, 90, testProto, "8.8.8.8:25565", nil))
	wantError(t, c.read(ctx), wire.CodeNotAQuery, wire.RuleNotStream)
	c.sendRaw(ctx, wire.AppendQuery(nil, 91, toyproto.TCPProtocol, "8.8.8.8:25565", toyproto.TCPMessage("Q8.8.8.8:25565")))
	wantError(t, c.read(ctx), wire.CodeNotAQuery, wire.RuleNotStream)
	if n := r.metric("querylens_relay_tcp_exchanges_total"); n != 0 || srv.Conns() != 0 {
		t.Fatalf("%v exchanges dialled, %d connections, want none", n, srv.Conns())
	}
}

// TestStreamOnV1 keeps EXCHANGE off the older subprotocols: an older page
// goes on as before, and a frame it could not have sent is refused.
func TestStreamOnV1(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	r := newRelay(t, testConfig())
	c := dialRaw(t, ctx, r.url)
	if c.hello.Version != wire.Version {
		t.Fatalf("hello version %d on v1", c.hello.Version)
	}
	c.sendRaw(ctx, wire.AppendExchange(nil, 1, toyproto.TCPProtocol, "127.0.0.1:1", nil))
	wantError(t, c.read(ctx), wire.CodeBadFrame, wire.RuleBadFrame)
}

// flipResolver answers loopback the first time and a private address
// after: the relay must connect to the address it checked, never asking
// again.
type flipResolver struct{ calls *atomic.Int32 }

func (r flipResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("10.9.9.9")}, nil
}

func TestStreamConnectsToTheAddressChecked(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	srv := listenToy(t, tcpserver.Answer, 0)
	calls := new(atomic.Int32)
	cfg := testConfig()
	cfg.Resolver = flipResolver{calls}
	r := newRelay(t, cfg)
	c := dialStream(t, ctx, r.url)
	_, port, _ := net.SplitHostPort(srv.Addr())
	_, chunks, final := c.exchange(ctx, 1, "flip.test:"+port, nil)
	wantEnd(t, final, wire.EndDone, len(chunks))
	if calls.Load() != 1 || srv.Conns() != 1 {
		t.Fatalf("%d lookups, %d connections; want one of each", calls.Load(), srv.Conns())
	}
}

// waitStreams waits until n stream connections are in progress.
func waitStreams(t *testing.T, ctx context.Context, r *relayFixture, n int) {
	t.Helper()
	for r.srv.streams.inProgress() != n {
		if ctx.Err() != nil {
			t.Fatalf("%d connections in progress, want %d", r.srv.streams.inProgress(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestStreamLimits(t *testing.T) {
	silent := func(t *testing.T, n int) []string {
		var addrs []string
		for range n {
			addrs = append(addrs, listenToy(t, tcpserver.Silent, 0).Addr())
		}
		return addrs
	}
	t.Run("per client", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		cfg := testConfig()
		cfg.MaxStreamsPerClient, cfg.MaxStreamsPerHost = 2, 10
		r := newRelay(t, cfg)
		addrs := silent(t, 3)
		c := dialStream(t, ctx, r.url)
		c.sendRaw(ctx, wire.AppendExchange(nil, 1, toyproto.TCPProtocol, addrs[0], nil))
		c.sendRaw(ctx, wire.AppendExchange(nil, 2, toyproto.TCPProtocol, addrs[1], nil))
		waitStreams(t, ctx, r, 2)
		_, _, final := c.exchange(ctx, 3, addrs[2], nil)
		wantError(t, final, wire.CodeRateLimited, wire.RuleTCPPerClient)
		// A cancelled exchange gives its connection back once it closed.
		c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 1))
		wantEnd(t, c.read(ctx), wire.EndCancelled, 0)
		waitStreams(t, ctx, r, 1)
		c.sendRaw(ctx, wire.AppendExchange(nil, 4, toyproto.TCPProtocol, addrs[2], nil))
		waitStreams(t, ctx, r, 2)
	})
	t.Run("per target host", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		cfg := testConfig()
		cfg.MaxStreamsPerHost = 1
		r := newRelay(t, cfg)
		addrs := silent(t, 2)
		c := dialStream(t, ctx, r.url)
		c.sendRaw(ctx, wire.AppendExchange(nil, 1, toyproto.TCPProtocol, addrs[0], nil))
		waitStreams(t, ctx, r, 1)
		_, _, final := c.exchange(ctx, 2, addrs[1], nil)
		wantError(t, final, wire.CodeRateLimited, wire.RuleTCPPerTarget)
	})
	t.Run("in all", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		cfg := testConfig()
		cfg.MaxStreams, cfg.MaxStreamsPerHost = 1, 10
		r := newRelay(t, cfg)
		addrs := silent(t, 2)
		a := dialStream(t, ctx, r.url)
		b := dialStream(t, ctx, r.url)
		a.sendRaw(ctx, wire.AppendExchange(nil, 1, toyproto.TCPProtocol, addrs[0], nil))
		waitStreams(t, ctx, r, 1)
		_, _, final := b.exchange(ctx, 1, addrs[1], nil)
		wantError(t, final, wire.CodeBusy, wire.RuleTCPCap)
	})
	t.Run("identical exchanges share one connection", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		cfg := testConfig()
		cfg.MaxStreamsPerClient = 1
		r := newRelay(t, cfg)
		addr := silent(t, 1)[0]
		c := dialStream(t, ctx, r.url)
		c.sendRaw(ctx, wire.AppendExchange(nil, 1, toyproto.TCPProtocol, addr, nil))
		waitStreams(t, ctx, r, 1)
		c.sendRaw(ctx, wire.AppendExchange(nil, 2, toyproto.TCPProtocol, addr, nil))
		c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, 2))
		wantEnd(t, c.read(ctx), wire.EndCancelled, 0) // joined, not refused
	})
	t.Run("the client's rate", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		cfg := testConfig()
		cfg.ConnRate.Burst, cfg.ConnRate.PerSecond = 1, 1e-9
		r := newRelay(t, cfg)
		addr := listenToy(t, tcpserver.Answer, 0).Addr()
		c := dialStream(t, ctx, r.url)
		_, chunks, final := c.exchange(ctx, 1, addr, nil)
		wantEnd(t, final, wire.EndDone, len(chunks))
		_, _, final = c.exchange(ctx, 2, addr, nil)
		wantError(t, final, wire.CodeRateLimited, wire.RulePerConnection)
	})
	t.Run("the target's rate", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		cfg := testConfig()
		cfg.TargetRate.Burst, cfg.TargetRate.PerSecond = 1, 1e-9
		r := newRelay(t, cfg)
		addr := listenToy(t, tcpserver.Answer, 0).Addr()
		c := dialStream(t, ctx, r.url)
		_, chunks, final := c.exchange(ctx, 1, addr, nil)
		wantEnd(t, final, wire.EndDone, len(chunks))
		_, _, final = c.exchange(ctx, 2, addr, map[string]string{"players": "false"})
		wantError(t, final, wire.CodeRateLimited, wire.RulePerTarget)
	})
}

// TestStreamSlowClient: a chunk that does not fit the client's queue ends
// the exchange for that client with END slow-client, never a silent cut.
func TestStreamSlowClient(t *testing.T) {
	r := newRelay(t, testConfig())
	s := r.srv
	// A connection whose writer is busy (writing set): what is pushed
	// stays queued, as for a client that does not read.
	c := &conn{s: s, lim: ClientLimits{QueueFrames: 1, QueueBytes: 1 << 20, MaxInFlight: 4}, writing: true, active: map[uint32]*asker{}}
	a := &asker{sink: c, id: 7, stream: true}
	c.active[7] = a
	s.inflight.Add(1)
	c.reply(a, reply{data: []byte("abc")}, 0)
	c.reply(a, reply{data: []byte("def")}, 0)
	c.reply(a, reply{data: []byte("ghi")}, 0)
	c.end(a, wire.EndDone) // the exchange's own end comes too late
	if len(c.queue) != 2 {
		t.Fatalf("%d frames queued, want a CHUNK and an END", len(c.queue))
	}
	ch, _ := wire.ParseFrame(c.queue[0])
	end, _ := wire.ParseFrame(c.queue[1])
	if ch.Type != wire.FrameChunk || ch.Offset != 0 || string(ch.Datagram) != "abc" {
		t.Fatalf("first frame %+v", ch)
	}
	wantEnd(t, end, wire.EndSlowClient, 1)
	if c.active[7] != nil || s.inflight.Load() != 0 {
		t.Fatal("the asker is still open")
	}
	c.mu.Lock()
	c.unqueueLocked(c.queue)
	c.queue = nil
	c.mu.Unlock()
}

// TestStreamFlood: 2,000 exchanges asked at once by one client are held
// to the limits: never more than MaxStreamsPerClient connections in
// progress, every id gets exactly one final frame, and the servers see no
// more connections than the exchanges that ran.
func TestStreamFlood(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	cfg := testConfig()
	cfg.MaxStreamsPerHost = 1000 // every server is on 127.0.0.1: let the per-client cap bind
	cfg.StreamDeadline = 500 * time.Millisecond
	r := newRelay(t, cfg)
	var servers []*tcpserver.Server
	for range 16 {
		servers = append(servers, listenToy(t, tcpserver.Silent, 0))
	}
	c := dialStream(t, ctx, r.url)
	const n = 2000
	finals := map[uint32]int{}
	rules := map[string]int{}
	read := func() {
		for _, f := range c.readFrames(ctx) {
			switch f.Type {
			case wire.FrameError:
				finals[f.ID]++
				rule, _, _ := strings.Cut(f.Message, ":")
				rules[rule]++
			case wire.FrameEnd:
				finals[f.ID]++
				rules["end "+f.Reason.String()]++
			}
		}
	}
	// 50 at a time, each batch's refusals read before the next: a client
	// that does not read loses ERRORs past its queue (ctrlMax), as it
	// would for QUERY.
	var batch [][]byte
	for i := range n {
		opts := map[string]string{"players": strconv.FormatBool(i/16%2 == 0)}
		batch = append(batch, wire.AppendExchange(nil, uint32(i+1), toyproto.TCPProtocol, servers[i%len(servers)].Addr(), opts))
		if len(batch) == 50 || i == n-1 {
			c.sendRaw(ctx, wire.AppendBatch(nil, batch))
			batch = nil
			for len(finals)+openIDs(r.srv) < i+1 {
				read()
			}
		}
	}
	for len(finals) < n {
		read()
	}
	for id, k := range finals {
		if k != 1 {
			t.Fatalf("id %d got %d final frames", id, k)
		}
	}
	r.srv.streams.mu.Lock()
	peak, peakClient := r.srv.streams.peak, r.srv.streams.peakClient
	r.srv.streams.mu.Unlock()
	if peakClient > DefaultMaxStreamsPerClient || peak > DefaultMaxStreamsPerClient {
		t.Fatalf("peak %d connections in progress (%d for the client), cap %d", peak, peakClient, DefaultMaxStreamsPerClient)
	}
	accepted := 0
	for _, s := range servers {
		accepted += s.Conns()
	}
	if ended := rules["end timeout"]; accepted > ended {
		t.Fatalf("the servers accepted %d connections, more than the %d exchanges that ran", accepted, ended)
	}
	t.Logf("finals by rule: %v; peak %d", rules, peak)
}

// openIDs is how many query ids are open on the relay's connections.
func openIDs(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		c.mu.Lock()
		n += len(c.active)
		c.mu.Unlock()
	}
	return n
}

// TestStreamExchangeInProcess: the status page's path, the relay's
// ExchangeOptions, shares the EXCHANGE's admission, cache and policy.
func TestStreamExchangeInProcess(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	r := newRelay(t, testConfig())
	srv := listenToy(t, tcpserver.Answer, 2)
	newQuery := func() codecs.Query {
		q, err := toyproto.TCPCodec{}.NewQuery(map[string]string{"host": "127.0.0.1", "port": srv.Addr()[len("127.0.0.1:"):]})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	for i := range 2 {
		q := newQuery()
		res, err := r.srv.ExchangeOptions(ctx, toyproto.TCPProtocol, srv.Addr(), nil, q)
		if err != nil || !res.Done || res.Received != 4 || res.FromCache != (i == 1) {
			t.Fatalf("exchange %d: %+v, %v", i, res, err)
		}
		m, err := q.Result(codecs.DecodeOptions{})
		if err != nil || m.Info.Name != toyproto.ServerName || m.Info.NumPlayers != 2 {
			t.Fatalf("Result = %+v, %v", m, err)
		}
		r.settled(ctx)
	}
	if srv.Conns() != 1 {
		t.Errorf("%d connections, want 1 (the second from the cache)", srv.Conns())
	}
	// The same refusals as over the WebSocket.
	if _, err := r.srv.ExchangeOptions(ctx, toyproto.TCPProtocol, srv.Addr(), map[string]string{"host": "elsewhere.example"}, newQuery()); err == nil || !strings.HasPrefix(err.(*wire.RefusedError).Message, string(wire.RuleTargetInQuery)) {
		t.Errorf("another host: %v", err)
	}
	if _, err := r.srv.Exchange(ctx, toyproto.TCPProtocol, srv.Addr(), newQuery()); err == nil || !strings.HasPrefix(err.(*wire.RefusedError).Message, string(wire.RuleNotStream)) {
		t.Errorf("Exchange of a stream protocol: %v", err)
	}
}

// TestStreamLoopbackLimit: Config.Loopback's MaxStreams replaces the cap
// per client for clients on loopback (the demo's pages).
func TestStreamLoopbackLimit(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	cfg := testConfig()
	cfg.MaxStreamsPerClient, cfg.MaxStreamsPerHost = 1, 100
	cfg.Loopback = &ClientLimits{MaxStreams: 3}
	r := newRelay(t, cfg)
	c := dialStream(t, ctx, r.url)
	var addrs []string
	for range 4 {
		s, err := tcpserver.Listen(tcpserver.Silent, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		addrs = append(addrs, s.Addr())
	}
	for i := range 3 {
		c.sendRaw(ctx, wire.AppendExchange(nil, uint32(i+1), toyproto.TCPProtocol, addrs[i], nil))
	}
	waitStreams(t, ctx, r, 3)
	_, _, final := c.exchange(ctx, 4, addrs[3], nil)
	wantError(t, final, wire.CodeRateLimited, wire.RuleTCPPerClient)
}

// TestStreamExchangeCached: ExchangeOptionsCached answers from the cache
// and refuses what is not in it, connecting to nothing.
func TestStreamExchangeCached(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	r := newRelay(t, testConfig())
	srv := listenToy(t, tcpserver.Answer, 1)
	q := func() codecs.Query {
		q, _, err := codecs.NewConversation(toyproto.TCPCodec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	if _, err := r.srv.ExchangeOptionsCached(ctx, toyproto.TCPProtocol, srv.Addr(), nil, q()); err == nil || !strings.HasPrefix(err.(*wire.RefusedError).Message, string(wire.RuleNotCached)) || srv.Conns() != 0 {
		t.Fatalf("not cached: %v, %d connections", err, srv.Conns())
	}
	if res, err := r.srv.ExchangeOptions(ctx, toyproto.TCPProtocol, srv.Addr(), nil, q()); err != nil || !res.Done {
		t.Fatalf("ExchangeOptions = %+v, %v", res, err)
	}
	r.settled(ctx)
	if res, err := r.srv.ExchangeOptionsCached(ctx, toyproto.TCPProtocol, srv.Addr(), nil, q()); err != nil || !res.Done || !res.FromCache || srv.Conns() != 1 {
		t.Fatalf("cached: %+v, %v, %d connections", res, err, srv.Conns())
	}
}
