package masters

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/demo"
)

func startGS1Master(t *testing.T, m *demo.GameSpy1Master) string {
	t.Helper()
	ap, err := demo.ListenGameSpy1Master("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return ap.String()
}

// TestGameSpy1Kept: a GameSpy v1 master's list is kept over TCP, the
// challenge answered, the conversation kept for the inspector.
func TestGameSpy1Kept(t *testing.T) {
	servers := []netip.AddrPort{netip.MustParseAddrPort("203.0.113.1:7778"), netip.MustParseAddrPort("203.0.113.2:7778")}
	addr := startGS1Master(t, &demo.GameSpy1Master{Servers: servers})
	k := newKeeper(t, newFakeNet(newFakeClock()), nil, gamespy1.Protocol+"="+addr+"?filter=ut")
	ml := listOf(t, k, gamespy1.Protocol, addr, nil)
	if !ml.Complete || ml.Error != "" || len(ml.Servers) != 2 || ml.Servers[0].Address != "203.0.113.1:7778" {
		t.Fatalf("list %+v", ml)
	}
	sent, received, ok := k.Datagrams(gamespy1.Protocol, addr, "ut")
	if !ok || len(sent) != 1 || !strings.Contains(string(sent[0]), `\validate\`) || len(received) != 2 || !strings.HasPrefix(string(received[0]), `\basic\\secure\`) {
		t.Errorf("kept conversation: sent %q received %q", sent, received)
	}
}

// TestGameSpy1Refused: an address the policy refuses is never connected
// to, and the list says why.
func TestGameSpy1Refused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	k := newKeeper(t, newFakeNet(newFakeClock()), func(c *Config) {
		c.Allow = func(netip.AddrPort) error { return errors.New("policy: loopback refused") }
	}, gamespy1.Protocol+"="+addr)
	ml := listOf(t, k, gamespy1.Protocol, addr, nil)
	if ml.Complete || !strings.Contains(ml.Error, "loopback refused") || len(ml.Servers) != 0 {
		t.Errorf("list %+v", ml)
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections to a refused master", n)
	}
}

// TestGameSpy1Endless: a master that never ends its list costs the
// stream timeout per attempt, and the list says it stopped.
func TestGameSpy1Endless(t *testing.T) {
	addr := startGS1Master(t, &demo.GameSpy1Master{Servers: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.1:7778")}, Behavior: demo.Endless})
	k := newKeeper(t, newFakeNet(newFakeClock()), func(c *Config) { c.StreamTimeout = 200 * time.Millisecond }, gamespy1.Protocol+"="+addr)
	start := time.Now()
	ml := listOf(t, k, gamespy1.Protocol, addr, nil)
	if ml.Complete || ml.Error == "" || len(ml.Servers) != 0 {
		t.Errorf("list %+v", ml)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}
