package masters

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
)

// TestThroughRelay keeps the demo's Steam-like and Quake III masters'
// lists through a real relay, on loopback, as `querylens serve --demo`
// does: the relay may reach the demo's address, not the silent addresses
// the Steam-like master lists, which come out refused.
func TestThroughRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{Servers: 1, A2SServers: 3, A2SList: 2*a2s.MasterPageSize + 40})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	logger := slog.New(slog.DiscardHandler)
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey}, logger)
	defer rs.Shutdown(context.Background())
	k, err := New(Config{
		Masters: []server.MasterSpec{
			{Protocol: "a2s", Addr: d.A2SMaster(), Kept: true},
			{Protocol: "quake3", Addr: d.Quake3Master(), Kept: true},
		},
		Exchanger: rs, Allow: rs.CheckTarget, Logger: logger, States: &CacheStates{Relay: rs},
		// Real time, but a short interval: three pages in milliseconds.
		Pacer: NewLocalPacer(10*time.Millisecond, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()

	steam := listOf(t, k, "a2s", d.A2SMaster(), nil)
	answering, refused := 0, 0
	for _, s := range steam.Servers {
		ap := netip.MustParseAddrPort(s.Address)
		switch {
		case demo.SilentPrefix.Contains(ap.Addr()):
			if s.State == server.Refused {
				refused++
			}
		case s.State == 0:
			answering++
		}
	}
	fleet := len(d.Fleet())
	builtin := 0
	for _, tg := range d.Targets() {
		if tg.Protocol == "a2s" {
			builtin++
		}
	}
	if !steam.Complete || steam.Pages != 3 || len(steam.Servers) != 2*a2s.MasterPageSize+40 || answering != fleet+builtin ||
		refused != len(steam.Servers)-fleet-builtin {
		t.Errorf("Steam-like list: complete %v, %d pages, %d servers (%d answering, %d refused), error %q",
			steam.Complete, steam.Pages, len(steam.Servers), answering, refused, steam.Error)
	}

	// A Quake III server a page asked through the relay shows in the list
	// with the cached answer; the others stay unknown.
	var asked server.Ref
	for _, tg := range d.Targets() {
		if tg.Protocol == "quake3" && tg.Behavior == demo.Normal {
			asked = tg.Ref()
			break
		}
	}
	if rep := server.Probe(ctx, rs, asked, 10*time.Second); rep.State != server.Online {
		t.Fatalf("probe %s: %v %s", asked, rep.State, rep.Detail)
	}
	q3 := listOf(t, k, "quake3", d.Quake3Master(), nil)
	// The answer lands in the cache when the relay's upstream exchange
	// ends, a moment after the probe has what it needs.
	for deadline := time.Now().Add(10 * time.Second); ; {
		online := 0
		for _, s := range q3.Servers {
			if s.State == server.Online && s.Source == server.SourceCache {
				online++
			}
		}
		if online == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d servers online from the cache in the Quake III list, want 1 (%s)", online, asked)
		}
		time.Sleep(20 * time.Millisecond)
		q3 = listOf(t, k, "quake3", d.Quake3Master(), nil)
	}
	want := 0
	for _, tg := range d.Targets() {
		if tg.Protocol == "quake3" {
			want++
		}
	}
	if !q3.Complete || len(q3.Servers) != want || q3.Error != "" {
		t.Errorf("Quake III list: complete %v, %d servers (want %d), error %q", q3.Complete, len(q3.Servers), want, q3.Error)
	}
}
