package demo

import (
	"math/rand/v2"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

// OGP emulation: one game server speaking the Open Game Protocol in one
// wire form, built with the ogp encoders. Everything it says is a pure
// function of the seed, the clock and the client's address.
const (
	ogpEpoch       = 60      // seconds a challenge number lasts (the previous one is still accepted)
	ogpMapSeconds  = 10 * 60 // the time limit: the map changes this often
	ogpScoreLimit  = 50
	ogpSlots       = 32
	ogpGameID      = 261 // opaque: the registry of game ids is not public
	ogpConnectPort = 7777
)

var ogpNames = [...]string{
	"Alice", "Zoë", "Jürgen", "Marta", "Kenji", "Olu", "Priya", "Sven", "Ines", "Tomás",
	"Wren", "Björn", "Ada", "Luc", "Noor", "Hana",
}

var ogpMaps = [...][2]string{ // display name, file name
	{"Island", "island"}, {"Desert Town", "desert_town"}, {"Harbour", "harbour"}, {"Old Mill", "old_mill"},
}

var ogpModes = [...]string{"RP", "Race", "TDM"}

type ogpPlayer struct {
	name          string
	period, stay  int64 // seconds of one join/leave cycle, and of it connected
	phase         int64
	ping          uint16
	skill         int32 // points per minute
	team          int32 // -1: on no team (spectating)
	bot           bool
	class, model  string
	colorNameFrom int // colour entry position in the name
}

type ogpServer struct {
	version  ogp.Version
	behavior Behavior
	seed     uint64
	secret   uint64
	mode     string
	host     string
	roster   []ogpPlayer
	limit    ipWindow // RateLimit: last data answer per client IP
}

// NewOGP returns an emulated OGP server speaking version "1.0" (the
// deployed 0.94+/1.0x form; the default) or "0.04" (the seed's form).
//
// It asks every client for a challenge number first (per client address,
// changing every minute; the previous one is still accepted) and answers a
// Default query v1 with what was asked among what it has: server fields,
// two teams, players who join and leave over time (each on its own cycle
// of minutes, two bots always in, one spectator), rules, add-ons and the
// time and score limits. A query that sets MaxBytesPerPacket gets the
// answer split to fit. 1.0x clients that set bUTF8 get UTF-8 names,
// others Latin-1.
//
// Behaviours: Silent never answers; Truncated cuts every data answer in
// half (challenge answers stay whole, so a client gets that far);
// RateLimit drops a client IP's data queries for 10 s after answering one
// (challenges are still answered, or no client could ever ask twice in a
// row). Slow is the caller's to apply.
func NewOGP(seed int64, version string, b Behavior) Handler {
	v, ok := ogp.ParseVersion(version)
	if !ok {
		v = ogp.V1
	}
	s := &ogpServer{version: v, behavior: b, seed: uint64(seed), limit: newIPWindow()}
	s.secret = s.mix(1, 0)
	s.mode = ogpModes[s.mix(2, 0)%uint64(len(ogpModes))]
	s.host = "querylens demo OGP " + v.String() + " #" + strconv.Itoa(int(s.mix(3, 0)%90+10))
	start := int(s.mix(4, 0) % uint64(len(ogpNames)))
	for i := range 12 {
		h := s.mix(100, uint64(i))
		p := ogpPlayer{
			name:   ogpNames[(start+i*5)%len(ogpNames)],
			period: int64(5+h%10) * 60,
			phase:  int64(h >> 8 % 3600),
			ping:   uint16(20 + h>>20%160),
			skill:  int32(1 + h>>32%6),
			team:   int32(i % 2),
			class:  [...]string{"medic", "driver", "officer"}[h>>40%3],
			model:  "ped" + strconv.Itoa(int(h>>44%30)),
		}
		p.stay = p.period * int64(40+h>>48%50) / 100
		p.colorNameFrom = len(p.name) / 2
		s.roster = append(s.roster, p)
	}
	s.roster = append(s.roster,
		ogpPlayer{name: "Bot Alpha", period: 1, stay: 1, ping: 0, skill: 2, team: 0, bot: true, class: "driver", model: "bot"},
		ogpPlayer{name: "Bot Beta", period: 1, stay: 1, ping: 0, skill: 2, team: 1, bot: true, class: "driver", model: "bot"},
		ogpPlayer{name: "Watcher", period: 1, stay: 1, ping: 60, team: -1, class: "spectator", model: "cam"},
	)
	return s
}

// mix is a deterministic hash of the seed and two values.
func (s *ogpServer) mix(a, b uint64) uint64 {
	return rand.NewPCG(s.seed^a*0x9e3779b97f4a7c15, b).Uint64()
}

// challenge is the number client from must echo during epoch. It depends
// on the client's IP address only, not its port: the number proves the
// client can receive at that address, and a relay may send the follow-up
// query from another socket.
func (s *ogpServer) challenge(from netip.AddrPort, epoch int64) uint32 {
	ip := from.Addr().As16()
	h := s.secret
	for i, c := range ip {
		h ^= uint64(c) << (8 * (i % 8))
		h *= 0x100000001b3
	}
	c := uint32(rand.NewPCG(h, uint64(epoch)).Uint64())
	if c == 0 || c == 0xffffffff { // the values that ask for a new number
		c = 1
	}
	return c
}

func (s *ogpServer) validChallenge(from netip.AddrPort, c uint32, now time.Time) bool {
	epoch := now.Unix() / ogpEpoch
	return c == s.challenge(from, epoch) || c == s.challenge(from, epoch-1)
}

// Respond answers one datagram from a client.
func (s *ogpServer) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := ogp.DecodeRequestAs(q, s.version)
	if err != nil {
		// A query header of our version with a body we cannot read gets
		// "invalid query" (1.0x has error answers; v0.04 stays silent).
		if h, _, herr := ogp.DecodeHeader(q); herr == nil && !h.Answer && h.Version == s.version {
			return s.errorAnswer(h, ogp.ErrorInvalidQuery)
		}
		return nil
	}
	switch req.Type {
	case ogp.TypePing:
		return s.send(ogp.Response{Header: s.reply(req.Header, ogp.TypePing)})
	case ogp.TypeDefault:
	default:
		return s.errorAnswer(req.Header, ogp.ErrorInvalidType)
	}
	if !req.HasChallenge || !s.validChallenge(from, req.Challenge, now) {
		h := s.reply(req.Header, ogp.TypePing) // v0.04: a "None" answer carrying the number
		h.HasChallenge, h.Challenge = true, s.challenge(from, now.Unix()/ogpEpoch)
		if s.version == ogp.V1 {
			h.Type = ogp.TypeError
		}
		return s.send(ogp.Response{Header: h, ErrorID: ogp.ErrorInvalidChallenge})
	}
	if !req.Body {
		return s.errorAnswer(req.Header, ogp.ErrorInvalidQuery)
	}
	if s.behavior == RateLimit && !s.limit.admit(from.Addr(), now) {
		return nil
	}
	a := s.answer(req, now)
	var out [][]byte
	if req.Split && req.MaxBytesPerPacket > 0 {
		out, err = ogp.SplitResponse(a, int(req.MaxBytesPerPacket))
	} else {
		out, err = s.send(a), nil
	}
	if err != nil || len(out) == 0 {
		return nil
	}
	if s.behavior == Truncated {
		for i, b := range out {
			out[i] = b[:len(b)/2]
		}
	}
	return out
}

