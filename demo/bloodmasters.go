package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/bloodmasters"
)

// Bloodmasters emulation: one game server whose roster is a pure function of
// the seed and the clock, so that a test can ask "who is playing at t?"
// and get the same answer every time.
const (
	bmMapSeconds  = 15 * 60 // the map changes with the time limit
	bmPingSeconds = 5       // pings move every few seconds
)

var bmNames = [...]string{
	"Gumby", "Rocket", "Lurker", "Vex", "Mara", "Doc", "Kestrel", "Nox", "Brick", "Juniper",
	"Slate", "Widget", "Ember", "Quill", "Razor", "Tundra", "Moth", "Pike", "Sable", "Orbit",
}

var bmMaps = [...][]string{
	bloodmasters.DM:            {"dm_darktower", "dm_bloodbath", "dm_crypt", "dm_foundry"},
	bloodmasters.TDM:           {"dm_darktower", "dm_foundry", "dm_canals"},
	bloodmasters.CTF:           {"ctf_keep", "ctf_canyon", "ctf_twin"},
	bloodmasters.Scavenger:     {"sc_mine", "sc_docks"},
	bloodmasters.TeamScavenger: {"sc_mine", "sc_harbor"},
}

type bmPlayer struct {
	name      string
	period    int64 // seconds of one join/leave cycle
	stay      int64 // seconds of the cycle the player is connected
	phase     int64
	ping      int16 // typical ping
	team      bloodmasters.Team
	spectator bool
}

type bmServer struct {
	behavior Behavior
	seed     uint64
	resp     bloodmasters.Response // the fixed part of every reply
	maps     []string
	roster   []bmPlayer
	limit    ipWindow // RateLimit: last answer per client IP
}

// NewBloodmasters returns an emulated Bloodmasters server, built with the
// bloodmasters encoder. The seed picks its game type, limits and roster;
// players join and leave over time (each on its own cycle of minutes), and
// one spectator is always connected. It honours Silent (never answers),
// Truncated (cuts every reply in half) and RateLimit (drops a client IP's
// queries for 10 s after answering one); Slow is the caller's to apply.
func NewBloodmasters(seed int64, b Behavior) Handler {
	s := &bmServer{behavior: b, seed: uint64(seed), limit: newIPWindow()}
	gt := bloodmasters.GameType(bmMix(s.seed, 1) % 5)
	s.maps = bmMaps[gt]
	s.resp = bloodmasters.Response{
		Title:            "querylens demo " + gt.String() + " #" + strconv.Itoa(int(bmMix(s.seed, 2)%90+10)),
		Locked:           bmMix(s.seed, 3)%4 == 0,
		Website:          "http://bloodmasters.example/",
		MaxClients:       12,
		MaxPlayers:       10,
		GameType:         gt,
		Protocol:         bloodmasters.ProtocolVersion,
		ScoreLimit:       int16(10 + bmMix(s.seed, 4)%4*10),
		TimeLimit:        bmMapSeconds / 60,
		JoinSmallestTeam: gt.Teams(),
		HasBuild:         true,
		Build:            "Unix Dedicated version 1.5.0.0",
	}
	// Ten regulars from the name pool, in a seed-chosen order and on
	// seed-chosen cycles, plus a spectator who never leaves.
	start := int(bmMix(s.seed, 5) % uint64(len(bmNames)))
	for i := range 10 {
		h := bmMix(s.seed, uint64(100+i))
		p := bmPlayer{
			name:   bmNames[(start+i*7)%len(bmNames)],
			period: int64(4+h%9) * 60,
			phase:  int64(h >> 8 % 3600),
			ping:   int16(20 + h>>20%180),
		}
		p.stay = p.period * int64(35+h>>32%50) / 100
		if gt.Teams() {
			p.team = bloodmasters.Team(1 + i%2)
		}
		s.roster = append(s.roster, p)
	}
	s.roster = append(s.roster, bmPlayer{name: "Watcher", period: 1, stay: 1, ping: 60, spectator: true})
	return s
}

// Respond answers a well-formed 7-byte query; anything else gets no answer,
// as a short message gets none from the game.
func (s *bmServer) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := bloodmasters.DecodeRequest(q)
	if err != nil {
		return nil
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	r := s.state(now)
	r.Token = req.Token
	b, err := bloodmasters.AppendResponse(nil, r)
	if err != nil {
		return nil
	}
	if s.behavior == Truncated {
		b = b[:len(b)/2]
	}
	return [][]byte{b}
}

// state is the server as it is at now.
func (s *bmServer) state(now time.Time) bloodmasters.Response {
	t := now.Unix()
	r := s.resp
	r.Map = s.maps[bmMod(t/bmMapSeconds+int64(s.seed%7), int64(len(s.maps)))]
	r.Clients = make([]bloodmasters.Client, 0, len(s.roster))
	for i, p := range s.roster {
		if bmMod(t+p.phase, p.period) >= p.stay {
			continue
		}
		if !p.spectator && int(r.NumPlayers) >= int(r.MaxPlayers) || len(r.Clients) >= int(r.MaxClients) {
			continue
		}
		jitter := int16(bmMix(s.seed^uint64(i), uint64(bmMod(t, 1<<40)/bmPingSeconds)) % 31)
		r.Clients = append(r.Clients, bloodmasters.Client{Name: p.name, Team: p.team, Spectator: p.spectator, Ping: p.ping + jitter - 15})
		if !p.spectator {
			r.NumPlayers++
		}
	}
	r.NumClients = uint8(len(r.Clients))
	return r
}

// bmMix is splitmix64 over a seed and a salt: cheap, deterministic and well
// spread, which is all the emulation needs.
func bmMix(seed, salt uint64) uint64 {
	z := seed + salt*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// bmMod is a modulo that stays non-negative for times before 1970.
func bmMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}
