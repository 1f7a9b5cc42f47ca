package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/quake3"
)

// Quake III emulation: game servers in the dialects of the engines that
// speak the protocol, and a master that lists them over several datagrams.
// Like the Bloodmasters emulation, what a server reports is a pure function
// of its seed and the clock.

// Quake3Flavor is the engine whose dialect an emulated server speaks.
type Quake3Flavor uint8

const (
	Quake3IOQ3    Quake3Flavor = iota // ioquake3: sv_hostname, g_gametype, g_needpass; ^N colour codes
	Quake3Xonotic                     // DarkPlaces: hostname, gamename, bots; team before the name; ^xRGB colours
	Quake3CoD4                        // Call of Duty 4: pswrd, shortversion, a string g_gametype
)

var q3Maps = [...][]string{
	Quake3IOQ3:    {"q3dm17", "q3dm6", "q3tourney2", "q3ctf4"},
	Quake3Xonotic: {"stormkeep", "solarium", "dance", "implosion"},
	Quake3CoD4:    {"mp_crash", "mp_crossfire", "mp_backlot", "mp_strike"},
}

type q3Server struct {
	flavor   Quake3Flavor
	behavior Behavior
	seed     uint64
	name     string
	limit    ipWindow
}

// NewQuake3 returns an emulated Quake III-protocol server. It answers
// getstatus and getinfo (echoing a challenge), with players joining and
// leaving over time. It honours Silent, Truncated (cuts every reply in
// half: a player line or a value ends mid-way, with no terminator) and
// RateLimit (drops a client IP's queries for 10 s after answering one, as
// ioquake3's query limit does); Slow is the caller's to apply.
func NewQuake3(seed int64, f Quake3Flavor, b Behavior) Handler {
	s := &q3Server{flavor: f, behavior: b, seed: uint64(seed), limit: newIPWindow()}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	switch f {
	case Quake3Xonotic:
		s.name = "^x8AFquerylens^7 demo ^3CTF ^7#" + n
	case Quake3CoD4:
		s.name = "^2querylens ^7CoD4 demo #" + n
	default:
		s.name = "^1querylens^7 demo ^4Arena ^7#" + n
	}
	return s
}

// Respond answers getstatus and getinfo; anything else gets no answer.
func (s *q3Server) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := quake3.DecodeRequest(q)
	if err != nil || req.IsMaster() {
		return nil
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	r := s.state(now, req)
	b, err := quake3.AppendResponse(nil, r)
	if err != nil {
		return nil
	}
	if s.behavior == Truncated {
		b = b[:len(b)/2]
	}
	return [][]byte{b}
}

// state is the server's reply to req at now.
func (s *q3Server) state(now time.Time, req quake3.Request) quake3.Response {
	t := now.Unix()
	maps := q3Maps[s.flavor]
	mapName := maps[bmMod(t/(20*60)+int64(s.seed%5), int64(len(maps)))]
	const max = 12
	var players []quake3.Player
	for i := range 10 {
		h := bmMix(s.seed, uint64(200+i))
		period := int64(3+h%8) * 60
		if bmMod(t+int64(h>>8%3600), period) >= period*int64(40+h>>20%50)/100 {
			continue
		}
		p := quake3.Player{Name: "^" + strconv.Itoa(i%8) + bmNames[(int(s.seed)+i*3)%len(bmNames)],
			Score: int(bmMod(t/30+int64(h%40), 40)) - 2, Ping: 15 + int(h>>32%120)}
		if i == 9 {
			p.Name, p.Ping = "[BOT]Sarge", 0
		}
		if s.flavor == Quake3Xonotic {
			p.Team, p.HasTeam = 1+i%2, true
		}
		players = append(players, p)
	}
	r := quake3.Response{Command: quake3.CmdStatusResponse}
	add := func(k, v string) { r.Vars = append(r.Vars, quake3.Var{Key: k, Value: v}) }
	clients := strconv.Itoa(len(players))
	switch s.flavor {
	case Quake3Xonotic:
		add("gamename", "Xonotic")
		add("modname", "data")
		add("gameversion", "20000")
		add("sv_maxclients", strconv.Itoa(max))
		add("clients", clients)
		add("bots", "1")
		add("mapname", mapName)
		add("hostname", s.name)
		add("protocol", "3")
		add("qcstatus", ":ctf:0.8.6::score!!")
	case Quake3CoD4:
		add("g_gametype", "war")
		add("mapname", mapName)
		add("protocol", "6")
		add("shortversion", "1.7")
		add("sv_hostname", s.name)
		add("sv_maxclients", strconv.Itoa(max))
		add("pswrd", strconv.Itoa(int(s.seed%2)))
	default:
		add("sv_maxclients", strconv.Itoa(max))
		add("g_gametype", strconv.Itoa(int(s.seed%5)))
		add("sv_hostname", s.name)
		add("mapname", mapName)
		add("version", "ioq3 1.36 linux-x86_64")
		add("g_needpass", "0")
		add("protocol", "68")
	}
	if req.Challenge != "" {
		add("challenge", req.Challenge)
	}
	if req.Command == quake3.CmdGetInfo {
		r.Command = quake3.CmdInfoResponse
		if s.flavor != Quake3Xonotic {
			add("clients", clients)
		}
		return r
	}
	r.Players = players
	return r
}

// NewQuake3Master returns an emulated master listing servers: getservers
// lists the IPv4 ones, getserversExt all of them, perDatagram entries to a
// datagram (at least 1), the last datagram ending with the end marker.
// Queries for a game other than game are answered with an empty list, as
// dpmaster does. With noEnd it sends no marker, as the oldest masters.
func NewQuake3Master(game string, servers []netip.AddrPort, perDatagram int, noEnd bool) Handler {
	return &q3Master{game: game, servers: servers, per: max(perDatagram, 1), noEnd: noEnd}
}

type q3Master struct {
	game    string
	servers []netip.AddrPort
	per     int
	noEnd   bool
}

func (m *q3Master) Respond(q []byte, _ netip.AddrPort, _ time.Time) [][]byte {
	req, err := quake3.DecodeRequest(q)
	if err != nil || !req.IsMaster() {
		return nil
	}
	ext := req.Command == quake3.CmdGetServersExt
	cmd := quake3.CmdServers
	if ext {
		cmd = quake3.CmdServersExt
	}
	var list []quake3.Addr
	if req.Game == "" || req.Game == m.game {
		for _, s := range m.servers {
			ip := s.Addr().Unmap()
			if ip.Is6() && !ext {
				continue
			}
			a := quake3.Addr{Is6: ip.Is6(), Port: s.Port()}
			if ip.Is6() {
				a.IP = ip.As16()
			} else {
				v4 := ip.As4()
				copy(a.IP[:], v4[:])
			}
			list = append(list, a)
		}
	}
	var out [][]byte
	for i := 0; i == 0 || i < len(list); i += m.per {
		part := list[i:min(i+m.per, len(list))]
		last := i+m.per >= len(list)
		b, err := quake3.AppendResponse(nil, quake3.Response{Command: cmd, Servers: part, End: last && !m.noEnd})
		if err != nil {
			return nil
		}
		out = append(out, b)
	}
	return out
}
