package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/gamespy1"
)

// GameSpy v1 emulation: game servers in the dialects of Unreal Tournament
// and Battlefield 1942 whose replies span several datagrams, sent out of
// order (the final one first), as real servers' replies arrive. Like the
// Bloodmasters emulation, what a server reports is a pure function of its
// seed and the clock.

// GameSpy1Flavor is the game whose dialect an emulated server speaks.
type GameSpy1Flavor uint8

const (
	// UT99 (patch 436): player_N, frags_N, ping_N with a space before the
	// number, team_N (255 in deathmatch); \final\ before \queryid\; a
	// status reply in three datagrams (basic and info, rules, players).
	GameSpy1UT99 GameSpy1Flavor = iota
	// Battlefield 1942: playername_N, keyhash_N, kills_N, deaths_N,
	// score_N, ping_N, team_N (1 or 2) and teamname_N; \queryid\ before
	// \final\; a status reply in two datagrams (server keys, players).
	// numplayers counts one player more than it lists, as the game does
	// while a player is joining.
	GameSpy1BF1942
)

var gs1Maps = [...][]string{
	GameSpy1UT99:   {"DM-Deck16][", "DM-Morpheus", "CTF-Coret", "DM-Phobos"},
	GameSpy1BF1942: {"wake", "el_alamein", "omaha_beach", "stalingrad"},
}

type gs1Server struct {
	flavor   GameSpy1Flavor
	behavior Behavior
	seed     uint64
	name     string
	ctf      bool // UT99: a team game
	queryNum int  // UT99 numbers its queries 1 to 100, then again
	limit    ipWindow
}

// NewGameSpy1 returns an emulated GameSpy v1 server. It answers \status\,
// \basic\, \info\, \rules\, \players\ and \echo\ (several in one query
// too), with players joining and leaving over time, each reply's
// datagrams sent final first. It honours Silent, Truncated (UT99: the
// middle datagram of a status reply is never sent; Battlefield 1942: the
// datagram of server keys, sent last, is cut in half, losing its queryid)
// and RateLimit (drops a client IP's queries for 10 s after answering
// one); Slow is the caller's to apply. It does not answer \secure\ (a
// master's challenge).
func NewGameSpy1(seed int64, f GameSpy1Flavor, b Behavior) Handler {
	s := &gs1Server{flavor: f, behavior: b, seed: uint64(seed), limit: newIPWindow()}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	switch f {
	case GameSpy1BF1942:
		s.name = "querylens BF1942 demo #" + n
	default:
		s.ctf = s.seed%2 == 1
		s.name = "querylens UT99 demo #" + n
	}
	return s
}

// Respond answers a query of known words; anything else gets no answer.
func (s *gs1Server) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := gamespy1.DecodeRequest(q)
	if err != nil {
		return nil
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	s.queryNum = s.queryNum%100 + 1
	groups := s.reply(req, now)
	if len(groups) == 0 {
		return nil
	}
	id := strconv.Itoa(s.queryNum)
	out := make([][]byte, 0, len(groups))
	for i, vars := range groups {
		r := gamespy1.Response{Vars: vars, QueryID: id + "." + strconv.Itoa(i+1), Final: i == len(groups)-1,
			FinalFirst: s.flavor == GameSpy1UT99}
		b, err := gamespy1.AppendResponse(nil, r)
		if err != nil {
			return nil
		}
		out = append(out, b)
	}
	// The final datagram first, then the others in order.
	out = append(out[len(out)-1:], out[:len(out)-1]...)
	if s.behavior == Truncated {
		switch {
		case s.flavor == GameSpy1UT99 && len(out) == 3:
			out = out[:2] // 3, 1 sent; 2 lost
		case s.flavor == GameSpy1BF1942 && len(out) == 2:
			out[1] = out[1][:len(out[1])/2]
		}
	}
	return out
}

