package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/pcapng"
)

// tcpExchanges are the packets of a capture holding a Minecraft Java List
// Ping (port 25565), a legacy ping on a port no table names (found by its
// content), and a GameSpy v1 master session (port 28900): the requests as
// querylens's own queries build them, the replies as the demo's servers
// answer them.
func tcpExchanges(t *testing.T) []pcapng.Packet {
	t.Helper()
	mc, _ := pcapng.ParseEndpoint("192.0.2.20:25565")
	legacy, _ := pcapng.ParseEndpoint("192.0.2.21:31000")
	master, _ := pcapng.ParseEndpoint("192.0.2.30:28900")
	c, err := codecs.Lookup("minecraft")
	if err != nil {
		t.Fatal(err)
	}
	start := func(opts map[string]string) []byte {
		q, err := c.NewQuery(opts)
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		for _, m := range q.Start() {
			b = append(b, m...)
		}
		return b
	}
	server := demo.NewMinecraft(7, demo.MinecraftVanilla, demo.Normal)
	ping := start(map[string]string{"host": "192.0.2.20", "port": "25565"})
	status, ok := server.Reply(ping)
	if !ok {
		t.Fatal("the demo server does not answer the List Ping")
	}
	legacyPing := start(map[string]string{"host": "192.0.2.21", "port": "31000", "legacy": "true"})
	kick, ok := server.Reply(legacyPing)
	if !ok {
		t.Fatal("the demo server does not answer the legacy ping")
	}
	// The master's greeting and list as the demo master writes them, the
	// client's validation and request as querylens's master query does.
	greeting := []byte(`\basic\\secure\QWERTY\final\`)
	g, _ := codecs.Lookup(gamespy1.Protocol)
	mq, err := g.NewQuery(map[string]string{"master": "true", "gamename": "ut"})
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := mq.Feed(greeting)
	if err != nil || len(req) != 1 {
		t.Fatalf("master query: %q, %v", req, err)
	}
	list := []byte(`\ip\192.0.2.40:7778\ip\192.0.2.41:7778\ip\192.0.2.42:7788\final\`)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	return []pcapng.Packet{
		{Micros: t0, TCP: true, Stream: 1, Target: mc, Data: ping},
		{Micros: t0 + 100, TCP: true, Stream: 2, Target: master, Direction: pcapng.Received, Data: greeting},
		{Micros: t0 + 900, TCP: true, Stream: 1, Target: mc, Direction: pcapng.Received, Data: status},
		{Micros: t0 + 1000, TCP: true, Stream: 2, Target: master, Data: req[0]},
		{Micros: t0 + 1500, TCP: true, Stream: 3, Target: legacy, Data: legacyPing},
		{Micros: t0 + 2000, TCP: true, Stream: 2, Target: master, Direction: pcapng.Received, Data: list},
		{Micros: t0 + 2500, TCP: true, Stream: 3, Target: legacy, Direction: pcapng.Received, Data: kick},
	}
}

// dropBlock removes the first EPB holding mark from a pcapng the writer
// made: a segment the capture missed.
func dropBlock(t *testing.T, f []byte, mark string) []byte {
	t.Helper()
	var out []byte
	for at := 0; at < len(f); {
		typ, size := binary.LittleEndian.Uint32(f[at:]), int(binary.LittleEndian.Uint32(f[at+4:]))
		if typ == 6 && strings.Contains(string(f[at:at+size]), mark) {
			return append(out, f[at+size:]...)
		}
		out = append(out, f[at:at+size]...)
		at += size
	}
	t.Fatalf("no EPB holds %q", mark)
	return nil
}

// TestInspectTCP: inspect --pcap reads TCP streams: the protocol of each
// found by its port or its content, requests and replies decoded whole,
// a master's list decoded from its session; and, in a hostile capture, a
// reply missing a segment is decoded as far as it goes with a warning,
// bytes of no protocol are counted unknown. Text and JSON output are
// golden files under testdata/tcp.
func TestInspectTCP(t *testing.T) {
	good := pcapng.Append(nil, "test", tcpExchanges(t))
	// The hostile capture: the master's list (200 servers, 4,400 bytes
	// in four segments) without its second segment, and a stream of bytes
	// of no protocol.
	noise, _ := pcapng.ParseEndpoint("192.0.2.50:40000")
	pkts := tcpExchanges(t)[:6]
	var long []byte
	for i := 0; i < 200; i++ {
		long = append(long, `\ip\10.0.`+strconv.Itoa(100+i/100)+"."+strconv.Itoa(100+i%100)+":7778"...)
	}
	long = append(long, `\final\`...)
	pkts[5].Data = long
	pkts = append(pkts,
		pcapng.Packet{Micros: pkts[5].Micros + 10, TCP: true, Stream: 9, Target: noise, Data: []byte("GET / HTTP/1.0\r\n\r\n")},
		pcapng.Packet{Micros: pkts[5].Micros + 20, TCP: true, Stream: 9, Target: noise, Direction: pcapng.Received, Data: []byte("HTTP/1.0 200 OK\r\n\r\n")})
	hostile := dropBlock(t, pcapng.Append(nil, "test", pkts), "10.0.101.110:7778")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"exchanges", good},
		{"hostile", hostile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".pcapng")
			if err := os.WriteFile(file, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			text, stderr, code := runCLI(t, "", "inspect", "--pcap", file)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			js, _, code := runCLI(t, "", "inspect", "--json", "--pcap", file)
			if code != exitOK {
				t.Fatalf("--json: exit %d", code)
			}
			var sum []string
			for _, l := range parseCaptureJSON(t, js) {
				sum = append(sum, summary(t, l))
			}
			stderr = strings.ReplaceAll(stderr, file, tc.name+".pcapng")
			checkGolden(t, filepath.Join("testdata", "tcp", tc.name+".golden"),
				"# querylens inspect --pcap of a capture built by capture_tcp_test.go\n"+text+"# stderr\n"+stderr+"# --json, one line each\n"+strings.Join(sum, "\n")+"\n")
		})
	}
}
