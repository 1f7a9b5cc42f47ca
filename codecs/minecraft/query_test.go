package minecraft_test

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// serveOnce listens on loopback and answers one connection: it reads
// the query (want, if not nil, must be what came), then writes reply in
// pieces of step bytes.
func serveOnce(t *testing.T, want []byte, reply []byte, step int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 1024)
		n, _ := c.Read(buf)
		if want != nil && !bytes.Equal(buf[:n], want) {
			return
		}
		for i := 0; i < len(reply); i += step {
			c.Write(reply[i:min(i+step, len(reply))])
		}
		time.Sleep(200 * time.Millisecond)
	}()
	return ln.Addr().String()
}

// converse drives q over a TCP connection to addr as the relay does: the
// query written once, the stream cut by MessageLen into the messages
// Feed takes, until Feed says done, the server closes or 3 s pass.
func converse(t *testing.T, addr string, q codecs.Query) (done bool, feedErr error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	for _, b := range q.Start() {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	var buf []byte
	chunk := make([]byte, 4096)
	for len(buf) <= minecraft.MaxReplyBytes {
		for {
			n := minecraft.MessageLen(buf)
			if n == 0 {
				break
			}
			_, done, err := q.Feed(buf[:n])
			buf = buf[n:]
			if err != nil {
				feedErr = err
			}
			if done {
				return true, feedErr
			}
		}
		n, err := c.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			return false, feedErr
		}
	}
	return false, feedErr
}

func TestQueryOverTCP(t *testing.T) {
	g := readGolden(t, "testdata/vanilla-status.hex")
	var reply []byte
	for _, d := range g.Datagrams {
		reply = append(reply, d...)
	}
	for _, step := range []int{1, 7, len(reply)} {
		q, err := (&minecraft.Codec{}).NewQuery(map[string]string{"host": "mc.example.org", "port": "25566"})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := minecraft.AppendRequest(nil, minecraft.Request{ProtocolVersion: -1, Host: "mc.example.org", Port: 25566})
		if got := q.Start()[0]; !bytes.Equal(got, want) {
			t.Fatalf("Start = %x, want %x", got, want)
		}
		addr := serveOnce(t, want, reply, step)
		done, err := converse(t, addr, q)
		if !done || err != nil {
			t.Fatalf("step %d: done %v, %v", step, done, err)
		}
		m, err := q.Result(codecs.DecodeOptions{})
		if err != nil || m.Info.Name != "querylens vanilla demo Second line" || m.Info.NumPlayers != 3 || len(m.Info.Players) != 2 {
			t.Fatalf("step %d: %+v, %v", step, m.Info, err)
		}
	}
}

// TestQueryHostile: a frame that cannot be a reply ends the
// conversation at once with an error that says why; a length past the
// data leaves it incomplete when the server closes.
func TestQueryHostile(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		done       bool
		sentinel   error
	}{
		{"six-byte VarInt", "bad-varint", true, codecs.ErrTooLong},
		{"JSON that does not parse", "bad-json", true, codecs.ErrBadValue},
		{"length past the data", "bad-length", false, codecs.ErrIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := readGolden(t, "testdata/"+tc.file+".hex")
			q, _ := (&minecraft.Codec{}).NewQuery(nil)
			start := time.Now()
			done, _ := converse(t, serveOnce(t, nil, g.Datagrams[0], 1), q)
			if done != tc.done {
				t.Fatalf("done = %v, want %v", done, tc.done)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %v: it waited", time.Since(start))
			}
			_, err := q.Result(codecs.DecodeOptions{})
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("Result: %v, want %v", err, tc.sentinel)
			}
		})
	}
	// A length past the cap is refused from its header alone.
	huge := []byte{0x80, 0x80, 0x7f}
	if n := minecraft.MessageLen(huge); n != 3 {
		t.Fatalf("MessageLen(length 2 MiB) = %d, want the header's 3", n)
	}
	q, _ := (&minecraft.Codec{}).NewQuery(nil)
	if _, done, err := q.Feed(huge); !done || !errors.Is(err, codecs.ErrTooLong) {
		t.Errorf("Feed(length 2 MiB) = %v, %v", done, err)
	}
}

