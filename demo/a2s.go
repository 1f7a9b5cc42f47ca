package demo

import (
	"math/rand/v2"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/a2s"
)

// A2S emulation: game servers answering Valve's server queries in the
// Source or GoldSrc form, and a Steam-like master that lists addresses in
// pages. Built with the a2s encoders; everything a server says is a pure
// function of the seed, the clock and the client's address.
const (
	a2sEpoch      = 60      // seconds a challenge lasts (the previous one is still accepted)
	a2sMapSeconds = 15 * 60 // the map changes this often
	a2sSlots      = 24
	a2sSplitBody  = 1248 // payload bytes per split part, as Source servers send them
	a2sGoldSplit  = 1400 // GoldSrc's
	a2sAppID      = 440
	a2sGamePort   = 27015
)

// A2SConfig says which kind of A2S server NewA2S emulates.
type A2SConfig struct {
	// GoldSrc answers INFO with the obsolete 'm' reply and splits in the
	// GoldSrc form; otherwise the Source 'I' reply and the Source form.
	GoldSrc bool
	// InfoChallenge makes INFO need a challenge too, as Source servers do
	// since December 2020; PLAYER and RULES always need one.
	InfoChallenge bool
	// Compress sends the rules bzip2-compressed (Source only).
	Compress bool
	// OnlyInfo ignores PLAYER and RULES, as many servers configured to.
	OnlyInfo bool
	// Connecting is how many players are still connecting: counted in
	// INFO's and PLAYER's counts, not listed in PLAYER's entries, as real
	// servers do.
	Connecting int
}

var a2sMaps = [...]string{"ctf_2fort", "cp_dustbowl", "pl_badwater", "koth_harvest", "cp_granary"}
var a2sGoldMaps = [...]string{"de_dust2", "cs_office", "de_inferno", "de_nuke"}

type a2sPlayer struct {
	name         string
	period, stay int64 // seconds of one join/leave cycle, and of it connected
	phase        int64
	skill        int32 // points per minute
}

type a2sServer struct {
	cfg      A2SConfig
	behavior Behavior
	seed     uint64
	secret   uint64
	name     string
	roster   []a2sPlayer
	limit    [3]ipWindow // RateLimit: last answer per client IP, per query type (INFO, PLAYER, RULES)
	rules    [][]byte    // the rules reply as sent (whole when it fits, else its parts)
}

// NewA2S returns an emulated A2S server. It answers A2S_INFO (with a
// challenge first when cfg.InfoChallenge), A2S_PLAYER and A2S_RULES (always
// with a challenge first: per client IP, changing every minute, the
// previous one still accepted). Players join and leave over time on their
// own cycles, two bots are always in; the rules (a2sRules, fixed) are
// larger than one datagram, so they are split, and bzip2-compressed with
// cfg.Compress.
//
// Behaviours: Silent never answers; Truncated cuts every data reply in
// half (challenges stay whole); RateLimit drops a client IP's data queries
// of a kind for 10 s after answering one of that kind (challenges are
// still answered). Slow is
// the caller's to apply.
func NewA2S(seed int64, cfg A2SConfig, b Behavior) Handler {
	if cfg.GoldSrc {
		cfg.Compress = false // GoldSrc has no compressed form
	}
	s := &a2sServer{cfg: cfg, behavior: b, seed: uint64(seed), limit: [3]ipWindow{newIPWindow(), newIPWindow(), newIPWindow()}}
	s.secret = s.mix(1, 0)
	form := "Source"
	if cfg.GoldSrc {
		form = "GoldSrc"
	}
	s.name = "querylens demo A2S " + form + " #" + strconv.Itoa(int(s.mix(3, 0)%90+10))
	start := int(s.mix(4, 0) % uint64(len(ogpNames)))
	for i := range 14 {
		h := s.mix(100, uint64(i))
		p := a2sPlayer{
			name:   ogpNames[(start+i*3)%len(ogpNames)],
			period: int64(6+h%12) * 60,
			phase:  int64(h >> 8 % 3600),
			skill:  int32(1 + h>>32%8),
		}
		p.stay = p.period * int64(35+h>>48%55) / 100
		s.roster = append(s.roster, p)
	}
	msg, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: a2sRules()}) // fixed rules always encode
	id := uint32(s.mix(5, 0)) &^ 0x80000000
	switch {
	case cfg.Compress:
		s.rules, _ = a2s.SplitCompressed(msg, a2sRulesBzip2(), id, a2s.SplitSource, a2sSplitBody)
	case cfg.GoldSrc:
		s.rules, _ = a2s.SplitResponse(msg, id, a2s.SplitGoldSrc, a2sGoldSplit)
	default:
		s.rules, _ = a2s.SplitResponse(msg, id, a2s.SplitSource, a2sSplitBody)
	}
	return s
}

