package demo

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/doom3"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/codecs/quake2"
	"github.com/querylens/querylens/server"
)

// Config sets up a demo. The zero value is usable: a master on a free port
// listing DefaultServers Zandronum servers, plus a few servers of every
// other protocol.
type Config struct {
	// MasterAddr is where the Zandronum master listens ("127.0.0.1:15300");
	// empty means a free loopback port. It must be a loopback address.
	MasterAddr string
	// Servers is how many Zandronum servers the master lists (0: DefaultServers).
	Servers int
	// Seed makes the servers' names, maps and players reproducible.
	Seed int64
	// A2SServers adds that many answering A2S servers (at most
	// MaxServers), listed by the Steam-like master beside the A2S servers
	// every demo has (Fleet, not Targets: they are reached through the
	// master's list).
	A2SServers int
	// A2SList is how many addresses the Steam-like master lists in all (at
	// most MaxA2SList): the answering A2S servers, spread among loopback
	// addresses where nothing listens (SilentPrefix). Fewer than the
	// answering servers (0 too) lists just them.
	A2SList int
	// Quake3Servers adds that many answering Quake III servers (at most
	// MaxServers; ioquake3, Xonotic and CoD4 dialects, a few slow or
	// silent), listed by the Quake III master beside the demo's own
	// (Fleet, not Targets).
	Quake3Servers int
	// GameSpy1Servers adds that many answering GameSpy v1 servers (at most
	// MaxServers; UT99 and Battlefield 1942 dialects, a few slow or
	// silent). GameSpy v1 has no UDP master: they are in Fleet, for the
	// caller to list as configured servers.
	GameSpy1Servers int
	// More adds, per protocol, that many answering servers (at most
	// MaxServers each) of any protocol the demo has a server of (Fleet,
	// not Targets): they cycle through the demo's normal servers of that
	// protocol (its dialects, with their query options), a few slow or
	// silent, and no demo master lists them (the caller lists them as
	// configured servers; FleetOnMaster says which are on a list).
	// "a2s", "quake3" and "gamespy1" add to A2SServers, Quake3Servers and
	// GameSpy1Servers, whose fleets are on the demo's masters as before.
	More map[string]int
	// Flapping, when set, adds the flapping server (NewFlappingServerAt
	// on this schedule), to try alerts on: Demo.Flapping, not in
	// Targets, and on no master's list.
	Flapping *FlapSchedule
	// FlappingAddr is where the flapping server listens (a loopback
	// HOST:PORT, so that a watches file can name it); empty: a free port.
	FlappingAddr string
}

// MaxA2SList bounds Config.A2SList: about 87 pages of a Steam master.
const MaxA2SList = 20000

// SilentPrefix holds the addresses the Steam-like master lists where no
// server listens: the demo binds only 127.0.0.1, so a query to them goes
// unanswered (a relay must be allowed this range for them to show as
// offline rather than refused).
var SilentPrefix = netip.MustParsePrefix("127.0.2.0/24")

// DefaultServers is the number of Zandronum servers a zero Config starts.
const DefaultServers = 24

// MaxServers bounds Config.Servers (each server is one loopback socket).
const MaxServers = 5000

// Target is one emulated server.
type Target struct {
	Protocol string   // registered codec name
	Addr     string   // "127.0.0.1:port"
	Name     string   // the host name it reports
	Behavior Behavior // how it misbehaves
	// Options are the query options (codecs.Codec.NewQuery) this server
	// needs, e.g. {"version": "0.04"} for an OGP v0.04 server, which does not
	// understand the deployed form; nil for the defaults.
	Options map[string]string
}

// Server is one emulated server of a protocol beyond the built-in ones,
// added to every demo started after Register.
type Server struct {
	Protocol string // a registered codec name
	Behavior Behavior
	New      func(seed int64, b Behavior) Handler
	Options  map[string]string // the query options it needs; nil for the defaults
}