func TestLegacyQuery(t *testing.T) {
	q, err := (&minecraft.Codec{}).NewQuery(map[string]string{"legacy": "true", "host": "localhost", "port": "25565"})
	if err != nil {
		t.Fatal(err)
	}
	reply := minecraft.AppendLegacyResponse(nil, 78, "1.6.4", "Old §cred", 1, 8)
	done, err := converse(t, serveOnce(t, q.Start()[0], reply, 3), q)
	if !done || err != nil {
		t.Fatalf("done %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.Name != "Old red" || m.Info.Version != "1.6.4" || m.Info.MaxPlayers != 8 {
		t.Fatalf("%+v, %v", m.Info, err)
	}
}

// TestTargetInQuery: the handshake carries the host and port given;
// hosts that could smuggle bytes are refused by NewQuery, and a
// handshake carrying one by CheckQuery.
func TestTargetInQuery(t *testing.T) {
	c := &minecraft.Codec{}
	for _, h := range []string{"mc.example.org", "203.0.113.7", "::1", "a-b.c", ""} {
		if _, err := c.NewQuery(map[string]string{"host": h}); err != nil {
			t.Errorf("host %q: %v", h, err)
		}
	}
	for _, h := range []string{"a\r\nb", "a b", "a\x00FML\x00", "a/b", "ä.example", strings.Repeat("a", 254)} {
		if _, err := c.NewQuery(map[string]string{"host": h}); err == nil {
			t.Errorf("host %q accepted", h)
		}
		// Spliced in by hand, as a hostile page would.
		body := []byte{0x00, 0x7f, byte(len(h))}
		body = append(body, h...)
		body = append(body, 0x63, 0xdd, 0x01)
		bad := append([]byte{byte(len(body))}, body...)
		bad = append(bad, 0x01, 0x00)
		if len(h) < 120 {
			if err := c.CheckQuery(bad); err == nil {
				t.Errorf("CheckQuery accepts host %q", h)
			}
		}
		legacy := []byte{0xfe, 0x01, 0xfa, 0, 11}
		for _, r := range "MC|PingHost" {
			legacy = append(legacy, 0, byte(r))
		}
		u := []rune(h)
		legacy = append(legacy, 0, byte(7+2*len(u)), 78, 0, byte(len(u)))
		for _, r := range u {
			legacy = append(legacy, byte(r>>8), byte(r))
		}
		legacy = append(legacy, 0, 0, 0x63, 0xdd)
		if len(u) < 100 {
			if err := c.CheckQuery(legacy); err == nil {
				t.Errorf("CheckQuery accepts the legacy ping with host %q", h)
			}
		}
	}
	for _, o := range []map[string]string{{"port": "65536"}, {"protocol": "x"}, {"nope": "1"}} {
		if _, err := c.NewQuery(o); err == nil {
			t.Errorf("options %v accepted", o)
		}
	}
	// FE and FE 01 name no host: they decode, and are not sent.
	for _, b := range [][]byte{{0xfe}, {0xfe, 0x01}} {
		if _, err := minecraft.DecodeRequest(b); err != nil {
			t.Errorf("DecodeRequest(%x): %v", b, err)
		}
		if err := c.CheckQuery(b); err == nil {
			t.Errorf("CheckQuery accepts %x", b)
		}
	}
	// Next state 2 (login) is not a status ping.
	b, _ := minecraft.AppendRequest(nil, minecraft.Request{Host: "x", Port: 1})
	b[len(b)-3] = 2
	if err := c.CheckQuery(b); err == nil {
		t.Error("CheckQuery accepts next state 2")
	}
}

func TestBedrockQuery(t *testing.T) {
	c := &minecraft.BedrockCodec{}
	q, err := c.NewQuery(map[string]string{"time": "42"})
	if err != nil {
		t.Fatal(err)
	}
	ping := q.Start()[0]
	if err := c.CheckQuery(ping); err != nil {
		t.Fatal(err)
	}
	if _, done, err := q.Feed(minecraft.AppendBedrockResponse(nil, 41, 7, "MCPE;x;1;1;0;1")); done || err == nil {
		t.Error("a pong of another time completes the ping")
	}
	if _, done, err := q.Feed(minecraft.AppendBedrockResponse(nil, 42, 7, "MCEE;Class;1;1.0;2;30;1;Level;Creative;1;19132;19133;")); !done || err != nil {
		t.Fatalf("pong: %v %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.Name != "Class" || m.Info.Map != "Level" || m.Info.GameType != "Creative" || m.Info.MaxPlayers != 30 {
		t.Fatalf("%+v %v", m.Info, err)
	}
	bad := minecraft.AppendBedrockResponse(nil, 42, 7, "MCPE;x;1;1;0;1")
	bad[20] ^= 1 // inside the magic
	if _, err := c.Decode([][]byte{bad}, codecs.DecodeOptions{}); !errors.Is(err, codecs.ErrBadMagic) {
		t.Errorf("a pong with a wrong magic: %v", err)
	}
	k1 := codecs.QueryKey(c.Name(), ping)
	q2, _ := c.NewQuery(map[string]string{"time": "9"})
	if k2 := codecs.QueryKey(c.Name(), q2.Start()[0]); !bytes.Equal(k1, k2) {
		t.Error("pings of two times have two keys")
	}
}

// TestLengthStartingFE: a packet whose VarInt length starts with FE (a
// length of 126 modulo 128, past 127: every 128th size of status reply,
// or a handshake naming a long host) is a packet, not the legacy ping
// (FE, FE 01, FE 01 FA), in the codec's Decode, Detect and the query.
func TestLengthStartingFE(t *testing.T) {
	// A status reply of 254 bytes: FE 01 00 ...
	js := []byte(`{"description":"` + strings.Repeat("x", 251-len(`{"description":""}`)) + `"}`)
	reply := minecraft.AppendStatusResponse(nil, js)
	if reply[0] != 0xfe || reply[1] != 0x01 || len(reply) != 256 {
		t.Fatalf("the reply starts % x (%d bytes), want FE 01 and 256 bytes", reply[:3], len(reply))
	}
	c := &minecraft.Codec{}
	m, err := c.Decode([][]byte{reply}, codecs.DecodeOptions{})
	if err != nil || m.Kind != codecs.KindResponse {
		t.Errorf("Decode(a reply of 254 bytes) = kind %q, %v; want a response", m.Kind, err)
	}
	if k, conf := c.Detect(reply); k != codecs.KindResponse || conf != codecs.Likely {
		t.Errorf("Detect(a reply of 254 bytes) = %q, %v; want a response, likely", k, conf)
	}
	q, err := c.NewQuery(map[string]string{"host": "play.example", "port": "25565"})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	if _, done, err := q.Feed(reply); !done || err != nil {
		t.Fatalf("Feed(a reply of 254 bytes) = done %v, %v", done, err)
	}
	if m, err := q.Result(codecs.DecodeOptions{}); err != nil || m.Info.Name != string(js[16:len(js)-2]) {
		t.Errorf("Result = %+v, %v", m.Info, err)
	}
	// A handshake whose length is 254: a host of 240-odd characters.
	for n := 200; n < 253; n++ {
		host := strings.Repeat("a", n-4) + ".net"
		req, err := minecraft.AppendRequest(nil, minecraft.Request{Host: host, Port: minecraft.DefaultPort, ProtocolVersion: minecraft.PingProtocol})
		if err != nil {
			t.Fatal(err)
		}
		if req[0] != 0xfe {
			continue
		}
		got, err := minecraft.DecodeRequest(req)
		if err != nil || got.Host != host || got.Legacy {
			t.Errorf("minecraft.DecodeRequest(a handshake of % x…) = %+v, %v", req[:3], got, err)
		}
		if k, conf := c.Detect(req); k != codecs.KindQuery || conf != codecs.Certain {
			t.Errorf("Detect(a handshake of % x…) = %q, %v", req[:3], k, conf)
		}
		return
	}
	t.Fatal("no host length gave a handshake whose length starts with FE")
}
