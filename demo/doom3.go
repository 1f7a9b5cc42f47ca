package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/doom3"
)

// id Tech 4 emulation: one server per game whose reply layout differs
// (Doom 3, Quake 4, Prey, ETQW, Wolfenstein), answering getInfo with the
// keys each game sends, in its own case (si_usePass, si_needPass). What a
// server reports is a pure function of its seed and the clock, like the
// other emulations. The protocol versions are the games' layouts' (major
// 1, 2, 3, ETQW 10.20: no rate, a clan tag, a bot flag); Wolfenstein's is
// made up (8.0), as no public source gives it. ETQW and Wolfenstein
// servers always have one bot in.

type d3Server struct {
	game     doom3.Game
	behavior Behavior
	seed     uint64
	name     string
}

var d3Maps = map[doom3.Game][]string{
	doom3.GameDoom3:  {"game/mp/d3dm1", "game/mp/d3dm2", "game/mp/d3ctf1"},
	doom3.GameQuake4: {"mp/q4dm1", "mp/q4dm5", "mp/q4ctf3"},
	doom3.GamePrey:   {"game/dmradar", "game/dmshuttle", "game/dmfeedingtowers"},
	doom3.GameETQW:   {"maps/valley.entities", "maps/salvage.entities", "maps/refinery.entities"},
	doom3.GameWolf:   {"maps/mp/mp_bridge.entities", "maps/mp/mp_facility.entities"},
}

// NewDoom3 returns an emulated id Tech 4 server speaking game's layout.
// It honours Silent, Truncated (cuts every reply in half) and two hostile
// behaviours of its own: Endless (the last player's name runs to the end
// of the datagram without its NUL) and BadCount (the list's end id is
// 33, past the last client); a server behaving so always has a player
// in. Slow is the caller's to apply.
func NewDoom3(seed int64, g doom3.Game, b Behavior) Handler {
	s := &d3Server{game: g, behavior: b, seed: uint64(seed)}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	switch g {
	case doom3.GameQuake4:
		s.name = "^1querylens ^7Quake 4 demo #" + n
	case doom3.GamePrey:
		s.name = "querylens Prey demo #" + n
	case doom3.GameETQW:
		s.name = "^3querylens^7 ETQW demo #" + n
	case doom3.GameWolf:
		s.name = "querylens Wolfenstein demo #" + n
	default:
		s.name = "^2querylens^7 Doom 3 demo #" + n
	}
	return s
}

// Respond answers getInfo; anything else gets no answer.
func (s *d3Server) Respond(q []byte, _ netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := doom3.DecodeRequest(q)
	if err != nil {
		return nil
	}
	r := s.state(now)
	r.Challenge = req.Challenge
	if s.game == doom3.GameETQW {
		r.TaskID, r.Challenge = req.Challenge, req.Second
	}
	b, err := doom3.AppendResponse(nil, r)
	if err != nil {
		return nil
	}
	if s.game == doom3.GameETQW { // the size word: the bytes after it
		b, _ = doom3.AppendResponse(nil, withSize(r, len(b)))
	}
	switch s.behavior {
	case Truncated:
		b = b[:len(b)/2]
	case Endless, BadCount:
		if len(r.Players) == 0 {
			break
		}
		if s.behavior == BadCount { // the end id, before the os mask and ETQW's tail
			b[len(b)-5-len(r.Trailing)-etqwTail(r)] = 33
			break
		}
		r.Players = r.Players[:len(r.Players)-1]
		head, _ := doom3.AppendResponse(nil, r)
		end := len(head) - 5 - len(r.Trailing) - etqwTail(r) // where the last player starts in b
		name := end + 3                                      // id and ping
		if s.game != doom3.GameETQW {
			name += 4 // rate
		}
		for i := name; i < len(b); i++ { // from the last player's name on, no NUL
			if b[i] == 0 {
				b[i] = '?'
			}
		}
	}
	return [][]byte{b}
}

// withSize is r with ETQW's size word set for a reply of n bytes.
func withSize(r doom3.Response, n int) doom3.Response {
	r.Size = uint32(n - len(doom3.Magic) - len(doom3.CmdInfoResponse) - 1 - 16)
	return r
}