var (
	regMu      sync.Mutex
	registered []Server
)

// Register adds an emulated server to every demo started after it: what a
// new protocol adds to the demo (the checklist in codecs/doc.go).
func Register(s Server) {
	regMu.Lock()
	defer regMu.Unlock()
	registered = append(registered, s)
}

// Ref is the target's identity (package server). The demo's addresses and
// options are valid, so it does not fail for a registered protocol.
func (t Target) Ref() server.Ref {
	r, err := server.New(t.Protocol, t.Addr, t.Options)
	if err != nil {
		return server.Ref{Protocol: t.Protocol, Addr: t.Addr, Options: t.Options}
	}
	return r
}

// Demo is a running set of emulated servers.
type Demo struct {
	master              string
	a2sMaster, q3Master string
	qwMaster            string
	gs1Master           string          // the GameSpy v1 master (TCP)
	gs1                 *GameSpy1Master // nil before it starts
	targets             []Target
	fleet               []Target
	unlisted            []int // indexes in fleet of the servers no demo master lists
	flapping            *Target
	conns               []*net.UDPConn
	streams             streams
	streamTargets       []Target
	// The port numbers of the demo's UDP and TCP servers, while Start
	// opens them: no free port given to one transport has a number the
	// other uses.
	udpPorts, tcpPorts map[int]bool
	wg                 sync.WaitGroup
	once               sync.Once
	stop               func() bool // unregisters the context's AfterFunc
}

// Start opens every server's socket on loopback and starts answering. The
// servers run until Close (or ctx is done).
func Start(ctx context.Context, cfg Config) (*Demo, error) {
	n := cfg.Servers
	if n == 0 {
		n = DefaultServers
	}
	if n < 0 || n > MaxServers {
		return nil, errors.New("demo: servers must be between 1 and " + strconv.Itoa(MaxServers))
	}
	if cfg.A2SServers < 0 || cfg.A2SServers > MaxServers {
		return nil, errors.New("demo: A2S servers must be between 0 and " + strconv.Itoa(MaxServers))
	}
	if cfg.Quake3Servers < 0 || cfg.Quake3Servers > MaxServers {
		return nil, errors.New("demo: Quake III servers must be between 0 and " + strconv.Itoa(MaxServers))
	}
	if cfg.GameSpy1Servers < 0 || cfg.GameSpy1Servers > MaxServers {
		return nil, errors.New("demo: GameSpy v1 servers must be between 0 and " + strconv.Itoa(MaxServers))
	}
	cfg, err := cfg.foldMore()
	if err != nil {
		return nil, err
	}
	if cfg.A2SList < 0 || cfg.A2SList > MaxA2SList {
		return nil, errors.New("demo: the A2S master's list must be between 0 and " + strconv.Itoa(MaxA2SList) + " addresses")
	}
	masterAddr := cfg.MasterAddr
	if masterAddr == "" {
		masterAddr = "127.0.0.1:0"
	}
	if ap, err := netip.ParseAddrPort(masterAddr); err != nil || !ap.Addr().IsLoopback() {
		return nil, errors.New("demo: master address " + strconv.Quote(masterAddr) + " must be a loopback HOST:PORT")
	}
	d := &Demo{udpPorts: map[int]bool{}, tcpPorts: map[int]bool{}}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	open := func(addr string, t Target, h Handler) (netip.AddrPort, error) {
		conn, err := d.listenUDP(ctx, addr)
		if err != nil {
			return netip.AddrPort{}, err
		}
		d.conns = append(d.conns, conn)
		ap := conn.LocalAddr().(*net.UDPAddr).AddrPort()
		t.Addr = ap.String()
		if t.Protocol != "" {
			d.targets = append(d.targets, t)
		}
		d.wg.Add(1)
		go serveUDP(conn, h, t.Behavior, &d.wg)
		return ap, nil
	}

	// Zandronum servers first, so the master can list them.
	var listed []netip.AddrPort
	for i := 0; i < n; i++ {
		b := zandronumBehavior(i)
		h, name := newZandronumServer(cfg.Seed, i, b)
		ap, err := open("127.0.0.1:0", Target{Protocol: "zandronum", Name: name, Behavior: b}, h)
		if err != nil {
			return nil, err
		}
		listed = append(listed, ap)
	}
	ap, err := open(masterAddr, Target{}, newZandronumMaster(listed))
	if err != nil {
		return nil, errors.New("demo: master: " + err.Error())
	}
	d.master = ap.String()

	others := demoServers()
	for i, o := range others {
		h := o.h(cfg.Seed+int64(i)*7919, o.b)
		name := reportedName(o.protocol, o.opts, h)
		if name == "" && showsName(o.protocol) {
			name = o.protocol + " demo " + strconv.Itoa(i+1)
		}
		if _, err := open("127.0.0.1:0", Target{Protocol: o.protocol, Name: name, Behavior: o.b, Options: o.opts}, h); err != nil {
			return nil, err
		}
	}
	if err := d.startStreams(ctx, cfg.Seed); err != nil {
		return nil, err
	}
	if err := d.startListMasters(cfg, open); err != nil {
		return nil, err
	}
	if err := d.startMore(ctx, cfg, others, open); err != nil {
		return nil, err
	}
	if cfg.Flapping != nil {
		h := NewFlappingServerAt(cfg.Seed+104729, *cfg.Flapping)
		t := Target{Protocol: "quake3", Name: reportedName("quake3", nil, h)}
		addr := cfg.FlappingAddr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
			return nil, errors.New("demo: flapping server address " + strconv.Quote(addr) + " must be a loopback HOST:PORT")
		}
		ap, err := open(addr, Target{}, h) // out of Targets
		if err != nil {
			return nil, errors.New("demo: flapping server: " + err.Error())
		}
		if t.Name == "" { // asked while down
			t.Name = "querylens demo Flapping"
		}
		t.Addr = ap.String()
		d.flapping = &t
	}
	// The context ends the demo too; Close unregisters this, so nothing
	// is left waiting on a context that never ends.
	d.stop = context.AfterFunc(ctx, func() { d.Close() })
	ok = true
	return d, nil
}

