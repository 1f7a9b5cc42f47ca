package demo

import (
	"net/netip"
	"strconv"

	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/quake2"
)

// startListMasters starts the fleets (cfg.A2SServers, cfg.Quake3Servers
// and cfg.GameSpy1Servers), the Steam-like master, listing the demo's A2S
// servers, the A2S fleet and silent addresses up to cfg.A2SList, and the
// Quake III master, listing the demo's Quake III servers and the Quake III
// fleet: two a datagram without a fleet (so that a client must gather
// several), as many as dpmaster puts in one with.
func (d *Demo) startListMasters(cfg Config, open func(string, Target, Handler) (netip.AddrPort, error)) error {
	for i := range cfg.A2SServers {
		c := A2SConfig{InfoChallenge: i%2 == 0, GoldSrc: i%7 == 3}
		h := NewA2S(cfg.Seed+1_000_003+int64(i), c, fleetBehavior(i))
		t := Target{Protocol: "a2s", Name: "querylens demo A2S fleet #" + strconv.Itoa(i+1), Behavior: fleetBehavior(i)}
		ap, err := open("127.0.0.1:0", Target{Behavior: t.Behavior}, h) // out of Targets; a slow one answers late
		if err != nil {
			return err
		}
		t.Addr = ap.String()
		d.fleet = append(d.fleet, t)
	}
	for i := range cfg.Quake3Servers {
		if err := d.openFleet(open, quake3Fleet(cfg.Seed, i)); err != nil {
			return err
		}
	}
	for i := range cfg.GameSpy1Servers {
		if err := d.openFleet(open, gameSpy1Fleet(cfg.Seed, i)); err != nil {
			return err
		}
		d.unlisted = append(d.unlisted, len(d.fleet)-1)
	}
	var answering []a2s.Addr
	var q3, qw []netip.AddrPort
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
		case "quakeworld":
			qw = append(qw, ap)
		}
	}
	ap, err := open("127.0.0.1:0", Target{}, NewA2SMaster(a2sList(answering, cfg.A2SList), Normal))
	if err != nil {
		return err
	}
	d.a2sMaster = ap.String()
	per := 2
	if cfg.Quake3Servers > 0 {
		per = q3FleetPerDatagram
	}
	ap, err = open("127.0.0.1:0", Target{}, NewQuake3Master("", q3, per, false))
	if err != nil {
		return err
	}
	d.q3Master = ap.String()
	ap, err = open("127.0.0.1:0", Target{}, NewQuake2Master(quake2.QuakeWorld, qw))
	if err != nil {
		return err
	}
	d.qwMaster = ap.String()
	return d.startGameSpy1Master()
}

// q3FleetPerDatagram is how many servers the Quake III master lists a
// datagram with a fleet: dpmaster fills datagrams of up to 1,400 bytes,
// 7 bytes an IPv4 entry, after the 22-byte getserversResponse header and
// before the 7-byte end marker.
const q3FleetPerDatagram = (1400 - 22 - 7) / 7

// fleetServer is one server of a fleet before its socket is open.
type fleetServer struct {
	t Target // Addr not yet set
	h Handler
}

// quake3Fleet is the Quake III fleet's server i: mostly ioquake3, every
// fourth Xonotic and every seventh CoD4, a few slow or silent.
func quake3Fleet(seed int64, i int) fleetServer {
	f := Quake3IOQ3
	switch {
	case i%7 == 3:
		f = Quake3CoD4
	case i%4 == 1:
		f = Quake3Xonotic
	}
	b := fleetBehavior(i)
	h := NewQuake3(seed+2_000_003+int64(i), f, b)
	return fleetServer{Target{Protocol: "quake3", Name: "querylens demo Quake III fleet #" + strconv.Itoa(i+1), Behavior: b}, h}
}

// gameSpy1Fleet is the GameSpy v1 fleet's server i: UT99 and Battlefield
// 1942 in turn, a few slow or silent.
func gameSpy1Fleet(seed int64, i int) fleetServer {
	f := GameSpy1UT99
	if i%2 == 1 {
		f = GameSpy1BF1942
	}
	b := fleetBehavior(i)
	h := NewGameSpy1(seed+3_000_003+int64(i), f, b)
	return fleetServer{Target{Protocol: "gamespy1", Name: "querylens demo GameSpy v1 fleet #" + strconv.Itoa(i+1), Behavior: b}, h}
}

// openFleet opens s's socket (a Slow one answers after SlowDelay, as the
// demo's own slow servers do) and adds it to the fleet.
func (d *Demo) openFleet(open func(string, Target, Handler) (netip.AddrPort, error), s fleetServer) error {
	// A Target without a protocol: open serves it but leaves it out of
	// Targets.
	ap, err := open("127.0.0.1:0", Target{Behavior: s.t.Behavior}, s.h)
	if err != nil {
		return err
	}
	s.t.Addr = ap.String()
	d.fleet = append(d.fleet, s.t)
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

// QuakeWorldMaster is the QuakeWorld master's address: it lists the
// demo's QuakeWorld servers.
func (d *Demo) QuakeWorldMaster() string { return d.qwMaster }

// Masters are the addresses of every master of the demo.
func (d *Demo) Masters() []string {
	return []string{d.Master(), d.A2SMaster(), d.Quake3Master(), d.QuakeWorldMaster(), d.GameSpy1Master()}
}

// Fleet lists the extra servers (Config.A2SServers, Quake3Servers,
// GameSpy1Servers and More's, in that order): the A2S and Quake III ones
// only their masters list; the others (Unlisted) are the caller's to list.
func (d *Demo) Fleet() []Target { return append([]Target(nil), d.fleet...) }

// MasterSpecs are the demo's masters as --master spells them
// (server.ParseMasterSpec), each with a label saying it is the demo's.
func (d *Demo) MasterSpecs() []string {
	return []string{"zandronum=" + d.Master() + "?label=demo", "a2s=" + d.A2SMaster() + "?label=demo+Steam",
		"quake3=" + d.Quake3Master() + "?label=demo+Quake+III", "quakeworld=" + d.QuakeWorldMaster() + "?label=demo+QuakeWorld", "gamespy1=" + d.GameSpy1Master() + "?filter=ut&label=demo+GameSpy+v1"}
}
