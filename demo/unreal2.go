package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/unreal2"
)

// Unreal Engine 2 emulation: a UT2004 server and a Killing Floor server,
// built with the codec's own encoder. Both spread their rules and players
// over several datagrams, as real servers do with long lists, and answer
// each query as it comes, in order. What a server reports is a pure
// function of its seed.

// Unreal2Flavor is the game whose dialect an emulated server speaks.
type Unreal2Flavor uint8

const (
	// UT2004: header 80, ping, flags and skill after the player counts;
	// names with colour codes, a UCS-2 name, team rows (id 0) and a bot
	// (ping 0) among the players; a password rule.
	Unreal2UT2004 Unreal2Flavor = iota
	// Killing Floor: the current and total wave before the ping; the
	// mutator KillingFloorMut in the rules, which is how a client tells
	// the dialect (GameDig's test).
	Unreal2KillingFloor
)

// u2Chunk is the most bytes of records one reply datagram carries: small,
// so that the demo's lists span several datagrams.
const u2Chunk = 64

type u2Server struct {
	flavor   Unreal2Flavor
	behavior Behavior
	seed     uint64
	name     string
}

// NewUnreal2 returns an emulated Unreal Engine 2 server. It answers the
// three queries (info, rules, players) and qstat's fourth (rules and
// players) and honours Silent, Truncated (its
// server info is cut in half), BadLength (the server info's first string
// and the first player's name say more than follows); Slow is the
// caller's.
func NewUnreal2(seed int64, f Unreal2Flavor, b Behavior) Handler {
	s := &u2Server{flavor: f, behavior: b, seed: uint64(seed)}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	if f == Unreal2KillingFloor {
		s.name = "querylens Killing Floor demo #" + n
	} else {
		s.name = "querylens UT2004 demo #" + n
	}
	return s
}

func (s *u2Server) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := unreal2.DecodeRequest(q)
	if err != nil {
		return nil
	}
	if req.Type == unreal2.TypeRulesPlayers { // qstat's: both lists
		rules := s.Respond(append(q[:4:4], unreal2.TypeRules), from, now)
		return append(rules, s.Respond(append(q[:4:4], unreal2.TypePlayers), from, now)...)
	}
	var out [][]byte
	switch req.Type {
	case unreal2.TypeInfo:
		b, err := unreal2.AppendResponse(nil, s.info())
		if err != nil {
			return nil
		}
		if s.behavior == Truncated {
			b = b[:len(b)/2]
		}
		if s.behavior == BadLength {
			// The first string (the IP) says 127 UCS-2 units, more than
			// follow: what a server list asks is spoilt too.
			b[5+4] = 0xff
		}
		out = [][]byte{b}
	case unreal2.TypeRules:
		var recs [][]byte
		for _, r := range s.rules() {
			b, err := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypeRules, Rules: []unreal2.Rule{r}})
			if err != nil {
				return nil
			}
			recs = append(recs, b[5:])
		}
		out = unreal2.Split(s.version(), unreal2.TypeRules, recs, u2Chunk)
	case unreal2.TypePlayers:
		var recs [][]byte
		for _, p := range s.players() {
			b, err := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypePlayers, Players: []unreal2.Player{p}})
			if err != nil {
				return nil
			}
			recs = append(recs, b[5:])
		}
		out = unreal2.Split(s.version(), unreal2.TypePlayers, recs, u2Chunk)
		if len(out) == 0 {
			out = unreal2.Split(s.version(), unreal2.TypePlayers, [][]byte{nil}, u2Chunk) // the header alone
		}
		if s.behavior == BadLength && len(recs) > 0 {
			out[0][5+4] = 0x7f
		}
	}
	return out
}

func (s *u2Server) version() uint32 { return unreal2.VersionUT2004 }

