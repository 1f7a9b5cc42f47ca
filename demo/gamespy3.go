package demo

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/gamespy3"
)

// GameSpy v3/v4 emulation: servers speaking the GameSpy v3/v4 query
// protocol or Minecraft's Query, built with the gamespy3 encoder. What
// each says is a pure function of the seed, the clock and the client's
// address.

// GameSpy3Flavor picks which kind of server NewGameSpy3 emulates.
type GameSpy3Flavor uint8

const (
	// GameSpy3UT3 is an Unreal Tournament 3 / Crysis-like GameSpy v4
	// server: a challenge first, then a full reply split over three
	// packets sent out of order (2, 0, 1), the player names continued from
	// packet 0 into packet 1, the teams in packet 2.
	GameSpy3UT3 GameSpy3Flavor = iota
	// GameSpy3Minecraft is a Minecraft server with enable-query: a
	// challenge first, then Minecraft's one-packet full stat. Like
	// vanilla Minecraft it reads a stat query by its length, not its
	// payload: 15 bytes (the challenge and any 4 bytes: Minecraft's
	// 00 00 00 00, GameSpy's FF FF FF 01) ask for the full stat. The basic
	// stat (the challenge and nothing after) is not answered: the codec
	// does not read its reply. The session id comes back masked by
	// 0x0F0F0F0F.
	GameSpy3Minecraft
	// GameSpy3NoChallenge is a GameSpy v3 server in Battlefield 2's form:
	// no challenge (a challenge request gets "0", Battlefield 2's way of
	// saying the stat query goes without one; a stat query with a
	// challenge goes unanswered), the full reply in one packet with the
	// split header (packet 0, the last), as Battlefield 2 sends it.
	GameSpy3NoChallenge
)

const (
	gs3Epoch       = 30      // seconds a challenge lasts (the previous one is still accepted)
	gs3MapSeconds  = 20 * 60 // the map changes this often
	gs3MaxPlayers  = 16
	gs3ScoreMinute = 3 // points a player makes a minute, give or take
)

var gs3Names = [...]string{
	"Reaper", "Malcolm", "Othello", "Jester", "Lauren", "Skrilax", "Damian", "Kragoth",
	"Raven", "Bishop", "Matrix", "Picard", "Gaargod", "Ariel", "Blackjack", "Harlin",
}

var mcNames = [...]string{"Alex", "Steve", "notch_fan", "Creeper42", "DiamondDigger", "Ender_Pearl", "Redstoner", "xX_Miner_Xx"}

var gs3Maps = [...][]string{
	GameSpy3UT3:         {"DM-Deck", "DM-Sentinel", "DM-Rising_Sun", "DM-HeatRay"},
	GameSpy3Minecraft:   {"world"},
	GameSpy3NoChallenge: {"Mesa", "Shore", "Beach", "Plantation"},
}

type gs3Server struct {
	flavor   GameSpy3Flavor
	behavior Behavior
	seed     uint64
	secret   uint64
	host     string
	roster   []bmPlayer // names, cycles and pings; team 1 or 2 (UT3)
	limit    ipWindow
}

// NewGameSpy3 returns an emulated GameSpy v3/v4 or Minecraft Query
// server of the given flavor. Players join and leave over time, each on
// its own cycle of minutes, and their scores grow with the time they
// have been in. It honours Silent (never answers), Truncated (cuts every
// stat packet in half; challenge replies stay whole, so a client gets
// that far) and RateLimit (drops a client IP's stat queries for 10 s
// after answering one; challenges are still answered). Slow is the
// caller's to apply.
//
// A challenge depends on the client's IP address only, not its port,
// and lasts gs3Epoch seconds (the previous one is still accepted); a
// stat query with a wrong or missing challenge gets no answer, as real
// servers give none.
func NewGameSpy3(seed int64, flavor GameSpy3Flavor, b Behavior) Handler {
	if flavor > GameSpy3NoChallenge {
		flavor = GameSpy3UT3
	}
	s := &gs3Server{flavor: flavor, behavior: b, seed: uint64(seed), limit: newIPWindow()}
	s.secret = bmMix(s.seed, 7001)
	n := strconv.Itoa(int(bmMix(s.seed, 7002)%90 + 10))
	names := gs3Names[:]
	switch flavor {
	case GameSpy3UT3:
		s.host = "querylens demo UT3 #" + n
	case GameSpy3Minecraft:
		s.host = "querylens demo Minecraft #" + n
		names = mcNames[:]
	default:
		s.host = "querylens demo Crysis #" + n
	}
	start := int(bmMix(s.seed, 7003) % uint64(len(names)))
	for i := range min(12, len(names)) {
		h := bmMix(s.seed, uint64(7100+i))
		p := bmPlayer{
			name:   names[(start+i*5)%len(names)],
			period: int64(5+h%10) * 60,
			phase:  int64(h >> 8 % 3600),
			ping:   int16(20 + h>>20%150),
		}
		p.stay = p.period * int64(40+h>>32%50) / 100
		s.roster = append(s.roster, p)
	}
	return s
}

