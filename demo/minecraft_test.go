package demo

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// tcpConverse runs q over a TCP connection to addr as the relay does: its
// Start written once, the stream cut by the protocol's MessageLen into the
// messages Feed takes, until Feed says done, the server closes or 5 s
// pass. It returns whether Feed said done and the stream's bytes.
func tcpConverse(t *testing.T, protocol, addr string, q codecs.Query) (bool, []byte) {
	t.Helper()
	d, err := codecs.LookupDescription(protocol)
	if err != nil || d.Transport != codecs.TCP || d.MessageLen == nil {
		t.Fatalf("%s: not a stream protocol (%v)", protocol, err)
	}
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	for _, b := range q.Start() {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	var all, buf []byte
	chunk := make([]byte, 4096)
	for {
		for n := d.MessageLen(buf); n > 0; n = d.MessageLen(buf) {
			_, done, _ := q.Feed(buf[:n])
			buf = buf[n:]
			if done {
				return true, all
			}
		}
		n, err := c.Read(chunk)
		all = append(all, chunk[:n]...)
		buf = append(buf, chunk[:n]...)
		if err != nil || len(all) > d.ReplyCap.Bytes {
			return false, all
		}
	}
}

// TestMinecraftDemo: the demo starts the Java servers (TCP) and the
// Bedrock ones (UDP) on loopback; each Java server's conversation ends as
// its kind and behaviour say, the hostile ones with the field at fault.
func TestMinecraftDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := Start(ctx, Config{Servers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tgs := d.StreamTargets()
	if len(tgs) != len(minecraftStreams) {
		t.Fatalf("%d stream targets, want %d", len(tgs), len(minecraftStreams))
	}
	c := &minecraft.Codec{}
	for _, tg := range tgs {
		t.Run(tg.Name+" "+tg.Behavior.String(), func(t *testing.T) {
			if !strings.HasPrefix(tg.Addr, "127.0.0.1:") {
				t.Fatalf("listens on %s", tg.Addr)
			}
			opts := map[string]string{"host": "localhost", "port": tg.Addr[strings.LastIndexByte(tg.Addr, ':')+1:]}
			for k, v := range tg.Options {
				opts[k] = v
			}
			q, err := c.NewQuery(opts)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			done, _ := tcpConverse(t, minecraft.Protocol, tg.Addr, q)
			m, err := q.Result(codecs.DecodeOptions{})
			switch tg.Behavior {
			case Normal, Trickle:
				if !done || err != nil || m.Info.Name != tg.Name || m.Info.MaxPlayers == 0 {
					t.Fatalf("done %v, %+v, %v; want %q", done, m.Info, err, tg.Name)
				}
				if tg.Behavior == Trickle && time.Since(start) < 100*time.Millisecond {
					t.Errorf("a trickle took only %v", time.Since(start))
				}
			case BadImage:
				if err != nil || len(m.Warnings) == 0 || m.Warnings[0] != minecraft.WarnFavicon {
					t.Fatalf("%v, warnings %v", err, m.Warnings)
				}
			case BadVarInt:
				if !done || !errors.Is(err, codecs.ErrTooLong) || time.Since(start) > 2*time.Second {
					t.Fatalf("done %v after %v: %v", done, time.Since(start), err)
				}
			case BadJSON:
				if !done || !errors.Is(err, codecs.ErrBadValue) {
					t.Fatalf("done %v: %v", done, err)
				}
			case BadLength:
				if done || !errors.Is(err, codecs.ErrIncomplete) {
					t.Fatalf("done %v: %v", done, err)
				}
			default:
				t.Fatalf("behaviour %v not checked", tg.Behavior)
			}
		})
	}
	// The legacy server closes on a List Ping, as a 1.6 server does.
	for _, tg := range tgs {
		if tg.Options["legacy"] == "true" {
			q, _ := c.NewQuery(nil)
			if done, got := tcpConverse(t, minecraft.Protocol, tg.Addr, q); done || len(got) > 0 {
				t.Errorf("the 1.6 server answered a List Ping: %x", got)
			}
		}
	}
	var bedrock int
	for _, tg := range d.Targets() {
		if tg.Protocol == minecraft.BedrockProtocol && tg.Behavior == Normal {
			bedrock++
			if !strings.Contains(tg.Name, "Bedrock demo") {
				t.Errorf("Bedrock server named %q", tg.Name)
			}
		}
	}
	if bedrock == 0 {
		t.Error("no Bedrock server")
	}
}
