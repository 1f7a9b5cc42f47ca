package demo

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/quake3"
	"github.com/querylens/querylens/netquery"
)

func TestA2SList(t *testing.T) {
	answering := []a2s.Addr{{IP: [4]byte{127, 0, 0, 1}, Port: 1}, {IP: [4]byte{127, 0, 0, 1}, Port: 2}, {IP: [4]byte{127, 0, 0, 1}, Port: 3}}
	for _, tc := range []struct{ total, want int }{{0, 3}, {2, 3}, {3, 3}, {10, 10}, {MaxA2SList, MaxA2SList}} {
		list := a2sList(answering, tc.total)
		if len(list) != tc.want {
			t.Errorf("total %d: %d addresses, want %d", tc.total, len(list), tc.want)
			continue
		}
		seen := map[a2s.Addr]bool{}
		found := 0
		for _, a := range list {
			if seen[a] {
				t.Fatalf("total %d: %v listed twice", tc.total, a)
			}
			seen[a] = true
			ap := netip.AddrPortFrom(netip.AddrFrom4(a.IP), a.Port)
			switch {
			case a.IP == [4]byte{127, 0, 0, 1}:
				found++
			case !SilentPrefix.Contains(ap.Addr()) || a.Port == 0 || a.IP[3] == 0 || a.IP[3] == 255:
				t.Fatalf("total %d: %v is neither a demo server nor a silent address", tc.total, ap)
			}
		}
		if found != len(answering) {
			t.Errorf("total %d: %d answering servers listed, want %d", tc.total, found, len(answering))
		}
	}
}

// TestListMasters asks the demo's Steam-like and Quake III masters over
// loopback for their lists.
func TestListMasters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := Start(ctx, Config{Servers: 1, A2SServers: 4, A2SList: 300})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Fleet()) != 4 {
		t.Fatalf("%d fleet servers, want 4", len(d.Fleet()))
	}
	pages := ask(t, d.A2SMaster(), []byte("1\xff0.0.0.0:0\x00\x00"))
	p, err := a2s.DecodeMasterReply(pages[0])
	if err != nil || len(p.Servers) != a2s.MasterPageSize || p.End {
		t.Fatalf("first page: %d servers, end %v, %v", len(p.Servers), p.End, err)
	}
	q3, err := quake3.AppendRequest(nil, quake3.Request{Command: quake3.CmdGetServers, Version: 68, Filters: []string{"empty", "full"}})
	if err != nil {
		t.Fatal(err)
	}
	if replies := ask(t, d.Quake3Master(), q3); len(replies) == 0 {
		t.Fatal("the Quake III master did not answer")
	}
	for _, bad := range []Config{{A2SServers: -1}, {A2SServers: MaxServers + 1}, {A2SList: MaxA2SList + 1},
		{Quake3Servers: -1}, {Quake3Servers: MaxServers + 1}, {GameSpy1Servers: -1}, {GameSpy1Servers: MaxServers + 1}} {
		if d, err := Start(ctx, bad); err == nil {
			d.Close()
			t.Errorf("Start(%+v) accepted", bad)
		}
	}
}