// challenge is the number client from must send back during epoch.
func (s *gs3Server) challenge(from netip.AddrPort, epoch int64) int32 {
	h := s.secret
	for i, c := range from.Addr().As16() {
		h ^= uint64(c) << (8 * (i % 8))
		h *= 0x100000001b3
	}
	c := int32(bmMix(h, uint64(epoch)))
	if c == 0 { // "0" would mean: send no challenge
		c = 1
	}
	if s.flavor == GameSpy3Minecraft && c < 0 { // Minecraft's tokens are positive
		c = -(c + 1)
	}
	return c
}

func (s *gs3Server) validChallenge(from netip.AddrPort, c int32, now time.Time) bool {
	epoch := now.Unix() / gs3Epoch
	return c == s.challenge(from, epoch) || c == s.challenge(from, epoch-1)
}

// Respond answers one datagram from a client.
func (s *gs3Server) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	var req gamespy3.Request
	var err error
	if s.flavor == GameSpy3Minecraft {
		req, err = minecraftRequest(q)
	} else {
		req, err = gamespy3.DecodeRequest(q)
	}
	if err != nil {
		return nil
	}
	session := req.Session
	if s.flavor == GameSpy3Minecraft {
		session &= 0x0f0f0f0f
	}
	if req.Type == gamespy3.TypeChallenge {
		c := "0" // Battlefield 2: no challenge wanted
		if s.flavor != GameSpy3NoChallenge {
			c = strconv.Itoa(int(s.challenge(from, now.Unix()/gs3Epoch)))
		}
		b, err := gamespy3.AppendResponse(nil, gamespy3.Response{Type: gamespy3.TypeChallenge, Session: session, Challenge: c})
		if err != nil {
			return nil
		}
		return [][]byte{b}
	}
	switch s.flavor {
	case GameSpy3NoChallenge:
		if req.HasChallenge || req.Minecraft {
			return nil
		}
	case GameSpy3Minecraft:
		if !req.Minecraft || !s.validChallenge(from, req.Challenge, now) {
			return nil
		}
	default:
		if req.Minecraft || !req.HasChallenge || !s.validChallenge(from, req.Challenge, now) {
			return nil
		}
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	packets := s.packets(session, now)
	out := make([][]byte, 0, len(packets))
	for _, p := range packets {
		b, err := gamespy3.AppendResponse(nil, p)
		if err != nil {
			return nil
		}
		if s.behavior == Truncated {
			b = b[:len(b)/2]
		}
		out = append(out, b)
	}
	return out
}

// errMinecraftQuery is what minecraftRequest returns for a datagram
// vanilla Minecraft would not answer with a full stat or a challenge.
var errMinecraftQuery = errors.New("demo: not a Minecraft handshake or full stat query")

// minecraftRequest reads a query as vanilla Minecraft's query listener
// does (wiki.vg "Query"): FE FD, the type and the session id; a
// handshake (type 9) whatever follows; a stat query (type 0) by its
// length only: 15 bytes, the challenge and a 4-byte payload of any
// value, ask for the full stat. 11 bytes (no payload) ask for the basic
// stat, which the codec does not read, so it goes unanswered here.
func minecraftRequest(q []byte) (gamespy3.Request, error) {
	const fullStatLen = 15
	if len(q) < 7 || q[0] != gamespy3.Magic0 || q[1] != gamespy3.Magic1 {
		return gamespy3.Request{}, errMinecraftQuery
	}
	r := gamespy3.Request{Type: gamespy3.Type(q[2]), Session: binary.BigEndian.Uint32(q[3:7])}
	switch {
	case r.Type == gamespy3.TypeChallenge:
		return r, nil
	case r.Type == gamespy3.TypeStat && len(q) == fullStatLen:
		r.HasChallenge, r.Challenge, r.Minecraft = true, int32(binary.BigEndian.Uint32(q[7:11])), true
		return r, nil
	}
	return r, errMinecraftQuery
}

// gs3Present is one connected player at some moment.
type gs3Present struct {
	p     *bmPlayer
	score int
	ping  int
	team  int // 0 or 1 (UT3)
}

// present lists who is connected at now.
func (s *gs3Server) present(now time.Time) []gs3Present {
	t := now.Unix()
	var out []gs3Present
	for i := range s.roster {
		p := &s.roster[i]
		in := bmMod(t+p.phase, p.period)
		if in >= p.stay || len(out) >= gs3MaxPlayers {
			continue
		}
		jitter := int(bmMix(s.seed^uint64(i), uint64(bmMod(t, 1<<40)/bmPingSeconds)) % 21)
		out = append(out, gs3Present{p: p, score: int(in/60)*gs3ScoreMinute + i%3 - 1, ping: int(p.ping) + jitter - 10, team: len(out) % 2})
	}
	return out
}