// etqwTail is the length of ETQW's fields after the os mask.
func etqwTail(r doom3.Response) int {
	if r.Game != doom3.GameETQW {
		return 0
	}
	n := 7
	switch r.ServerType {
	case doom3.ServerRegular:
		n++
	case doom3.ServerTV:
		n += 8
	}
	return n
}

// state is the server's reply at now, without its challenge.
func (s *d3Server) state(now time.Time) doom3.Response {
	t := now.Unix()
	maps := d3Maps[s.game]
	mapName := maps[bmMod(t/(20*60)+int64(s.seed%5), int64(len(maps)))]
	max := 8
	if s.game == doom3.GameETQW {
		max = 24
	}
	r := doom3.Response{Game: s.game, OSMask: 1 << (s.seed % 3)}
	add := func(k, v string) { r.Vars = append(r.Vars, doom3.Var{Key: k, Value: v}) }
	pass := strconv.Itoa(int(s.seed % 2))
	switch s.game {
	case doom3.GameQuake4:
		r.Major, r.Minor = 2, 85
		add("si_name", s.name)
		add("si_map", mapName)
		add("si_gameType", "DM")
		add("si_maxPlayers", strconv.Itoa(max))
		add("si_needPass", pass)
		add("si_version", "Quake4 V1.4.2 linux-x86")
		add("gamename", "q4mp")
	case doom3.GamePrey:
		r.Major, r.Minor = 3, 1
		add("si_name", s.name)
		add("si_map", mapName)
		add("si_gameType", "dm")
		add("si_maxplayers", strconv.Itoa(max))
		add("si_usepass", pass)
		add("si_version", "Prey 1.4 linux-x86")
		add("gamename", "basePrey")
	case doom3.GameETQW:
		r.Major, r.Minor = 10, 20
		add("si_name", s.name)
		add("si_map", mapName)
		add("si_rules", "sdGameRulesCampaign")
		add("si_maxPlayers", strconv.Itoa(max))
		add("si_needPass", pass)
		add("si_version", "ETQW 1.4 linux-x86")
		add("gamename", "etqwmp")
		r.Ranked, r.TimeLeft, r.GameState = 1, uint32(bmMod(1200-t, 1200))*1000, 2
	case doom3.GameWolf:
		r.Major, r.Minor, r.End = 8, 0, 16
		add("si_name", s.name)
		add("si_map", mapName)
		add("si_gameType", "obj")
		add("si_maxPlayers", strconv.Itoa(max))
		add("si_usePass", pass)
		add("gamename", "wolfmp")
	default:
		r.Major, r.Minor = 1, 41
		add("si_name", s.name)
		add("si_map", mapName)
		add("si_gameType", "Deathmatch")
		add("si_maxPlayers", strconv.Itoa(max))
		add("si_usePass", pass)
		add("si_version", "DOOM 1.3.1.1304 linux-x86 Aug 15 2005 18:58:19")
		add("gamename", "baseDOOM-1")
	}
	for i := range max - 2 {
		h := bmMix(s.seed, uint64(300+i))
		period := int64(3+h%8) * 60
		bot := i == 5 && (s.game == doom3.GameETQW || s.game == doom3.GameWolf) // always in
		// A hostile server spoils its last player's record or the list's
		// end: it keeps its first player in, so that it has one to spoil.
		kept := i == 0 && (s.behavior == Endless || s.behavior == BadCount)
		if !bot && !kept && bmMod(t+int64(h>>8%3600), period) >= period*int64(40+h>>20%50)/100 {
			continue
		}
		p := doom3.Player{ID: uint8(i + 1), Ping: uint16(15 + h>>32%120), Rate: 16000 + uint32(h>>40%4)*8000,
			Name: bmNames[(int(s.seed)+i*3)%len(bmNames)]}
		if s.game == doom3.GameDoom3 || s.game == doom3.GameQuake4 {
			p.Name = "^" + strconv.Itoa(1+i%7) + p.Name
		}
		if s.game == doom3.GameQuake4 || s.game == doom3.GameETQW {
			p.Clan = [...]string{"", "[QL]", "=DoA="}[i%3]
		}
		if bot {
			p.Name, p.Ping, p.Bot = "Bot Sarge", 0, 1
		}
		r.Players = append(r.Players, p)
	}
	return r
}