// reply is what the server sends for req at now, grouped into datagrams.
func (s *gs1Server) reply(req gamespy1.Request, now time.Time) [][]gamespy1.Var {
	var basic, info, rules, players, echo []gamespy1.Var
	ps, count := s.players(now)
	for _, w := range req.Words {
		switch w.Name {
		case gamespy1.WordStatus:
			basic, info, rules, players = s.basic(), s.info(now, count), s.rules(), ps
		case gamespy1.WordBasic:
			basic = s.basic()
		case gamespy1.WordInfo:
			info = s.info(now, count)
		case gamespy1.WordRules:
			rules = s.rules()
		case gamespy1.WordPlayers:
			players = ps
		case gamespy1.WordEcho:
			echo = pairs("echo", w.Value)
		}
	}
	var groups [][]gamespy1.Var
	add := func(parts ...[]gamespy1.Var) {
		var g []gamespy1.Var
		for _, p := range parts {
			g = append(g, p...)
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	if s.flavor == GameSpy1BF1942 {
		add(basic, info, rules)
		add(players, echo)
	} else {
		add(basic, info)
		add(rules)
		add(players, echo)
	}
	return groups
}

// pairs makes Vars of keys and values given in turn.
func pairs(kv ...string) []gamespy1.Var {
	vs := make([]gamespy1.Var, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		vs = append(vs, gamespy1.Var{Key: kv[i], Value: kv[i+1]})
	}
	return vs
}

func (s *gs1Server) basic() []gamespy1.Var {
	if s.flavor == GameSpy1BF1942 {
		return pairs("gamename", "bfield1942", "gamever", "v1.61", "location", "1033")
	}
	return pairs("gamename", "ut", "gamever", "436", "minnetver", "432", "location", "0")
}

// mapName is the map at now: a new one every 20 minutes.
func (s *gs1Server) mapName(now time.Time) string {
	maps := gs1Maps[s.flavor]
	return maps[bmMod(now.Unix()/(20*60)+int64(s.seed%5), int64(len(maps)))]
}

// gs1Max is every emulated server's player limit.
const gs1Max = 16

func (s *gs1Server) info(now time.Time, players int) []gamespy1.Var {
	if s.flavor == GameSpy1BF1942 {
		return pairs("hostname", s.name, "hostport", "14567", "gametype", "conquest", "gamemode", "openplaying",
			"mapname", s.mapName(now), "maxplayers", strconv.Itoa(gs1Max),
			// One more than listed: a player joining is counted, not listed.
			"numplayers", strconv.Itoa(players+1), "password", "0", "version", "v1.61")
	}
	gametype := "DeathMatchPlus"
	if s.ctf {
		gametype = "CTFGame"
	}
	return pairs("hostname", s.name, "hostport", "7777", "mapname", s.mapName(now), "gametype", gametype,
		"numplayers", strconv.Itoa(players), "maxplayers", strconv.Itoa(gs1Max), "gamemode", "openplaying",
		"gamever", "436", "minnetver", "432")
}

func (s *gs1Server) rules() []gamespy1.Var {
	if s.flavor == GameSpy1BF1942 {
		return pairs("roundTime", "1200", "tickets1", "150", "tickets2", "150", "sv_punkbuster", "0")
	}
	return pairs("fraglimit", "30", "timelimit", "15", "minplayers", "0", "changelevels", "True",
		"tournament", "False", "gamestyle", "Hardcore")
}

// players is the roster at now as per-player pairs, and how many players
// they list.
func (s *gs1Server) players(now time.Time) ([]gamespy1.Var, int) {
	t := now.Unix()
	var out []gamespy1.Var
	n := 0
	for i := range 10 {
		h := bmMix(s.seed, uint64(300+i))
		period := int64(3+h%8) * 60
		if bmMod(t+int64(h>>8%3600), period) >= period*int64(40+h>>20%50)/100 {
			continue
		}
		name := bmNames[(int(s.seed)+i*3)%len(bmNames)]
		score := int(bmMod(t/30+int64(h%40), 40)) - 2
		ping := 15 + int(h>>32%120)
		k := "_" + strconv.Itoa(n)
		if s.flavor == GameSpy1BF1942 {
			out = append(out, gamespy1.Var{Key: "playername" + k, Value: name}, gamespy1.Var{Key: "keyhash" + k, Value: strconv.FormatUint(h>>40, 16)},
				gamespy1.Var{Key: "kills" + k, Value: strconv.Itoa(max(score, 0))}, gamespy1.Var{Key: "deaths" + k, Value: strconv.Itoa(int(h >> 12 % 20))},
				gamespy1.Var{Key: "score" + k, Value: strconv.Itoa(score)}, gamespy1.Var{Key: "ping" + k, Value: strconv.Itoa(ping)},
				gamespy1.Var{Key: "team" + k, Value: strconv.Itoa(1 + i%2)})
		} else {
			team := "255"
			if s.ctf {
				team = strconv.Itoa(i % 2)
			}
			out = append(out, gamespy1.Var{Key: "player" + k, Value: name}, gamespy1.Var{Key: "frags" + k, Value: strconv.Itoa(score)},
				gamespy1.Var{Key: "ping" + k, Value: " " + strconv.Itoa(ping)}, gamespy1.Var{Key: "team" + k, Value: team},
				gamespy1.Var{Key: "mesh" + k, Value: "Male Commando"}, gamespy1.Var{Key: "skin" + k, Value: "CommandoSkins.cmdo"})
		}
		n++
	}
	if s.flavor == GameSpy1BF1942 && n > 0 {
		out = append(out, gamespy1.Var{Key: "teamname_0", Value: "Allies"}, gamespy1.Var{Key: "teamname_1", Value: "Axis"})
	}
	return out, n
}