// reportedName asks handler h, in memory, for the host name it reports, by
// running a whole conversation of the protocol's own Query against it (an
// OGP challenge included). It returns "" when the server's answer does not
// decode (a truncating server). Nothing is sent on the network.
func reportedName(protocol string, opts map[string]string, h Handler) string {
	return reportedNameAt(protocol, opts, h, time.Now())
}

// reportedNameAt is reportedName with the server's clock at now.
func reportedNameAt(protocol string, opts map[string]string, h Handler, now time.Time) string {
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return ""
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		return ""
	}
	from := netip.MustParseAddrPort("192.0.2.1:1") // a documentation address: in memory only
	send := q.Start()
	for round := 0; round < 4 && len(send) > 0; round++ {
		var next [][]byte
		for _, d := range send {
			for _, r := range h.Respond(d, from, now) {
				more, done, _ := q.Feed(r)
				next = append(next, more...)
				if done {
					m, err := q.Result(codecs.DecodeOptions{})
					if err != nil || m.Info == nil {
						return ""
					}
					return m.Info.Name
				}
			}
		}
		send = next
	}
	return ""
}

// showsName says whether a protocol's rows show a server name (its
// description's Row has "name", or is every field): Mumble's ping carries
// none, and a demo server of it is given none either.
func showsName(protocol string) bool {
	d, err := codecs.LookupDescription(protocol)
	return err != nil || d.Row == nil || slices.Contains(d.Row, "name")
}

