package demo

import (
	"context"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/netquery"
)

// minecraftQuery is the List Ping the native client writes to addr.
func minecraftQuery(tb testing.TB, addr string) codecs.Query {
	tb.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatal(err)
	}
	q, err := (&minecraft.Codec{}).NewQuery(map[string]string{"host": host, "port": port})
	if err != nil {
		tb.Fatal(err)
	}
	return q
}

// BenchmarkMinecraftReply is the vanilla demo server's work for one List
// Ping: the reply to the handshake and status request.
func BenchmarkMinecraftReply(b *testing.B) {
	s := NewMinecraft(7, MinecraftVanilla, Normal)
	req := minecraftQuery(b, "127.0.0.1:25565").Start()[0]
	b.ReportAllocs()
	for b.Loop() {
		if r, ok := s.Reply(req); !ok || len(r) < 500 {
			b.Fatalf("%d bytes, %v", len(r), ok)
		}
	}
}

// BenchmarkMinecraftConversation is one whole List Ping of a vanilla
// demo server on loopback, server side included: a fresh connection,
// netquery.Converse, then the reply decoded as the native client does.
// On a loaded machine ns/op is mostly waiting to be scheduled; cpu-ns/op
// is the process's CPU time (both ends, the runtime's included) per
// conversation.
func BenchmarkMinecraftConversation(b *testing.B) {
	ln, err := listenTCPLoopback(context.Background(), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var s streams
	s.lns = append(s.lns, ln)
	var wg sync.WaitGroup
	wg.Add(1)
	go serveTCP(ln, NewMinecraft(7, MinecraftVanilla, Normal), Normal, &s, &wg)
	defer func() { s.close(); wg.Wait() }()
	addr := ln.Addr().String()
	d, err := codecs.LookupDescription(minecraft.Protocol)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		q := minecraftQuery(b, addr)
		var dialer net.Dialer
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		res, err := netquery.Converse(ctx, conn, minecraft.Protocol, d.MessageLen, d.ReplyCap, q)
		conn.Close()
		cancel()
		if err != nil || !res.Done {
			b.Fatalf("done %v: %v", res.Done, err)
		}
		m, err := q.Result(codecs.DecodeOptions{})
		if err != nil || m.Info.NumPlayers == 0 {
			b.Fatalf("%v, %+v", err, m.Info)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
