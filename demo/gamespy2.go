package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/gamespy2"
)

// GameSpy v2 emulation: a Battlefield 1942 style QR2 server whose roster,
// map and scores are pure functions of the seed and the clock.
const (
	gs2RoundSecs  = 20 * 60 // one map per round
	gs2Slots      = 24      // players that come and go
	gs2MaxPlayers = 32
)

var gs2Hostnames = [...]string{
	"[EU] Desert Combat 24/7", "Wake Island Veterans", "Ærø Conquest Night", "querylens demo: Operation Flashpoint",
}

var gs2Maps = [...]string{"El Alamein", "Wake Island", "Stalingrad", "Omaha Beach", "Berlin", "Kursk", "Market Garden"}

var gs2Names = [...]string{
	"Armande Hammer", "Bravo-6", "noob", "Zoë", "Åsa", "Sgt. Slaughter", "Kowalski", "Dmitri", "xXsniperXx",
	"Medic!", "Lt. Dan", "Pvt. Pyle", "Günther", "Hana", "Tex", "Rook", "Falcon", "Dutch", "Ivan",
	"Beaumont", "Jensen", "O'Malley", "Nakamura", "Sparrow",
}

// gs2Player is one roster slot: when it is connected and how it plays.
type gs2Player struct {
	name          string
	period, stay  int64 // seconds of one join/leave cycle, and of it connected
	phase         int64
	ping          int
	team          int // 1 Axis, 2 Allies
	skill, deaths int // points and deaths per minute
}

type gs2Server struct {
	behavior Behavior
	seed     uint64
	hostname string
	roster   [gs2Slots]gs2Player
	limit    ipWindow // RateLimit: last answer per client IP
}

// NewGameSpy2 returns an emulated GameSpy v2 (QR2 SDK) server built with
// gamespy2.AppendResponse, so it answers every request form (FF, 00 and
// key-number lists) and cuts replies at 1400 bytes as the SDK does. The
// seed picks its name and roster; players join and leave over time (each
// on its own cycle of minutes), maps rotate every 20 minutes, and two teams
// keep score. It honours Silent (never answers), Truncated (cuts every reply
// inside its last section) and RateLimit (drops a client IP's queries for
// 10 s after answering one); Slow is the caller's to apply.
func NewGameSpy2(seed int64, b Behavior) Handler {
	s := &gs2Server{behavior: b, seed: uint64(seed), limit: newIPWindow()}
	s.hostname = gs2Hostnames[s.mix(1)%uint64(len(gs2Hostnames))]
	for i := range s.roster {
		p := &s.roster[i]
		p.name = gs2Names[(s.mix(2)+uint64(i))%uint64(len(gs2Names))]
		p.period = 300 + int64(s.mix(3, uint64(i))%1500)
		p.stay = p.period * int64(40+s.mix(4, uint64(i))%55) / 100
		p.phase = int64(s.mix(5, uint64(i)) % uint64(p.period))
		p.ping = 25 + int(s.mix(6, uint64(i))%180)
		p.team = 1 + i%2
		p.skill = 1 + int(s.mix(7, uint64(i))%6)
		p.deaths = 1 + int(s.mix(8, uint64(i))%3)
	}
	return s
}

// mix hashes the seed with xs (SplitMix64 finalizer): every random choice
// of the emulation is one of these, so a state depends only on seed and time.
func (s *gs2Server) mix(xs ...uint64) uint64 {
	h := s.seed ^ 0x9e3779b97f4a7c15
	for _, x := range xs {
		h += x + 0x9e3779b97f4a7c15
		h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
		h = (h ^ h>>27) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

func (s *gs2Server) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := gamespy2.DecodeRequest(q)
	if err != nil {
		return nil // not a GS2 query: a QR2 server ignores it
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	reply, err := gamespy2.AppendResponse(nil, s.state(now), req)
	if err != nil {
		return nil
	}
	if s.behavior == Truncated && len(reply) > 6 {
		reply = reply[:len(reply)-1-(len(reply)-5)/3]
	}
	return [][]byte{reply}
}

// state returns everything the server knows at time now, as a reply that
// AppendResponse trims to what a request asks for.
func (s *gs2Server) state(now time.Time) gamespy2.Response {
	t := now.Unix()
	round := t / gs2RoundSecs
	elapsed := t % gs2RoundSecs
	players := gamespy2.Table{Fields: []string{"player_", "score_", "deaths_", "ping_", "team_", "kills_"}}
	var teamScore [3]int
	for i := range s.roster {
		p := &s.roster[i]
		in := (t + p.phase) % p.period
		if in >= p.stay {
			continue
		}
		// Scores count from the later of joining and the round's start.
		minutes := int(min(in, elapsed) / 60)
		kills := minutes * p.skill / 2
		score := minutes*p.skill + int(s.mix(9, uint64(i), uint64(t/60))%3)
		ping := p.ping + int(s.mix(10, uint64(i), uint64(t/15))%12)
		teamScore[p.team] += score
		players.Rows = append(players.Rows, []string{p.name, strconv.Itoa(score), strconv.Itoa(minutes * p.deaths / 2),
			strconv.Itoa(ping), strconv.Itoa(p.team), strconv.Itoa(kills)})
	}
	tickets := 300 - int(elapsed/8)
	return gamespy2.Response{
		Sections: gamespy2.ServerSection | gamespy2.PlayerSection | gamespy2.TeamSection,
		Rules: []gamespy2.Rule{
			{Key: "hostname", Value: s.hostname},
			{Key: "gamename", Value: "bfield1942"},
			{Key: "gamever", Value: "v1.612"},
			{Key: "hostport", Value: "14567"},
			{Key: "mapname", Value: gs2Maps[(s.mix(11)+uint64(round))%uint64(len(gs2Maps))]},
			{Key: "gametype", Value: "conquest"},
			{Key: "gamemode", Value: "openplaying"},
			{Key: "numplayers", Value: strconv.Itoa(len(players.Rows))},
			{Key: "maxplayers", Value: strconv.Itoa(gs2MaxPlayers)},
			{Key: "numteams", Value: "2"},
			{Key: "timelimit", Value: strconv.Itoa(gs2RoundSecs / 60)},
			{Key: "timeelapsed", Value: strconv.FormatInt(elapsed, 10)},
			{Key: "password", Value: "0"},
			{Key: "dedicated", Value: "1"},
		},
		Players: players,
		Teams: gamespy2.Table{Fields: []string{"team_t", "score_t", "tickets_t"}, Rows: [][]string{
			{"Axis", strconv.Itoa(teamScore[1]), strconv.Itoa(tickets - teamScore[2]/10)},
			{"Allies", strconv.Itoa(teamScore[2]), strconv.Itoa(tickets - teamScore[1]/10)},
		}},
	}
}