// TestFleets starts small Quake III and GameSpy v1 fleets: the Quake III
// master lists the Quake III fleet beside the demo's own servers, and
// every fleet server answers its protocol's default query as its
// behaviour says.
func TestFleets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const q3n, gs1n = 40, 40
	d, err := Start(ctx, Config{Servers: 1, Quake3Servers: q3n, GameSpy1Servers: gs1n})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	count := map[string]int{}
	for _, tg := range d.Fleet() {
		count[tg.Protocol]++
	}
	if count["quake3"] != q3n || count["gamespy1"] != gs1n {
		t.Fatalf("fleet %v, want %d quake3 and %d gamespy1", count, q3n, gs1n)
	}

	// The Quake III master's list: the fleet and the demo's own.
	c, err := codecs.Lookup("quake3")
	if err != nil {
		t.Fatal(err)
	}
	mq, err := c.NewQuery(map[string]string{"master": "true"})
	if err != nil {
		t.Fatal(err)
	}
	u := &netquery.UDP{Timeout: 10 * time.Second}
	if res, err := u.Exchange(ctx, "quake3", d.Quake3Master(), mq); err != nil || !res.Done {
		t.Fatalf("master: %+v %v", res, err)
	}
	ml, err := mq.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range ml.Servers {
		listed[s] = true
	}
	own := 0
	for _, tg := range d.Targets() {
		if tg.Protocol == "quake3" {
			own++
		}
	}
	if len(ml.Servers) != q3n+own {
		t.Errorf("the Quake III master lists %d servers, want %d fleet + %d own", len(ml.Servers), q3n, own)
	}

	var wg sync.WaitGroup
	for _, tg := range d.Fleet() {
		if tg.Protocol == "quake3" && !listed[tg.Addr] {
			t.Errorf("the Quake III master does not list fleet server %s", tg.Addr)
		}
		wg.Add(1)
		go func(tg Target) {
			defer wg.Done()
			c, err := codecs.Lookup(tg.Protocol)
			if err != nil {
				t.Error(err)
				return
			}
			// A lost datagram on a loaded machine: ask again.
			for try := 0; ; try++ {
				q, err := c.NewQuery(nil)
				if err != nil {
					t.Error(err)
					return
				}
				u := &netquery.UDP{Timeout: 3 * time.Second}
				res, err := u.Exchange(ctx, tg.Protocol, tg.Addr, q)
				if tg.Behavior == Silent {
					if err == nil && res.Done {
						t.Errorf("%s %s (silent) answered", tg.Protocol, tg.Addr)
					}
					return
				}
				if (err != nil || !res.Done) && try < 2 {
					continue
				}
				if err != nil || !res.Done {
					t.Errorf("%s %s (%s): %+v %v", tg.Protocol, tg.Addr, tg.Behavior, res, err)
					return
				}
				m, err := q.Result(codecs.DecodeOptions{})
				if err != nil || m.Info == nil || m.Info.Name == "" {
					t.Errorf("%s %s: %+v %v", tg.Protocol, tg.Addr, m, err)
				}
				return
			}
		}(tg)
	}
	wg.Wait()
}

// ask sends q to addr on loopback and returns the datagrams that came
// within a second of the last one (retrying the send twice when none did).
func ask(t *testing.T, addr string, q []byte) [][]byte {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	to := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr))
	var out [][]byte
	buf := make([]byte, 65535)
	for try := 0; try < 3 && len(out) == 0; try++ {
		if _, err := conn.WriteToUDP(q, to); err != nil {
			t.Fatal(err)
		}
		for {
			conn.SetReadDeadline(time.Now().Add(time.Second))
			n, _, err := conn.ReadFromUDP(buf)
			if err != nil {
				break
			}
			out = append(out, append([]byte(nil), buf[:n]...))
		}
	}
	return out
}

// TestMoreFleet: Config.More starts that many servers of a protocol with
// no demo master, cycling through the demo's normal servers of it, all
// unlisted (the caller's to list), and refuses a protocol the demo has no
// server of.
func TestMoreFleet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := Start(ctx, Config{Servers: 1, More: map[string]int{"samp": 3, "gamespy1": 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	counts := map[string]int{}
	for _, tg := range d.Unlisted() {
		counts[tg.Protocol]++
	}
	if counts["samp"] != 3 || counts["gamespy1"] != 2 || len(d.Fleet()) != 5 {
		t.Fatalf("unlisted %v, fleet %d: want 3 samp and 2 gamespy1 of 5", counts, len(d.Fleet()))
	}
	if _, err := Start(ctx, Config{Servers: 1, More: map[string]int{"zandronum": 1}}); err == nil {
		t.Fatal("More of a protocol without a demo server table row: no error")
	}
}
