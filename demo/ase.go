package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/ase"
)

// All-Seeing Eye emulation: servers of the games that answer ASE's one
// query, in the shapes their replies take. Like the Bloodmasters
// emulation, what a server reports is a pure function of its seed and
// the clock.

// ASEFlavor is the game whose reply an emulated ASE server imitates.
type ASEFlavor uint8

const (
	// ASEMTA is Multi Theft Auto: San Andreas: game "mta", a few rules,
	// every player flag bit set with team, skin and time sent empty.
	ASEMTA ASEFlavor = iota
	// ASEFarCry is Far Cry: team games, players with name, team, score
	// and ping only (the skin and time bits off: absent, not empty).
	ASEFarCry
	// ASEFlags lists a player for each of the 64 combinations of the six
	// flag bits (flags 1 to 63, then 0), each field present exactly when
	// its bit is set: what a reader must get right about absent fields.
	// The entry with no bits comes last: qstat ends its list at one.
	ASEFlags
)

type aseServer struct {
	flavor   ASEFlavor
	behavior Behavior
	seed     uint64
	name     string
	limit    ipWindow
}

// NewASE returns an emulated ASE server. It answers the query 's' with
// players joining and leaving over time. It honours Silent, Truncated
// (cuts every reply in half) and RateLimit (drops a client IP's queries
// for 10 s after answering one); Slow is the caller's to apply.
func NewASE(seed int64, f ASEFlavor, b Behavior) Handler {
	s := &aseServer{flavor: f, behavior: b, seed: uint64(seed), limit: newIPWindow()}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	switch f {
	case ASEFarCry:
		s.name = "querylens Far Cry demo #" + n
	case ASEFlags:
		s.name = "querylens ASE flags demo #" + n
	default:
		s.name = "querylens MTA:SA demo #" + n
	}
	return s
}

// Respond answers the full query; anything else gets no answer.
func (s *aseServer) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	if _, err := ase.DecodeRequest(q); err != nil {
		return nil
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	b, err := ase.AppendResponse(nil, s.state(now))
	if err != nil {
		return nil
	}
	if s.behavior == Truncated {
		b = b[:len(b)/2]
	}
	return [][]byte{b}
}

var aseMaps = [...][]string{
	ASEMTA:    {"San Andreas", "Las Venturas", "Los Santos"},
	ASEFarCry: {"mp_surf", "mp_jungle", "mp_airstrip", "mp_river"},
	ASEFlags:  {"flags"},
}

// state is the server's reply at now.
func (s *aseServer) state(now time.Time) ase.Response {
	t := now.Unix()
	maps := aseMaps[s.flavor]
	r := ase.Response{
		Game: "mta", Port: "22003", Name: s.name, GameType: "Freeroam", Version: "1.6",
		Map: maps[bmMod(t/(20*60)+int64(s.seed%5), int64(len(maps)))], Password: "0", MaxPlayers: "32",
	}
	switch s.flavor {
	case ASEFarCry:
		r.Game, r.Port, r.GameType, r.Version, r.MaxPlayers = "farcry", "49001", "TDM", "1.4", "16"
		r.Password = strconv.Itoa(int(s.seed % 2))
		r.Rules = []ase.Rule{{Key: "timelimit", Value: "30"}, {Key: "fraglimit", Value: "0"}, {Key: "friendlyfire", Value: "1"}}
	case ASEFlags:
		r.Game, r.Port, r.GameType, r.MaxPlayers = "ase", "1000", "flags", "64"
		for i := range 64 {
			f := (i + 1) % 64
			p := ase.Player{Flags: ase.Flags(f)}
			v := strconv.Itoa(f)
			for _, x := range []struct {
				bit ase.Flags
				dst *string
				val string
			}{
				{ase.FlagName, &p.Name, "player " + v}, {ase.FlagTeam, &p.Team, "team " + strconv.Itoa(f%3)},
				{ase.FlagSkin, &p.Skin, "skin" + v}, {ase.FlagScore, &p.Score, strconv.Itoa(f - 5)},
				{ase.FlagPing, &p.Ping, strconv.Itoa(20 + f)}, {ase.FlagTime, &p.Time, strconv.Itoa(60 * f)},
			} {
				if p.Flags&x.bit != 0 {
					*x.dst = x.val
				}
			}
			r.Players = append(r.Players, p)
		}
		r.NumPlayers = strconv.Itoa(len(r.Players))
		return r
	default:
		r.Rules = []ase.Rule{{Key: "weather", Value: strconv.Itoa(int(bmMod(t/600, 20)))}, {Key: "gamemode", Value: "freeroam"}}
	}
	for i := range 10 {
		h := bmMix(s.seed, uint64(300+i))
		period := int64(3+h%8) * 60
		if bmMod(t+int64(h>>8%3600), period) >= period*int64(40+h>>20%50)/100 {
			continue
		}
		name := bmNames[(int(s.seed)+i*3)%len(bmNames)]
		score := strconv.Itoa(int(bmMod(t/30+int64(h%40), 40)) - 2)
		ping := strconv.Itoa(15 + int(h>>32%120))
		if s.flavor == ASEFarCry {
			team := "red"
			if i%2 == 1 {
				team = "blue"
			}
			r.Players = append(r.Players, ase.Player{Flags: ase.FlagName | ase.FlagTeam | ase.FlagScore | ase.FlagPing,
				Name: name, Team: team, Score: score, Ping: ping})
			continue
		}
		r.Players = append(r.Players, ase.Player{Flags: ase.FlagsKnown, Name: name, Score: score, Ping: ping})
	}
	r.NumPlayers = strconv.Itoa(len(r.Players))
	return r
}