// reply is the answer header for a query: the version, the type, and the
// request id echoed.
func (s *ogpServer) reply(q ogp.Header, t ogp.Type) ogp.Header {
	return ogp.Header{Version: s.version, Type: t, HasRequestID: q.HasRequestID, RequestID: q.RequestID}
}

func (s *ogpServer) send(a ogp.Response) [][]byte {
	b, err := ogp.AppendResponse(nil, a)
	if err != nil {
		return nil
	}
	return [][]byte{b}
}

// errorAnswer is a 1.0x error answer; v0.04 has none, so it stays silent.
func (s *ogpServer) errorAnswer(q ogp.Header, id ogp.ErrorID) [][]byte {
	if s.version != ogp.V1 {
		return nil
	}
	return s.send(ogp.Response{Header: s.reply(q, ogp.TypeError), ErrorID: id})
}

// What this server can send, in each version's bits.
const (
	ogpRequests1 = ogp.ReqServerInfo | ogp.ReqTeams | ogp.ReqPlayers | ogp.ReqRules | ogp.ReqAddOns |
		ogp.ReqLimits | ogp.ReqColoredNames
	ogpInfo1 = ogp.InfoGameName | ogp.InfoServerFlags | ogp.InfoHostName | ogp.InfoConnectPort | ogp.InfoMod |
		ogp.InfoGameType | ogp.InfoGameMode | ogp.InfoMap | ogp.InfoNextMap | ogp.InfoPlayerCount |
		ogp.InfoSlotMax | ogp.InfoBotCount | ogp.InfoReservedSlots
	ogpMod1      = ogp.ModIdentifier | ogp.ModVersion | ogp.ModURL
	ogpMap1      = ogp.MapFileName | ogp.MapVersion | ogp.MapAuthor
	ogpRequests4 = ogp.Req004Teams | ogp.Req004Players | ogp.Req004Rules | ogp.Req004AddOns | ogp.Req004Limits |
		ogp.Req004GameName | ogp.Req004ServerFlags | ogp.Req004Mod | ogp.Req004HostName | ogp.Req004Map |
		ogp.Req004NextMap | ogp.Req004GameType | ogp.Req004PlayerCount | ogp.Req004SlotMax | ogp.Req004BotCount |
		ogp.Req004ReservedSlots
	ogpTeamFields   = ogp.TeamName | ogp.TeamScore | ogp.TeamAveragePing | ogp.TeamPlayerCount | ogp.TeamColor
	ogpPlayerFields = ogp.PlayerFlags | ogp.PlayerSlot | ogp.PlayerName | ogp.PlayerTeam | ogp.PlayerClass |
		ogp.PlayerScore | ogp.PlayerFrags | ogp.PlayerKills | ogp.PlayerDeath | ogp.PlayerPing | ogp.PlayerModel |
		ogp.PlayerTime
	ogpAddOnFields = ogp.AddOnFlags | ogp.AddOnShortName | ogp.AddOnLongName | ogp.AddOnVersion
)