func (s *a2sServer) mix(a, b uint64) uint64 {
	return rand.NewPCG(s.seed^a*0x9e3779b97f4a7c15, b).Uint64()
}

// challenge is the number a client IP must send back during epoch (its
// port does not matter: a relay may ask again from another socket).
func (s *a2sServer) challenge(from netip.AddrPort, epoch int64) uint32 {
	ip := from.Addr().As16()
	h := s.secret
	for i, c := range ip {
		h ^= uint64(c) << (8 * (i % 8))
		h *= 0x100000001b3
	}
	c := uint32(rand.NewPCG(h, uint64(epoch)).Uint64())
	if c == 0 || c == a2s.ChallengeRequest {
		c = 1
	}
	return c
}

func (s *a2sServer) validChallenge(from netip.AddrPort, c uint32, now time.Time) bool {
	epoch := now.Unix() / a2sEpoch
	return c == s.challenge(from, epoch) || c == s.challenge(from, epoch-1)
}

// Respond answers one datagram from a client.
func (s *a2sServer) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if s.behavior == Silent {
		return nil
	}
	req, err := a2s.DecodeRequest(q)
	if err != nil {
		return nil
	}
	if s.cfg.OnlyInfo && req.Type != a2s.TypeInfoRequest {
		return nil
	}
	needs := req.Type != a2s.TypeInfoRequest || s.cfg.InfoChallenge
	if needs && (!req.HasChallenge || !s.validChallenge(from, req.Challenge, now)) {
		b, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: s.challenge(from, now.Unix()/a2sEpoch)})
		return [][]byte{b}
	}
	if s.behavior == RateLimit && !s.limit[a2sKind(req.Type)].admit(from.Addr(), now) {
		return nil
	}
	var out [][]byte
	switch req.Type {
	case a2s.TypeInfoRequest:
		out = s.whole(a2s.Response{Type: a2s.TypeInfo, Info: s.info(now)})
	case a2s.TypePlayerRequest:
		out = s.whole(a2s.Response{Type: a2s.TypePlayers, Players: s.players(now)})
	case a2s.TypeRulesRequest:
		out = make([][]byte, len(s.rules))
		copy(out, s.rules)
	}
	if s.behavior == Truncated {
		for i, b := range out {
			out[i] = b[:len(b)/2]
		}
	}
	return out
}

// a2sKind is the rate limit's index of a query type: a client gets one
// answer of each kind per window, so one whole conversation (INFO, PLAYER
// and RULES) goes through and the next within 10 s does not.
func a2sKind(t a2s.Type) int {
	switch t {
	case a2s.TypePlayerRequest:
		return 1
	case a2s.TypeRulesRequest:
		return 2
	}
	return 0
}

func (s *a2sServer) whole(a a2s.Response) [][]byte {
	b, err := a2s.AppendResponse(nil, a)
	if err != nil {
		return nil
	}
	return [][]byte{b}
}

// online returns the roster members connected at now and how long each
// has been, in seconds.
func (s *a2sServer) online(now time.Time) (in []a2sPlayer, secs []int64) {
	t := now.Unix()
	for _, p := range s.roster {
		if at := (t + p.phase) % p.period; at < p.stay {
			in = append(in, p)
			secs = append(secs, at)
		}
	}
	return in, secs
}

