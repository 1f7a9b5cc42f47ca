package demo

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"

	"github.com/querylens/querylens/codecs/minecraft"
)

// foldMore checks cfg.More and moves the counts of the fleets the demo's
// masters list ("a2s", "quake3") and GameSpy v1's into their own fields,
// so that More keeps only the protocols startMore serves.
func (cfg Config) foldMore() (Config, error) {
	if len(cfg.More) == 0 {
		return cfg, nil
	}
	table := demoServers()
	more := map[string]int{}
	for p, n := range cfg.More {
		if n < 0 || n > MaxServers {
			return cfg, errors.New("demo: more " + p + " servers must be between 0 and " + strconv.Itoa(MaxServers))
		}
		switch p {
		case "a2s":
			cfg.A2SServers += n
		case "quake3":
			cfg.Quake3Servers += n
		case "gamespy1":
			cfg.GameSpy1Servers += n
		default:
			if len(moreKinds(table, p)) == 0 {
				return cfg, errors.New("demo: no demo server of protocol " + strconv.Quote(p) + " to add more of (" + MoreProtocols() + ")")
			}
			if n > 0 {
				more[p] = n
			}
		}
	}
	cfg.More = more
	return cfg, nil
}

// MoreProtocols lists, comma-separated and sorted, the protocols
// Config.More takes: every protocol of which the demo has a normal server,
// over UDP or TCP (Minecraft Java's).
func MoreProtocols() string {
	var ps []string
	for _, s := range demoServers() {
		if s.b == Normal && !slices.Contains(ps, s.protocol) {
			ps = append(ps, s.protocol)
		}
	}
	if !slices.Contains(ps, minecraft.Protocol) {
		ps = append(ps, minecraft.Protocol)
	}
	slices.Sort(ps)
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}

// moreKind is one kind of server a fleet of Config.More cycles through:
// a datagram server (udp) or a stream one (tcp), with the query options it
// needs.
type moreKind struct {
	udp  func(seed int64, b Behavior) Handler
	tcp  func(seed int64, b Behavior) StreamHandler
	opts map[string]string
}

// moreKinds are the kinds of server a fleet of protocol p cycles through:
// the table's normal servers of p, or for Minecraft Java (TCP) the normal
// ones of minecraftStreams (vanilla, Forge, and 1.6, asked with its
// option); none for a protocol the demo has no normal server of.
func moreKinds(table []demoServer, p string) []moreKind {
	var kinds []moreKind
	for _, s := range table {
		if s.protocol == p && s.b == Normal {
			kinds = append(kinds, moreKind{udp: s.h, opts: s.opts})
		}
	}
	if p == minecraft.Protocol {
		for _, m := range minecraftStreams {
			if m.b == Normal {
				kind := m.kind
				kinds = append(kinds, moreKind{tcp: func(seed int64, b Behavior) StreamHandler { return NewMinecraft(seed, kind, b) }, opts: m.opts})
			}
		}
	}
	return kinds
}

// startMore starts cfg.More's fleets, in the order of the protocols'
// names: server i of a protocol is the (i mod n)th of its moreKinds (so
// every dialect the demo has takes its turn), with its query options,
// behaving as fleetBehavior(i). A stream server listens on a TCP port of
// its own, served as the demo's own TCP servers are (serveTCP).
func (d *Demo) startMore(ctx context.Context, cfg Config, table []demoServer, open func(string, Target, Handler) (netip.AddrPort, error)) error {
	var protos []string
	for p := range cfg.More {
		protos = append(protos, p)
	}
	slices.Sort(protos)
	for k, p := range protos {
		kinds := moreKinds(table, p)
		for i := range cfg.More[p] {
			s := kinds[i%len(kinds)]
			b := fleetBehavior(i)
			seed := cfg.Seed + 4_000_003 + int64(k)*100_003 + int64(i)
			t := Target{Protocol: p, Name: "querylens demo " + p + " fleet #" + strconv.Itoa(i+1), Behavior: b, Options: s.opts}
			if s.tcp != nil {
				h := s.tcp(seed, b)
				if n, ok := h.(interface{ Name() string }); ok {
					t.Name = n.Name() // what it reports, as the demo's own stream servers are named
				}
				addr, err := d.openStream(ctx, h, b)
				if err != nil {
					return err
				}
				t.Addr = addr
				d.fleet = append(d.fleet, t)
			} else if err := d.openFleet(open, fleetServer{t, s.udp(seed, b)}); err != nil {
				return err
			}
			d.unlisted = append(d.unlisted, len(d.fleet)-1)
		}
	}
	return nil
}

// Unlisted is the part of Fleet no demo master lists (the GameSpy v1 fleet
// and Config.More's), in Fleet's order: the caller's to list as
// configured servers.
func (d *Demo) Unlisted() []Target {
	out := make([]Target, 0, len(d.unlisted))
	for _, i := range d.unlisted {
		out = append(out, d.fleet[i])
	}
	return out
}
