package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/quake2"
	"github.com/querylens/querylens/codecs/quake3"
)

// Quake II, QuakeWorld and HexenWorld emulation (package quake2's three
// dialects), a QuakeWorld or Quake II master listing them, and FiveM's
// getinfo (package quake3). Like the other emulations, what a server
// reports is a pure function of its seed and the clock.

var q2Maps = [...][]string{
	quake2.Quake2:     {"q2dm1", "q2dm3", "q2dm8", "base64"},
	quake2.QuakeWorld: {"dm6", "e1m2", "dm4", "ztndm3"},
	quake2.Hexen2:     {"demo1", "demo2", "ravdm1", "village1"},
}

type q2Server struct {
	d        quake2.Dialect
	behavior Behavior
	seed     uint64
	name     string
}

// NewQuake2 returns an emulated server of dialect d answering status,
// with players joining and leaving over time. QuakeWorld and HexenWorld
// names carry characters of the Quake set's coloured half (the server's
// name a bracketed gold number, a player's name red letters). It honours
// Silent and Truncated (cuts every reply in half: a player line or the
// serverinfo ends mid-way, with no newline); Slow is the caller's to
// apply.
func NewQuake2(seed int64, d quake2.Dialect, b Behavior) Handler {
	s := &q2Server{d: d, behavior: b, seed: uint64(seed)}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	switch d {
	case quake2.QuakeWorld:
		s.name = "querylens \u0090" + gold(n) + "\u0091 QuakeWorld demo"
	case quake2.Hexen2:
		s.name = "querylens HexenWorld demo #" + n
	default:
		s.name = "querylens Quake II demo #" + n
	}
	return s
}

// gold spells the digits of s in the Quake set's gold digits (0x92…0x9B),
// as Latin-1 code points.
func gold(s string) string {
	b := make([]rune, 0, len(s))
	for _, c := range s {
		b = append(b, 0x92+c-'0')
	}
	return string(b)
}

// red spells s in the Quake set's coloured half (the high bit set).
func red(s string) string {
	b := make([]rune, 0, len(s))
	for _, c := range s {
		b = append(b, c|0x80)
	}
	return string(b)
}

func (s *q2Server) Respond(q []byte, _ netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := quake2.DecodeRequest(q, s.d)
	if err != nil || req.IsMaster() {
		return nil
	}
	b, err := quake2.AppendResponse(nil, s.state(now))
	if err != nil {
		return nil
	}
	if s.behavior == Truncated {
		b = b[:len(b)/2]
	}
	return [][]byte{b}
}

// state is the server's status at now.
func (s *q2Server) state(now time.Time) quake2.Response {
	t := now.Unix()
	maps := q2Maps[s.d]
	mapName := maps[bmMod(t/(20*60)+int64(s.seed%5), int64(len(maps)))]
	const max = 16
	r := quake2.Response{Dialect: s.d, Nul: s.d != quake2.Quake2}
	for i := range 8 {
		h := bmMix(s.seed, uint64(300+i))
		period := int64(3+h%8) * 60
		if i > 1 && bmMod(t+int64(h>>8%3600), period) >= period*int64(40+h>>20%50)/100 {
			continue // the first two stay, so that a status always lists players
		}
		name := bmNames[(int(s.seed)+i*3)%len(bmNames)]
		if s.d != quake2.Quake2 && i%3 == 1 {
			name = red(name)
		}
		p := quake2.Player{ID: 1 + i, Name: name, Score: int(bmMod(t/30+int64(h%40), 40)) - 2,
			Ping: 20 + int(h>>32%120), Time: int(bmMod(t/60+int64(h%90), 90))}
		if s.d != quake2.Quake2 {
			p.Skin, p.Top, p.Bottom = "base", int(h>>40%14), int(h>>44%14)
		}
		r.Players = append(r.Players, p)
	}
	add := func(k, v string) { r.Vars = append(r.Vars, quake2.Var{Key: k, Value: v}) }
	switch s.d {
	case quake2.Quake2:
		add("cheats", "0")
		add("deathmatch", "1")
		add("dmflags", "16")
		add("fraglimit", "30")
		add("gamename", "baseq2")
		add("hostname", s.name)
		add("maxclients", strconv.Itoa(max))
		add("mapname", mapName)
		add("needpass", "0")
		add("version", "3.20 x86 Jan 1 2024 Linux")
	case quake2.QuakeWorld:
		add("maxfps", "77")
		add("*version", "MVDSV 0.36")
		add("*gamedir", "qw")
		add("deathmatch", "3")
		add("hostname", s.name)
		add("map", mapName)
		add("maxclients", strconv.Itoa(max))
		add("maxspectators", "4")
		add("needpass", strconv.Itoa(int(s.seed%2)))
		add("fraglimit", "100")
	default:
		add("hostname", s.name)
		add("map", mapName)
		add("maxclients", strconv.Itoa(max))
		add("*version", "HW 0.15")
		add("deathmatch", "1")
	}
	return r
}

// NewQuake2Master returns an emulated master of dialect d (QuakeWorld or
// Quake II) listing servers in one datagram, as their masters answer.
func NewQuake2Master(d quake2.Dialect, servers []netip.AddrPort) Handler {
	return &q2Master{d: d, servers: servers}
}

type q2Master struct {
	d       quake2.Dialect
	servers []netip.AddrPort
}

func (m *q2Master) Respond(q []byte, _ netip.AddrPort, _ time.Time) [][]byte {
	req, err := quake2.DecodeRequest(q, m.d)
	if err != nil || !req.IsMaster() {
		return nil
	}
	r := quake2.Response{Dialect: m.d, Master: true, Sep: ' '}
	for _, s := range m.servers {
		if ip := s.Addr().Unmap(); ip.Is4() {
			r.Servers = append(r.Servers, quake2.Addr{IP: ip.As4(), Port: s.Port()})
		}
	}
	b, err := quake2.AppendResponse(nil, r)
	if err != nil {
		return nil
	}
	return [][]byte{b}
}

type fivemServer struct {
	seed uint64
	name string
	redm bool
}

// NewFiveM returns an emulated FiveM (or, with redm, RedM) server
// answering getinfo with the challenge echoed; its player count moves
// over time. It has no HTTP side: /players.json and /info.json, which the
// real server serves on the same port, are not emulated.
func NewFiveM(seed int64, redm bool) Handler {
	s := &fivemServer{seed: uint64(seed), redm: redm}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	s.name = "querylens FiveM demo ★ #" + n
	if redm {
		s.name = "querylens RedM demo #" + n
	}
	return s
}

func (s *fivemServer) Respond(q []byte, _ netip.AddrPort, now time.Time) [][]byte {
	req, err := quake3.DecodeRequest(q)
	if err != nil || req.Command != quake3.CmdGetInfo {
		return nil
	}
	t := now.Unix()
	mapName := "fivem-map-skater"
	if s.redm {
		mapName = "redm-map-one"
	}
	vars := []quake3.Var{{Key: "sv_maxclients", Value: "48"},
		{Key: "clients", Value: strconv.Itoa(int(bmMod(t/60+int64(s.seed%40), 40)))},
		{Key: "challenge", Value: req.Challenge}, {Key: "gamename", Value: "CitizenFX"}, {Key: "protocol", Value: "4"},
		{Key: "hostname", Value: s.name}, {Key: "gametype", Value: "Freeroam"}, {Key: "mapname", Value: mapName},
		{Key: "iv", Value: "7290"}}
	b, err := quake3.AppendFiveMResponse(nil, vars)
	if err != nil {
		return nil
	}
	return [][]byte{b}
}