func (s *u2Server) info() unreal2.Response {
	in := unreal2.ServerInfo{
		// The IP as servers send it: a length of 0, no terminator (qstat
		// reads the game port right after that one byte).
		IP:       unreal2.String{NoNUL: true},
		GamePort: 7777, QueryPort: 7778,
		Name:       unreal2.Text("\x1b\xff\xd0\x10" + s.name),
		NumPlayers: uint32(s.humans()), MaxPlayers: 16,
		Dialect: unreal2.DialectUT2004, HasPing: true, HasFlags: true, Flags: 0x0201,
		Skill: unreal2.Text(strconv.Itoa(int(bmMix(s.seed, 2) % 8))),
	}
	if s.flavor == Unreal2KillingFloor {
		in.GamePort, in.QueryPort = 7707, 7708
		in.Map, in.GameType = unreal2.Text(u2Pick(s.seed, 3, "KF-BioticsLab", "KF-Farm", "KF-Manor", "KF-Offices")), unreal2.Text("KFGameType")
		in.Dialect, in.MaxPlayers = unreal2.DialectKillingFloor, 6
		in.WaveCurrent, in.WaveTotal = uint32(bmMix(s.seed, 4)%10+1), 10
		in.Skill = unreal2.Text("4")
	} else {
		in.Map, in.GameType = unreal2.Text(u2Pick(s.seed, 3, "CTF-FaceClassic", "DM-Rankin", "ONS-Torlan", "BR-Colossus")), unreal2.Text("xCTFGame")
	}
	return unreal2.Response{Version: s.version(), Type: unreal2.TypeInfo, Info: in}
}

func u2Pick(seed, salt uint64, xs ...string) string { return xs[bmMix(seed, salt)%uint64(len(xs))] }

func (s *u2Server) rules() []unreal2.Rule {
	kv := func(k, v string) unreal2.Rule { return unreal2.Rule{Key: unreal2.Text(k), Value: unreal2.Text(v)} }
	password := "False"
	if bmMix(s.seed, 5)%3 == 0 {
		password = "True"
	}
	rs := []unreal2.Rule{kv("ServerMode", "dedicated"), kv("AdminName", "querylens"), kv("AdminEmail", "demo@querylens.invalid")}
	if s.flavor == Unreal2KillingFloor {
		return append(rs, kv("ServerVersion", "1065"), kv("GamePassword", password), kv("Mutator", "KillingFloorMut"),
			kv("Mutator", "MutServerPerks"), kv("InitialWave", "0"), kv("FinalWave", "10"), kv("Max runtime zombies", "32"), kv("GameDifficulty", "4.00"))
	}
	return append(rs, kv("ServerVersion", "3369"), kv("GamePassword", password), kv("GoalScore", "3"), kv("TimeLimit", "20"),
		kv("Mutator", "MutUTComp"), kv("Mutator", "MutNoAdrenaline"), kv("FriendlyFireScale", "0%"), kv("BalanceTeams", "True"))
}

// humans is how many players the server counts (the bot is listed, not
// counted).
func (s *u2Server) humans() int { return int(bmMix(s.seed, 6)%4) + 3 }

func (s *u2Server) players() []unreal2.Player {
	names := []string{"Gumby", "\x1b\x10\xff\x10Axon", "Malcolm", "Brock", "Lauren", "Xan"}
	var ps []unreal2.Player
	if s.flavor == Unreal2UT2004 {
		ps = append(ps, unreal2.Player{Name: unreal2.Text("Red Team"), Score: 2}, unreal2.Player{Name: unreal2.Text("Blue Team"), Score: 1})
	}
	for i := 0; i < s.humans(); i++ {
		p := unreal2.Player{ID: uint32(10 + i), Name: unreal2.Text(names[i]), Ping: uint32(bmMix(s.seed, uint64(10+i))%120 + 20),
			Score: int32(bmMix(s.seed, uint64(20+i))%40) - 5}
		if i == 2 {
			p.Name = unreal2.String{Value: "Łukasz", UCS2: true}
		}
		if s.flavor == Unreal2UT2004 {
			p.StatsID = unreal2.TeamRedBit << (i % 2)
		}
		ps = append(ps, p)
	}
	if s.flavor == Unreal2UT2004 {
		ps = append(ps, unreal2.Player{ID: 30, Name: unreal2.Text("Skakruk"), Ping: 0, Score: 7, StatsID: unreal2.TeamBlueBit})
	}
	return ps
}
