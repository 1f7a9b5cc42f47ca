package demo

import (
	"errors"
	"net/netip"
	"slices"
	"strconv"
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
			if !slices.ContainsFunc(table, func(s demoServer) bool { return s.protocol == p && s.b == Normal }) {
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
// Config.More takes: every protocol of which the demo has a normal server.
func MoreProtocols() string {
	var ps []string
	for _, s := range demoServers() {
		if s.b == Normal && !slices.Contains(ps, s.protocol) {
			ps = append(ps, s.protocol)
		}
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

// startMore starts cfg.More's fleets, in the order of the protocols'
// names: server i of a protocol is the table's (i mod n)th normal server
// of it (so every dialect the demo has takes its turn), with its query
// options, behaving as fleetBehavior(i).
func (d *Demo) startMore(cfg Config, table []demoServer, open func(string, Target, Handler) (netip.AddrPort, error)) error {
	var protos []string
	for p := range cfg.More {
		protos = append(protos, p)
	}
	slices.Sort(protos)
	for k, p := range protos {
		var kinds []demoServer
		for _, s := range table {
			if s.protocol == p && s.b == Normal {
				kinds = append(kinds, s)
			}
		}
		for i := range cfg.More[p] {
			s := kinds[i%len(kinds)]
			b := fleetBehavior(i)
			h := s.h(cfg.Seed+4_000_003+int64(k)*100_003+int64(i), b)
			t := Target{Protocol: p, Name: "querylens demo " + p + " fleet #" + strconv.Itoa(i+1), Behavior: b, Options: s.opts}
			if err := d.openFleet(open, fleetServer{t, h}); err != nil {
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