// zandronumBehavior spreads misbehaving servers through the list the way
// they occur in the wild: mostly fine, a few slow, rate-limiting, truncated
// or silent.
func zandronumBehavior(i int) Behavior {
	switch {
	case i%17 == 5:
		return Slow
	case i%19 == 7:
		return RateLimit
	case i%23 == 11:
		return Truncated
	case i%29 == 13:
		return Silent
	}
	return Normal
}

// Master is the Zandronum master's address.
func (d *Demo) Master() string { return d.master }

// Flapping is the flapping server (Config.Flapping), if there is one.
func (d *Demo) Flapping() (Target, bool) {
	if d.flapping == nil {
		return Target{}, false
	}
	return *d.flapping, true
}

// Targets lists every emulated game server (not the master) that speaks
// over UDP.
func (d *Demo) Targets() []Target { return append([]Target(nil), d.targets...) }

// StreamTargets lists the emulated game servers that speak over TCP
// (Minecraft Java's List Ping), which a relay or a command reaches only
// once it runs TCP conversations (codecs.Description.Transport).
func (d *Demo) StreamTargets() []Target { return append([]Target(nil), d.streamTargets...) }

// startStreams starts the TCP servers (minecraftStreams), each on its own
// loopback port.
func (d *Demo) startStreams(ctx context.Context, seed int64) error {
	for i, m := range minecraftStreams {
		h := NewMinecraft(seed+int64(i)*104723, m.kind, m.b)
		addr, err := d.openStream(ctx, h, m.b)
		if err != nil {
			return err
		}
		d.streamTargets = append(d.streamTargets, Target{Protocol: minecraft.Protocol, Addr: addr, Name: h.Name(),
			Behavior: m.b, Options: m.opts})
	}
	return nil
}

// openStream starts a TCP server answering with h, as b says, on a free
// loopback port, and returns its address.
func (d *Demo) openStream(ctx context.Context, h StreamHandler, b Behavior) (string, error) {
	ln, err := d.listenTCP(ctx)
	if err != nil {
		return "", errors.New("demo: " + err.Error())
	}
	d.streams.mu.Lock()
	d.streams.lns = append(d.streams.lns, ln)
	d.streams.mu.Unlock()
	d.wg.Add(1)
	go serveTCP(ln, h, b, &d.streams, &d.wg)
	return ln.Addr().String(), nil
}

// maxPortTries bounds how many free ports listenUDP and listenTCP take
// before one whose number the other transport does not use.
const maxPortTries = 16

// listenUDP opens a UDP socket on addr. A free port ("127.0.0.1:0") is
// one whose number no TCP server of the demo has: a probe of the address
// (which asks the TCP protocols too) finds the one server the demo lists
// there.
func (d *Demo) listenUDP(ctx context.Context, addr string) (*net.UDPConn, error) {
	var held []*net.UDPConn // taken, so that the next try gets another port
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	free := strings.HasSuffix(addr, ":0")
	for range maxPortTries {
		conn, err := listenLoopback(ctx, addr)
		if err != nil {
			return nil, err
		}
		port := conn.LocalAddr().(*net.UDPAddr).Port
		if !free || !d.tcpPorts[port] {
			d.udpPorts[port] = true
			return conn, nil
		}
		held = append(held, conn)
	}
	return nil, errors.New("no free UDP port on " + addr + " apart from the demo's TCP ones")
}

// listenTCP opens a TCP listener on a free loopback port whose number
// none of the demo's UDP servers has (see listenUDP), and holds the UDP
// port of the same number (a silent socket, closed with the demo): a
// probe of the address asks the UDP protocols too, and a UDP server of
// another process on that number (another demo's, in a parallel test)
// would answer it as if it were this server.
func (d *Demo) listenTCP(ctx context.Context) (net.Listener, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range maxPortTries {
		ln, err := listenTCPLoopback(ctx, "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if !d.udpPorts[port] {
			twin, err := listenLoopback(ctx, ln.Addr().String())
			if err == nil {
				d.tcpPorts[port] = true
				d.conns = append(d.conns, twin)
				return ln, nil
			}
		}
		held = append(held, ln)
	}
	return nil, errors.New("no free TCP port on 127.0.0.1 apart from the demo's UDP ones and those other processes use for UDP")
}