// ogpPresent is one connected player at some moment.
type ogpPresent struct {
	p       *ogpPlayer
	slot    uint32
	seconds int64 // connected for
	score   int32
}

// present lists who is connected at t, with their slots and scores.
func (s *ogpServer) present(t int64) []ogpPresent {
	var out []ogpPresent
	for i := range s.roster {
		p := &s.roster[i]
		in := (t + p.phase) % p.period
		if in < 0 {
			in += p.period
		}
		if in >= p.stay {
			continue
		}
		secs := in
		if p.bot || p.team < 0 {
			secs = t%ogpMapSeconds + 1 // in since the map started
		}
		score := int32(0)
		if p.team >= 0 {
			score = p.skill * int32(min(secs, t%ogpMapSeconds+1)/60)
		}
		out = append(out, ogpPresent{p: p, slot: uint32(i), seconds: secs, score: score})
	}
	return out
}

// answer builds the Default query v1 answer to q at now: what q asked for
// among what the server has.
func (s *ogpServer) answer(q ogp.Request, now time.Time) ogp.Response {
	t := now.Unix()
	v1 := s.version == ogp.V1
	utf8 := v1 && q.UTF8
	text := func(x string) []byte {
		if utf8 {
			return []byte(x)
		}
		return codecs.ToLatin1(nil, x)
	}
	h := s.reply(q.Header, ogp.TypeDefault)
	h.HasChallenge, h.Challenge, h.UTF8 = true, q.Challenge, utf8
	a := ogp.Response{Header: h, GameID: ogpGameID}

	round := t/ogpMapSeconds + int64(s.seed%uint64(len(ogpMaps)))
	cur, next := ogpMaps[round%int64(len(ogpMaps))], ogpMaps[(round+1)%int64(len(ogpMaps))]
	players := s.present(t)
	bots := uint32(0)
	for _, p := range players {
		if p.p.bot {
			bots++
		}
	}
	sv := &a.Server
	*sv = ogp.ServerInfo{
		GameName: text("Onset"), HostName: text(s.host), ConnectPort: ogpConnectPort,
		ModName: text("Roleplay"), ModDir: text("rp"), ModIdentifier: text("rp"), ModVersion: text("1.4.2"),
		ModURL: text("https://example.org/rp"), GameType: text("Freeroam"), GameMode: text(s.mode),
		Map:         ogp.MapInfo{Name: text(cur[0]), File: text(cur[1]), Version: text("3"), Author: text("querylens")},
		NextMap:     ogp.MapInfo{Name: text(next[0]), File: text(next[1]), Version: text("1"), Author: text("querylens")},
		PlayerCount: uint32(len(players)), SlotMax: ogpSlots, BotCount: bots, ReservedSlots: 2,
	}
	if v1 {
		a.Requests = q.Requests & ogpRequests1
		sv.Fields = q.ServerInfoFields & ogpInfo1
		sv.ModFields = q.ModFields & ogpMod1
		sv.MapFields = q.MapFields & ogpMap1
		sv.Flags = ogp.SFDedicated | ogp.SFLinux
		sv.HostNameColors = ogp.Colors{0x00, 0x0e} // yellow from the start
	} else {
		a.Requests = q.Requests & ogpRequests4
		sv.Flags = ogp.SF004Linux | ogp.SF004Dedicated
	}
	colored := v1 && a.Requests&ogp.ReqColoredNames != 0

	a.TeamFields = q.TeamFields & ogpTeamFields
	a.PlayerFields = q.PlayerFields & ogpPlayerFields
	if !v1 {
		a.TeamFields &^= ogp.TeamColor
	}
	teams := [2]ogp.Team{{Name: text("Police"), Color: 0x001f}, {Name: text("Civilians"), Color: 0xf800}}
	var pings [2]int
	for _, p := range players {
		x := p.p
		pl := ogp.Player{
			Slot: p.slot, Name: text(x.name), Team: x.team, Class: text(x.class), Model: text(x.model),
			Score: p.score, Frags: p.score, Kills: uint32(p.score), Deaths: uint32(p.seconds / 90),
			Ping: x.ping, Time: uint16(min(p.seconds, 0xffff)),
		}
		if x.ping > 0 {
			// Pings move a little every few seconds.
			pl.Ping = x.ping + uint16(s.mix(200+uint64(p.slot), uint64(t/5))%21) - 10
		}
		switch {
		case x.bot:
			pl.Flags = ogp.FlagAlive | ogp.FlagBot
		case x.team < 0:
			pl.Flags = ogp.FlagDead
		default:
			pl.Flags = ogp.FlagAlive
		}
		if colored {
			pl.NameColors = ogp.Colors{byte(x.colorNameFrom), 0x0c} // red from the middle on
		}
		if x.team >= 0 {
			teams[x.team].Score += p.score
			teams[x.team].PlayerCount++
			pings[x.team] += int(pl.Ping)
		} else if !v1 {
			pl.Team = 0xff // v0.04's spectator
		}
		a.Players = append(a.Players, pl)
	}
	for i := range teams {
		if teams[i].PlayerCount > 0 {
			teams[i].AveragePing = uint16(pings[i] / int(teams[i].PlayerCount))
		}
		if colored {
			teams[i].NameColors = ogp.Colors{}
		}
	}
	a.Teams = teams[:]
	a.Rules = []ogp.Rule{
		{Key: text("version"), Value: text("1.4.2")},
		{Key: text("website"), Value: text("https://example.org/")},
		{Key: text("motd"), Value: text("Welcome to " + s.host + "!")},
		{Key: text("friendly_fire"), Value: text("off")},
	}
	a.AddOnFields = q.AddOnFields & ogpAddOnFields
	a.AddOns = []ogp.AddOn{
		{Flags: ogp.AddOnActive | ogp.AddOnAntiCheat, ShortName: text("ac"), LongName: text("Anti Cheat"), Version: text("2.0")},
		{Flags: ogp.AddOnActive | ogp.AddOnAdminTool, ShortName: text("adm"), LongName: text("Server Admin"), Version: text("0.9")},
	}
	a.Limits = []ogp.Limit{
		{Type: ogp.LimitTime, HasLeft: true, Limit: ogpMapSeconds, Left: uint32(ogpMapSeconds - t%ogpMapSeconds)},
		{Type: ogp.LimitScore, Limit: ogpScoreLimit},
	}
	return a
}
