package demo

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// TestMoreMinecraft: Config.More starts Minecraft Java (TCP) servers too,
// each on a loopback port of its own, unlisted, cycling through the
// demo's normal Java servers (vanilla, Forge, and 1.6 with its option);
// each answers a List Ping conversation (the 1.6 one the legacy ping) with
// the name its target gives, and Close stops them.
func TestMoreMinecraft(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 7
	d, err := Start(ctx, Config{Servers: 1, More: map[string]int{minecraft.Protocol: n}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var fleet []Target
	for _, tg := range d.Unlisted() {
		if tg.Protocol == minecraft.Protocol {
			fleet = append(fleet, tg)
		}
	}
	if len(fleet) != n || len(d.Fleet()) != n {
		t.Fatalf("%d Minecraft servers unlisted, fleet of %d; want %d", len(fleet), len(d.Fleet()), n)
	}
	if !strings.Contains(","+MoreProtocols()+",", ","+minecraft.Protocol+",") {
		t.Errorf("MoreProtocols() = %q, without %s", MoreProtocols(), minecraft.Protocol)
	}
	seen := map[string]bool{}
	legacy := 0
	c := &minecraft.Codec{}
	for i, tg := range fleet {
		if !strings.HasPrefix(tg.Addr, "127.0.0.1:") || seen[tg.Addr] {
			t.Fatalf("server %d listens on %s (seen before: %v)", i, tg.Addr, seen[tg.Addr])
		}
		seen[tg.Addr] = true
		if tg.Behavior != fleetBehavior(i) {
			t.Errorf("server %d behaves %v, want %v", i, tg.Behavior, fleetBehavior(i))
		}
		if tg.Options["legacy"] == "true" {
			legacy++
		}
		opts := map[string]string{"host": "127.0.0.1", "port": tg.Addr[strings.LastIndexByte(tg.Addr, ':')+1:]}
		for k, v := range tg.Options {
			opts[k] = v
		}
		q, err := c.NewQuery(opts)
		if err != nil {
			t.Fatal(err)
		}
		done, _ := tcpConverse(t, minecraft.Protocol, tg.Addr, q)
		m, err := q.Result(codecs.DecodeOptions{})
		if !done || err != nil || m.Info == nil || m.Info.Name != tg.Name {
			t.Fatalf("server %d (%s, options %v): done %v, %v; want the name %q", i, tg.Addr, tg.Options, done, err, tg.Name)
		}
	}
	// Three kinds in turn: servers 2 and 5 are the 1.6 ones.
	if legacy != 2 {
		t.Errorf("%d servers asked with legacy=true, want 2 of %d", legacy, n)
	}
	if _, err := Start(ctx, Config{Servers: 1, More: map[string]int{"minecraft-bedrock-typo": 1}}); err == nil {
		t.Error("More of an unknown protocol: no error")
	}
	d.Close()
	if c, err := net.DialTimeout("tcp", fleet[0].Addr, time.Second); err == nil {
		c.Close()
		t.Error("a fleet server still accepts after Close")
	}
}