// Prefixes returns the exact /32 (or /128) of every address the demo
// serves, for a relay allowed to reach exactly the demo.
func (d *Demo) Prefixes() []netip.Prefix {
	seen := map[netip.Addr]bool{}
	var out []netip.Prefix
	add := func(s string) {
		if ap, err := netip.ParseAddrPort(s); err == nil && !seen[ap.Addr()] {
			seen[ap.Addr()] = true
			out = append(out, netip.PrefixFrom(ap.Addr(), ap.Addr().BitLen()))
		}
	}
	add(d.master)
	add(d.a2sMaster)
	add(d.q3Master)
	add(d.qwMaster)
	add(d.gs1Master)
	for _, t := range d.targets {
		add(t.Addr)
	}
	for _, t := range d.streamTargets {
		add(t.Addr)
	}
	for _, t := range d.fleet {
		add(t.Addr)
	}
	if d.flapping != nil {
		add(d.flapping.Addr)
	}
	return out
}

// Close stops every server and waits for them.
func (d *Demo) Close() error {
	d.once.Do(func() {
		if d.stop != nil {
			d.stop()
		}
		for _, c := range d.conns {
			c.Close()
		}
		d.streams.close()
		if d.gs1 != nil {
			d.gs1.Close()
		}
	})
	d.wg.Wait()
	return nil
}

// demoServer is one row of the demo's table of servers beside Zandronum's.
type demoServer struct {
	protocol string
	b        Behavior
	h        func(seed int64, b Behavior) Handler
	opts     map[string]string
}

