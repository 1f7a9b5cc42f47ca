package demo

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/netquery"
)

func TestStartServesEveryTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := Start(ctx, Config{Servers: 30, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	// The master lists exactly the Zandronum servers.
	zc, _ := codecs.Lookup("zandronum")
	mq, err := zc.NewQuery(map[string]string{"master": "true"})
	if err != nil {
		t.Fatal(err)
	}
	// Generous timeouts: an exchange that completes returns at once, and a
	// loaded machine (a -race run beside others) may take seconds to
	// schedule a loopback reply.
	u := &netquery.UDP{Timeout: 10 * time.Second}
	if res, err := u.Exchange(ctx, "zandronum", d.Master(), mq); err != nil || !res.Done {
		t.Fatalf("master: %+v %v", res, err)
	}
	ml, err := mq.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	protocols := map[string]int{}
	for _, tg := range d.Targets() {
		protocols[tg.Protocol]++
		if tg.Protocol == "zandronum" {
			want[tg.Addr] = true
		}
	}
	if len(ml.Servers) != 30 || len(want) != 30 {
		t.Fatalf("master lists %d servers, demo has %d zandronum targets", len(ml.Servers), len(want))
	}
	for _, s := range ml.Servers {
		if !want[s] {
			t.Errorf("master lists %s, which the demo does not serve", s)
		}
	}
	for _, p := range []string{"gamespy2", "ogp", "bloodmasters"} {
		if protocols[p] == 0 {
			t.Errorf("no %s server in the demo", p)
		}
	}

	// Every target answers as its behaviour says.
	var wg sync.WaitGroup
	for _, tg := range d.Targets() {
		wg.Add(1)
		go func(tg Target) {
			defer wg.Done()
			c, err := codecs.Lookup(tg.Protocol)
			if err != nil {
				t.Error(err)
				return
			}
			q, err := c.NewQuery(tg.Options)
			if err != nil {
				t.Error(err)
				return
			}
			// Each wait ends on the event it waits for: a complete reply,
			// or for a truncated one (never complete) its first datagram.
			// Only a silent server's wait is a timeout, and no reply can
			// come late there.
			u := &netquery.UDP{Timeout: 10 * time.Second}
			xctx := ctx
			var xq codecs.Query = q
			switch tg.Behavior {
			case Silent:
				u.Timeout = 300 * time.Millisecond
			case Truncated:
				var fed context.CancelFunc
				xctx, fed = context.WithCancel(ctx)
				defer fed()
				xq = &fedQuery{Query: q, fed: fed}
			}
			// A hostile server's conversation may never complete either
			// (a GameSpy v3 reply whose last packet claims more packets
			// than came, a GameSpy v1 reply that does not decode): its
			// wait ends on the first error Feed returns, or for GameSpy v3
			// on its first datagram.
			hostile := tg.Behavior.Hostile()
			waitsForever := tg.Behavior == Truncated || hostile
			if hostile {
				var fed context.CancelFunc
				xctx, fed = context.WithCancel(ctx)
				defer fed()
				xq = &fedQuery{Query: q, fed: fed, onError: tg.Protocol != "gamespy3"}
			}
			res, err := u.Exchange(xctx, tg.Protocol, tg.Addr, xq)
			if waitsForever && xctx.Err() != nil && ctx.Err() == nil {
				err = nil // ended by its first datagram
			}
			if err != nil {
				t.Errorf("%s %s: %v", tg.Protocol, tg.Addr, err)
				return
			}
			switch tg.Behavior {
			case Silent:
				if res.Received != 0 {
					t.Errorf("silent %s %s answered", tg.Protocol, tg.Addr)
				}
				return
			case Normal, Slow, RateLimit:
				if !res.Done {
					t.Errorf("%s %s (%s): not done: %+v", tg.Protocol, tg.Addr, tg.Behavior, res)
					return
				}
				m, err := q.Result(codecs.DecodeOptions{})
				// A protocol whose rows show no name (its Row leaves
				// "name" out: Mumble's ping) reports none.
				named := true
				if d, _ := codecs.LookupDescription(tg.Protocol); d.Row != nil {
					named = slices.Contains(d.Row, "name")
				}
				if err != nil || m.Kind != codecs.KindResponse || m.Info == nil || (named && m.Info.Name == "") {
					t.Errorf("%s %s (%s): %v %+v", tg.Protocol, tg.Addr, tg.Behavior, err, m)
				} else if named && m.Info.Name != tg.Name {
					t.Errorf("%s %s: reports %q, the demo lists %q", tg.Protocol, tg.Addr, m.Info.Name, tg.Name)
				}
				if tg.Behavior == Slow && res.RTT < SlowDelay {
					t.Errorf("slow %s answered in %v", tg.Addr, res.RTT)
				}
			case Truncated:
				if res.Received == 0 {
					t.Errorf("truncated %s %s did not answer", tg.Protocol, tg.Addr)
				}
			case BadLength, BadCount, Endless:
				// Malformed: the decoder names the field and the offset.
				m, err := q.Result(codecs.DecodeOptions{})
				if e, ok := errors.AsType[*codecs.Error](err); !ok || e.Field == "" || m == nil {
					t.Errorf("hostile %s %s (%s): %v, want a *codecs.Error naming a field", tg.Protocol, tg.Addr, tg.Behavior, err)
				}
			}
		}(tg)
	}
	wg.Wait()
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{MasterAddr: "0.0.0.0:15300"},
		{MasterAddr: "192.0.2.1:15300"},
		{MasterAddr: "not an address"},
		{Servers: -1},
		{Servers: MaxServers + 1},
	} {
		if d, err := Start(context.Background(), cfg); err == nil {
			d.Close()
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}

func TestPrefixesAndClose(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	d, err := Start(ctx, Config{Servers: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Prefixes() {
		if !p.Addr().IsLoopback() || p.Bits() != p.Addr().BitLen() {
			t.Errorf("prefix %v is not one loopback address", p)
		}
	}
	master := d.Master()
	cancel() // the context ends the demo
	done := make(chan struct{})
	go func() { d.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := netip.ParseAddrPort(master); err != nil {
		t.Fatal(err)
	}
}

// fedQuery is a Query that calls fed once it has been fed a datagram, or
// with onError once Feed returned an error or said the reply is done.
type fedQuery struct {
	codecs.Query
	fed     context.CancelFunc
	onError bool
}

func (q *fedQuery) Feed(b []byte) ([][]byte, bool, error) {
	more, done, err := q.Query.Feed(b)
	if !q.onError || err != nil || done {
		q.fed()
	}
	return more, done, err
}

// TestStartPortsDistinct: no UDP server of the demo shares its port
// number with a TCP one. A query probe asks both transports, so a
// Minecraft Java stream on the port of an A2S server was once detected
// in its place. (Free ports are the kernel's choice: a demo where the
// two would meet is rare, this checks the demos it gets.)
func TestStartPortsDistinct(t *testing.T) {
	for range 3 {
		d, err := Start(context.Background(), Config{Servers: 30})
		if err != nil {
			t.Fatal(err)
		}
		udp := map[uint16]string{}
		for _, tg := range d.Targets() {
			udp[netip.MustParseAddrPort(tg.Addr).Port()] = tg.Protocol
		}
		for _, a := range d.Masters() {
			if ap, err := netip.ParseAddrPort(a); err == nil && a != d.GameSpy1Master() {
				udp[ap.Port()] = "master " + a
			}
		}
		for _, tg := range append(d.StreamTargets(), d.Fleet()...) {
			if c, _ := codecs.Lookup(tg.Protocol); c == nil || codecs.DescriptionOf(c).Transport != codecs.TCP {
				continue
			}
			if p := netip.MustParseAddrPort(tg.Addr).Port(); udp[p] != "" {
				t.Errorf("%s (TCP) %s shares its port with the %s server (UDP)", tg.Protocol, tg.Addr, udp[p])
			}
		}
		d.Close()
	}
}