// packets is the stat reply at now, in the order the server sends it.
func (s *gs3Server) packets(session uint32, now time.Time) []gamespy3.Response {
	ps := s.present(now)
	maps := gs3Maps[s.flavor]
	mapName := maps[bmMod(now.Unix()/gs3MapSeconds+int64(s.seed%5), int64(len(maps)))]
	col := func(f func(p gs3Present) string) []string {
		v := make([]string, len(ps))
		for i, p := range ps {
			v[i] = f(p)
		}
		return v
	}
	names := col(func(p gs3Present) string { return p.p.name })
	stat := gamespy3.Response{Type: gamespy3.TypeStat, Session: session, Split: true, Last: true, HasRules: true}
	switch s.flavor {
	case GameSpy3Minecraft:
		stat.Rules = []gamespy3.Rule{
			{Key: "hostname", Value: s.host}, {Key: "gametype", Value: "SMP"}, {Key: "game_id", Value: "MINECRAFT"},
			{Key: "version", Value: "1.20.4"}, {Key: "plugins", Value: ""}, {Key: "map", Value: mapName},
			{Key: "numplayers", Value: strconv.Itoa(len(ps))}, {Key: "maxplayers", Value: strconv.Itoa(gs3MaxPlayers)},
			{Key: "hostport", Value: "25565"}, {Key: "hostip", Value: "127.0.0.1"},
		}
		stat.Sections = []gamespy3.Section{{Marker: gamespy3.SectionPlayers, Fields: []gamespy3.Field{{Name: "player_", Values: names}}}}
		return []gamespy3.Response{stat}
	case GameSpy3NoChallenge:
		stat.Rules = []gamespy3.Rule{
			{Key: "hostname", Value: s.host}, {Key: "gamever", Value: "1.1.1.6156"}, {Key: "mapname", Value: mapName},
			{Key: "gametype", Value: "InstantAction"}, {Key: "numplayers", Value: strconv.Itoa(len(ps))},
			{Key: "maxplayers", Value: strconv.Itoa(gs3MaxPlayers)}, {Key: "password", Value: "0"},
		}
		stat.Sections = []gamespy3.Section{{Marker: gamespy3.SectionPlayers, End: true, Fields: []gamespy3.Field{
			{Name: "player_", Values: names},
			{Name: "score_", Values: col(func(p gs3Present) string { return strconv.Itoa(p.score) })},
			{Name: "ping_", Values: col(func(p gs3Present) string { return strconv.Itoa(p.ping) })},
		}}}
		return []gamespy3.Response{stat}
	}
	// UT3: three packets; player_ split between packet 0 and packet 1.
	half := len(ps) / 2
	teamScore := [2]int{}
	for _, p := range ps {
		teamScore[p.team] += p.score
	}
	p0 := stat
	p0.Last = false
	p0.Rules = []gamespy3.Rule{
		{Key: "hostname", Value: s.host}, {Key: "gamever", Value: "3.5.1"}, {Key: "hostport", Value: "7777"},
		{Key: "mapname", Value: mapName}, {Key: "gametype", Value: "UTTeamGame"},
		{Key: "numplayers", Value: strconv.Itoa(len(ps))}, {Key: "maxplayers", Value: strconv.Itoa(gs3MaxPlayers)},
		{Key: "password", Value: "0"}, {Key: "goalscore", Value: "60"}, {Key: "timelimit", Value: "20"},
	}
	p0.Sections = []gamespy3.Section{{Marker: gamespy3.SectionPlayers, Fields: []gamespy3.Field{{Name: "player_", Values: names[:half]}}}}
	p1 := gamespy3.Response{Type: gamespy3.TypeStat, Session: session, Split: true, Number: 1}
	p1.Sections = []gamespy3.Section{{Marker: gamespy3.SectionPlayers, Fields: []gamespy3.Field{
		{Name: "player_", Offset: half, Values: names[half:]},
		{Name: "score_", Values: col(func(p gs3Present) string { return strconv.Itoa(p.score) })},
		{Name: "ping_", Values: col(func(p gs3Present) string { return strconv.Itoa(p.ping) })},
	}}}
	p2 := gamespy3.Response{Type: gamespy3.TypeStat, Session: session, Split: true, Number: 2, Last: true}
	p2.Sections = []gamespy3.Section{
		{Marker: gamespy3.SectionPlayers, End: true, Fields: []gamespy3.Field{
			{Name: "team_", Values: col(func(p gs3Present) string { return strconv.Itoa(p.team) })},
		}},
		{Marker: gamespy3.SectionTeams, End: true, Fields: []gamespy3.Field{
			{Name: "team_t", Values: []string{"Red", "Blue"}},
			{Name: "score_t", Values: []string{strconv.Itoa(teamScore[0]), strconv.Itoa(teamScore[1])}},
		}},
	}
	return []gamespy3.Response{p2, p0, p1}
}