func (s *a2sServer) info(now time.Time) *a2s.Info {
	in, _ := s.online(now)
	n := uint8(min(len(in)+2+s.cfg.Connecting, a2sSlots))
	rot := now.Unix() / a2sMapSeconds
	if s.cfg.GoldSrc {
		return &a2s.Info{GoldSrc: true, Address: "127.0.0.1:" + strconv.Itoa(a2sGamePort), Name: s.name,
			Map: a2sGoldMaps[rot%int64(len(a2sGoldMaps))], Folder: "cstrike", Game: "Counter-Strike",
			Players: n, MaxPlayers: a2sSlots, Protocol: 48, ServerType: 'D', Environment: 'L', Mod: 1,
			ModInfo: a2s.ModInfo{Link: "http://example.org/cstrike", DownloadLink: "http://example.org/cstrike.zip",
				Version: 1, Size: 184 << 20, Type: 1, DLL: 1},
			VAC: 1, Bots: 2}
	}
	return &a2s.Info{Protocol: 17, Name: s.name, Map: a2sMaps[rot%int64(len(a2sMaps))], Folder: "tf",
		Game: "Team Fortress", AppID: a2sAppID, Players: n, MaxPlayers: a2sSlots, Bots: 2,
		ServerType: 'd', Environment: 'l', VAC: 1, Version: "9543365",
		HasEDF: true, EDF: a2s.EDFPort | a2s.EDFSteamID | a2s.EDFKeywords | a2s.EDFGameID,
		Port: a2sGamePort, SteamID: 90071992547409920 + s.mix(6, 0)%1000000, Keywords: "querylens,demo,cp",
		GameID: a2sAppID}
}

func (s *a2sServer) players(now time.Time) *a2s.Players {
	in, secs := s.online(now)
	p := &a2s.Players{}
	for i, x := range in {
		p.Players = append(p.Players, a2s.Player{Name: x.name, Score: int32(secs[i]/60) * x.skill, Duration: float32(secs[i])})
	}
	up := float32(now.Unix() % a2sMapSeconds)
	p.Players = append(p.Players, a2s.Player{Name: "BOT Alpha", Score: 3, Duration: up}, a2s.Player{Name: "BOT Beta", Score: 1, Duration: up})
	if len(p.Players) > a2sSlots {
		p.Players = p.Players[:a2sSlots]
	}
	p.Count = uint8(min(len(p.Players)+s.cfg.Connecting, a2sSlots))
	return p
}

// a2sRules is every emulated server's rules: fixed, so that the
// compressed form can be made once (a2s_bzip2.go), and large enough to
// need three Source datagrams.
func a2sRules() *a2s.Rules {
	base := [...][2]string{
		{"mp_timelimit", "30"}, {"mp_winlimit", "0"}, {"mp_maxrounds", "0"}, {"mp_friendlyfire", "0"},
		{"sv_gravity", "800"}, {"sv_cheats", "0"}, {"sv_alltalk", "0"}, {"sv_password", "0"},
		{"sv_tags", "querylens,demo,cp"}, {"tf_weapon_criticals", "1"}, {"nextlevel", ""}, {"coop", "0"},
	}
	r := &a2s.Rules{}
	for _, kv := range base {
		r.Rules = append(r.Rules, a2s.Rule{Name: kv[0], Value: kv[1]})
	}
	for i := range 140 {
		r.Rules = append(r.Rules, a2s.Rule{Name: "sm_demo_setting_" + strconv.Itoa(i), Value: strconv.Itoa(i * 37 % 1000)})
	}
	r.Count = uint16(len(r.Rules))
	return r
}

// a2sMaster is a Steam-like master: it answers the query '1' with the page
// of its list after the query's seed.
type a2sMaster struct {
	list     []a2s.Addr
	behavior Behavior
}

// NewA2SMaster returns a Steam-like master listing servers, a2s.MasterPageSize
// addresses a page, paged by the last address of the page before and
// ended with 0.0.0.0:0. The region and filter are read and not applied:
// every server listed is a demo server. Silent never answers.
func NewA2SMaster(servers []a2s.Addr, b Behavior) Handler {
	return &a2sMaster{list: append([]a2s.Addr(nil), servers...), behavior: b}
}

func (m *a2sMaster) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if m.behavior == Silent {
		return nil
	}
	req, err := a2s.DecodeMasterRequest(q)
	if err != nil {
		return nil
	}
	return [][]byte{a2s.MasterPage(nil, m.list, req.Seed)}
}