// demoServers is the demo's table of servers beside Zandronum's, the
// registered ones (Register) last.
func demoServers() []demoServer {
	others := []demoServer{
		{"gamespy2", Normal, func(s int64, b Behavior) Handler { return NewGameSpy2(s, b) }, nil},
		{"gamespy2", Slow, func(s int64, b Behavior) Handler { return NewGameSpy2(s+1, b) }, nil},
		{"gamespy2", Truncated, func(s int64, b Behavior) Handler { return NewGameSpy2(s+2, b) }, nil},
		{"ogp", Normal, func(s int64, b Behavior) Handler { return NewOGP(s, "1.0", b) }, nil},
		{"ogp", RateLimit, func(s int64, b Behavior) Handler { return NewOGP(s+1, "1.0", b) }, nil},
		{"ogp", Normal, func(s int64, b Behavior) Handler { return NewOGP(s+2, "0.04", b) }, map[string]string{"version": "0.04"}},
		{"bloodmasters", Normal, func(s int64, b Behavior) Handler { return NewBloodmasters(s, b) }, nil},
		{"bloodmasters", Silent, func(s int64, b Behavior) Handler { return NewBloodmasters(s+1, b) }, nil},
		// One player connecting: counted, not listed.
		{"a2s", Normal, func(s int64, b Behavior) Handler {
			return NewA2S(s, A2SConfig{InfoChallenge: true, Connecting: 1}, b)
		}, nil},
		{"a2s", Normal, func(s int64, b Behavior) Handler { return NewA2S(s+1, A2SConfig{Compress: true}, b) }, nil},
		{"a2s", Normal, func(s int64, b Behavior) Handler { return NewA2S(s+2, A2SConfig{GoldSrc: true}, b) }, nil},
		// Many servers answer INFO only; asked for players and rules too,
		// the conversation would wait for replies that never come.
		{"a2s", Normal, func(s int64, b Behavior) Handler { return NewA2S(s+3, A2SConfig{OnlyInfo: true}, b) },
			map[string]string{"players": "false", "rules": "false"}},
		{"a2s", RateLimit, func(s int64, b Behavior) Handler { return NewA2S(s+4, A2SConfig{InfoChallenge: true}, b) }, nil},
		{"quake3", Normal, func(s int64, b Behavior) Handler { return NewQuake3(s, Quake3IOQ3, b) }, nil},
		{"quake3", Normal, func(s int64, b Behavior) Handler { return NewQuake3(s+1, Quake3Xonotic, b) }, nil},
		{"quake3", Slow, func(s int64, b Behavior) Handler { return NewQuake3(s+2, Quake3CoD4, b) }, nil},
		{"quake3", Truncated, func(s int64, b Behavior) Handler { return NewQuake3(s+3, Quake3IOQ3, b) }, nil},
		{"quake2", Normal, func(s int64, b Behavior) Handler { return NewQuake2(s, quake2.Quake2, b) }, nil},
		{"quakeworld", Normal, func(s int64, b Behavior) Handler { return NewQuake2(s+1, quake2.QuakeWorld, b) }, nil},
		{"quakeworld", Truncated, func(s int64, b Behavior) Handler { return NewQuake2(s+2, quake2.QuakeWorld, b) }, nil},
		{"hexen2", Normal, func(s int64, b Behavior) Handler { return NewQuake2(s+3, quake2.Hexen2, b) }, nil},
		{"fivem", Normal, func(s int64, b Behavior) Handler { return NewFiveM(s, false) }, nil},
		{"gamespy1", Normal, func(s int64, b Behavior) Handler { return NewGameSpy1(s, GameSpy1UT99, b) }, nil},
		{"gamespy1", Normal, func(s int64, b Behavior) Handler { return NewGameSpy1(s+1, GameSpy1BF1942, b) }, nil},
		{"gamespy1", Silent, func(s int64, b Behavior) Handler { return NewGameSpy1(s+2, GameSpy1UT99, b) }, nil},
		{"gamespy3", Normal, func(s int64, b Behavior) Handler { return NewGameSpy3(s, GameSpy3UT3, b) }, nil},
		{"gamespy3", Normal, func(s int64, b Behavior) Handler { return NewGameSpy3(s+1, GameSpy3Minecraft, b) },
			map[string]string{"minecraft": "true"}},
		{"gamespy3", Normal, func(s int64, b Behavior) Handler { return NewGameSpy3(s+2, GameSpy3NoChallenge, b) },
			map[string]string{"challenge": "false"}},
		{"doom3", Normal, func(s int64, b Behavior) Handler { return NewDoom3(s, doom3.GameDoom3, b) }, nil},
		{"doom3", Normal, func(s int64, b Behavior) Handler { return NewDoom3(s+1, doom3.GameQuake4, b) }, nil},
		{"doom3", Normal, func(s int64, b Behavior) Handler { return NewDoom3(s+2, doom3.GameETQW, b) }, nil},
		{"doom3", Truncated, func(s int64, b Behavior) Handler { return NewDoom3(s+3, doom3.GamePrey, b) }, nil},
		{"doom3", Normal, func(s int64, b Behavior) Handler { return NewDoom3(s+4, doom3.GameWolf, b) },
			map[string]string{"game": "wolf"}},
		{"unreal2", Normal, func(s int64, b Behavior) Handler { return NewUnreal2(s, Unreal2UT2004, b) }, nil},
		{"unreal2", Normal, func(s int64, b Behavior) Handler { return NewUnreal2(s+1, Unreal2KillingFloor, b) }, nil},
		{"unreal2", Truncated, func(s int64, b Behavior) Handler { return NewUnreal2(s+2, Unreal2UT2004, b) }, nil},
		{"mumble", Normal, func(s int64, b Behavior) Handler { return NewMumble(s, b) }, nil},
		{"mumble", Truncated, func(s int64, b Behavior) Handler { return NewMumble(s+1, b) }, nil},
		{"samp", Normal, func(s int64, b Behavior) Handler { return NewSAMP(s, SAMP037, b) }, nil},
		{"samp", Normal, func(s int64, b Behavior) Handler { return NewSAMP(s+1, SAMPOpenMP, b) }, nil},
		{"vcmp", Normal, func(s int64, b Behavior) Handler { return NewSAMP(s+2, SAMPVCMP, b) }, nil},
		// Hostile servers: their pages show "malformed" with the field and
		// offset at fault (see Hostile for what each one breaks; the
		// server browser does not ask A2S RULES, so the first shows
		// malformed on its status page only).
		{"a2s", BadLength, func(s int64, b Behavior) Handler {
			return Hostile("a2s", b, NewA2S(s+5, A2SConfig{Compress: true}, Normal))
		}, nil},
		{"a2s", BadCount, func(s int64, b Behavior) Handler { return Hostile("a2s", b, NewA2S(s+6, A2SConfig{}, Normal)) }, nil},
		{"a2s", Endless, func(s int64, b Behavior) Handler { return Hostile("a2s", b, NewA2S(s+7, A2SConfig{}, Normal)) }, nil},
		{"quake3", Endless, func(s int64, b Behavior) Handler { return Hostile("quake3", b, NewQuake3(s+4, Quake3IOQ3, Normal)) }, nil},
		{"doom3", Endless, func(s int64, b Behavior) Handler { return NewDoom3(s+5, doom3.GameDoom3, b) }, nil},
		{"doom3", BadCount, func(s int64, b Behavior) Handler { return NewDoom3(s+6, doom3.GameQuake4, b) }, nil},
		{"quake2", Endless, func(s int64, b Behavior) Handler {
			return Hostile("quake2", b, NewQuake2(s+4, quake2.Quake2, Normal))
		}, nil},
		{"gamespy1", Endless, func(s int64, b Behavior) Handler {
			return Hostile("gamespy1", b, NewGameSpy1(s+3, GameSpy1UT99, Normal))
		}, nil},
		{"unreal2", BadLength, func(s int64, b Behavior) Handler { return NewUnreal2(s+3, Unreal2UT2004, b) }, nil},
		{"samp", BadLength, func(s int64, b Behavior) Handler { return NewSAMP(s+3, SAMP037, b) }, nil},
		{"samp", BadCount, func(s int64, b Behavior) Handler { return NewSAMP(s+4, SAMPOpenMP, b) }, nil},
		{"gamespy3", BadCount, func(s int64, b Behavior) Handler {
			return Hostile("gamespy3", b, NewGameSpy3(s+3, GameSpy3UT3, Normal))
		}, nil},
		{"ase", Normal, func(s int64, b Behavior) Handler { return NewASE(s, ASEMTA, b) }, nil},
		{"ase", RateLimit, func(s int64, b Behavior) Handler { return NewASE(s+1, ASEFarCry, b) }, nil},
		// Every combination of the player flags: absent fields, not empty ones.
		{"ase", Normal, func(s int64, b Behavior) Handler { return NewASE(s+2, ASEFlags, b) }, nil},
		{"ase", BadLength, func(s int64, b Behavior) Handler { return Hostile("ase", b, NewASE(s+3, ASEMTA, Normal)) }, nil},
		{"ase", Endless, func(s int64, b Behavior) Handler { return Hostile("ase", b, NewASE(s+4, ASEFarCry, Normal)) }, nil},
		{"bedrock", Normal, func(s int64, b Behavior) Handler { return NewBedrock(s, b) }, nil},
		{"bedrock", Silent, func(s int64, b Behavior) Handler { return NewBedrock(s+1, b) }, nil},
	}
	regMu.Lock()
	for _, r := range registered {
		others = append(others, demoServer{r.Protocol, r.Behavior, r.New, r.Options})
	}
	regMu.Unlock()
	return others
}
