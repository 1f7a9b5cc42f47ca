package demo

import (
	"net/netip"
	"strconv"

	"github.com/querylens/querylens/codecs/a2s"
)

// startListMasters starts the Steam-like master, listing the demo's A2S
// servers, cfg.A2SServers more of them (the fleet) and silent addresses
// up to cfg.A2SList, and the Quake III master, listing the demo's Quake
// III servers two a datagram.
func (d *Demo) startListMasters(cfg Config, open func(string, Target, Handler) (netip.AddrPort, error)) error {
	for i := range cfg.A2SServers {
		c := A2SConfig{InfoChallenge: i%2 == 0, GoldSrc: i%7 == 3}
		h := NewA2S(cfg.Seed+1_000_003+int64(i), c, fleetBehavior(i))
		t := Target{Protocol: "a2s", Name: "querylens demo A2S fleet #" + strconv.Itoa(i+1), Behavior: fleetBehavior(i)}
		ap, err := open("127.0.0.1:0", Target{}, h)
		if err != nil {
			return err
		}
		t.Addr = ap.String()
		d.fleet = append(d.fleet, t)
	}
	var answering []a2s.Addr
	var q3 []netip.AddrPort
	for _, t := range append(d.Targets(), d.fleet...) {
		ap, err := netip.ParseAddrPort(t.Addr)
		if err != nil || !ap.Addr().Is4() {
			continue
		}
		switch t.Protocol {
		case "a2s":
			answering = append(answering, a2s.Addr{IP: ap.Addr().As4(), Port: ap.Port()})
		case "quake3":
			q3 = append(q3, ap)
		}
	}
	ap, err := open("127.0.0.1:0", Target{}, NewA2SMaster(a2sList(answering, cfg.A2SList), Normal))
	if err != nil {
		return err
	}
	d.a2sMaster = ap.String()
	ap, err = open("127.0.0.1:0", Target{}, NewQuake3Master("", q3, 2, false))
	if err != nil {
		return err
	}
	d.q3Master = ap.String()
	return nil
}

// a2sList spreads the answering servers evenly through a list of total
// addresses, the others silent ones in SilentPrefix (127.0.2.1-254, ports
// from 27015 up), as a real master's list mixes live and dead servers.
func a2sList(answering []a2s.Addr, total int) []a2s.Addr {
	if total <= len(answering) {
		return answering
	}
	out := make([]a2s.Addr, 0, total)
	silent := 0
	nextSilent := func() a2s.Addr {
		ip := SilentPrefix.Addr().As4()
		ip[3] = byte(1 + silent%254)
		a := a2s.Addr{IP: ip, Port: uint16(27015 + silent/254)}
		silent++
		return a
	}
	step := float64(total) / float64(max(len(answering), 1))
	next := 0
	for i := range total {
		if next < len(answering) && float64(i) >= float64(next)*step {
			out = append(out, answering[next])
			next++
			continue
		}
		out = append(out, nextSilent())
	}
	return out
}

// fleetBehavior makes a few of the fleet misbehave, as in the wild.
func fleetBehavior(i int) Behavior {
	switch {
	case i%31 == 17:
		return Slow
	case i%37 == 19:
		return Silent
	}
	return Normal
}

// A2SMaster is the Steam-like master's address.
func (d *Demo) A2SMaster() string { return d.a2sMaster }

// Quake3Master is the Quake III master's address.
func (d *Demo) Quake3Master() string { return d.q3Master }

// Fleet lists the extra A2S servers (Config.A2SServers), which only the
// Steam-like master lists.
func (d *Demo) Fleet() []Target { return append([]Target(nil), d.fleet...) }
