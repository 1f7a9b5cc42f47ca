package demo

import (
	"math/rand/v2"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/zandronum"
	"github.com/querylens/querylens/huffman"
)

var (
	zanHostPrefixes = []string{"Doom Fest", "Frag Central", "Zan Duel Arena", "Classic Coop", "Hell Knights",
		"Midnight Rail", "Slaughter Club", "Old School", "Brutal Friday", "Cyber Den", "Pixel Gore", "Nuts Night"}
	zanMaps     = []string{"MAP01", "MAP07", "MAP11", "MAP15", "MAP29", "E1M1", "E2M4", "CTF01", "DUEL03", "D2DM05"}
	zanPWADs    = []string{"dwango5.wad", "zdcmp2.pk3", "skulltag_content.pk3", "brutalv21.pk3", "ctfmaps.pk3", "duel32.wad"}
	zanCountry  = []string{"USA", "DEU", "BRA", "POL", "FIN", "CAN", "RUS", "GBR", "XUN", "XIP"}
	playerNames = []string{"Alice", "\x1cDBob", "Crash", "Doomguy", "\x1c[Red]Ember", "Flynn Taggart", "Gorre",
		"Hexa", "Ivo", "Jinx", "Kaiser", "Lyra", "Mancubus", "Nyx", "Orion", "Pinky", "Quake", "Revenant",
		"Shade", "Tox", "Uzi", "Vex", "Wraith", "Xeno", "Yuki", "Zed"}
	teamNames  = []string{"Blue", "Red", "Green", "Gold"}
	teamColors = []uint32{0x0000ff, 0xff0000, 0x00ff00, 0xffd700}
)

// zanServer is an emulated Zandronum server: it answers launcher queries as
// SERVER_MASTER_SendServerInfo does, with the server's flag corrections,
// the per-IP query bar when rate-limiting, and segmented replies cut at a
// small sv_maxpacketsize on some servers.
type zanServer struct {
	seed      uint64
	idx       int
	name      string
	mode      zandronum.GameMode
	maxPacket int // sv_maxpacketsize for segmented replies
	pwads     []string
	country   string
	behavior  Behavior
	password  bool
	limit     ipWindow
}

// newZandronumServer returns server number i of a demo and the host name it
// reports.
func newZandronumServer(seed int64, i int, b Behavior) (Handler, string) {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
	s := &zanServer{
		seed:     uint64(seed)<<20 ^ uint64(i),
		idx:      i,
		mode:     zandronum.GameMode(r.IntN(16)),
		behavior: b,
		country:  zanCountry[r.IntN(len(zanCountry))],
		password: r.IntN(7) == 0,
		limit:    newIPWindow(),
	}
	info, _ := s.mode.Info()
	s.name = zanHostPrefixes[i%len(zanHostPrefixes)] + " #" + strconv.Itoa(i+1) + " | " + info.Short
	// Every fourth server cuts its replies small, so segmented replies
	// arrive in several datagrams.
	s.maxPacket = 1024
	if i%4 == 1 {
		s.maxPacket = 200
	}
	for n := r.IntN(4); n > 0; n-- {
		s.pwads = append(s.pwads, zanPWADs[r.IntN(len(zanPWADs))])
	}
	return s, s.name
}

func (s *zanServer) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	req, err := zandronum.DecodeRequest(q)
	if err != nil {
		return nil // the real server ignores unknown commands silently
	}
	if s.behavior == RateLimit {
		if !s.limit.admit(from.Addr(), now) {
			p, _ := zandronum.AppendResponse(nil, zandronum.Response{Code: zandronum.CodeIgnored, Time: req.Time})
			return [][]byte{p}
		}
	}
	resp := s.state(req, now)
	if req.Segmented {
		out, err := zandronum.AppendSegmented(nil, resp, s.maxPacket)
		if err != nil {
			return nil
		}
		return s.cut(out)
	}
	out, err := zandronum.AppendResponse(nil, resp)
	if err != nil {
		return nil
	}
	return s.cut([][]byte{out})
}

// cut shortens the replies of a Truncated server: the payload loses its
// last third, as if the datagram had been clipped before encoding.
func (s *zanServer) cut(out [][]byte) [][]byte {
	if s.behavior != Truncated {
		return out
	}
	for i, d := range out {
		p, err := huffman.Decode(nil, d)
		if err != nil || len(p) < 12 {
			continue
		}
		out[i] = huffman.Encode(nil, p[:len(p)*2/3])
	}
	return out
}

// state builds the reply to req as of now: the flags corrected the way the
// server corrects them (docs/protocols/zandronum.md 2.5), and the players of the current
// moment.
func (s *zanServer) state(req zandronum.Request, now time.Time) zandronum.Response {
	info, _ := s.mode.Info()
	epoch := uint64(now.Unix() / 20) // players come and go every 20 s
	r := rand.New(rand.NewPCG(s.seed, epoch))
	maxPlayers := 8 + 2*(s.idx%5)
	n := r.IntN(maxPlayers + 1)
	if s.idx%6 == 0 {
		n = 0 // some servers are empty
	}
	resp := zandronum.Response{
		Code:    zandronum.CodeAccepted,
		Time:    req.Time,
		Version: "3.2.1-r230709-1914 on Linux 6.1.0-18-amd64",
		Name:    s.name, URL: "https://wads.example.org/", Email: "admin@example.org",
		Map:        zanMaps[(s.idx+int(epoch/3))%len(zanMaps)],
		MaxClients: uint8(maxPlayers + 4), MaxPlayers: uint8(maxPlayers),
		PWADs: s.pwads, GameMode: s.mode, GameName: "DOOM II", IWAD: "doom2.wad",
		Skill: 3, BotSkill: 2,
		Limits:     zandronum.Limits{FragLimit: 30, TimeLimit: uint16(20 * (s.idx % 2)), TimeLeft: uint16(r.IntN(20)), PointLimit: 5, WinLimit: 3},
		TeamDamage: 0.5, TeamByte: info.OnTeams,
		AllDMFlags:   []uint32{4, 0, 0, 0, 0, 0},
		Country:      s.country,
		GameModeName: info.Name, GameModeShort: info.Short,
		DEH: nil,
	}
	if s.password {
		resp.ForcePassword = 1
	}
	for k := 0; k < len(s.pwads); k++ {
		resp.PWADHashes = append(resp.PWADHashes, "0123456789abcdef0123456789abcdef")
	}
	teams := 0
	if info.OnTeams {
		teams = 2
		for t := 0; t < teams; t++ {
			resp.Teams = append(resp.Teams, zandronum.Team{Name: teamNames[t], Color: teamColors[t], Score: int16(r.IntN(5))})
		}
		resp.NumTeams = uint8(teams)
		resp.TeamScores = [2]int16{resp.Teams[0].Score, resp.Teams[1].Score}
	}
	for p := 0; p < n; p++ {
		pl := zandronum.Player{
			Name:    playerNames[(s.idx*7+p)%len(playerNames)],
			Score:   int16(r.IntN(40) - 2),
			Ping:    uint16(20 + r.IntN(180)),
			Minutes: uint8(r.IntN(90)),
			Team:    zandronum.NoTeam,
		}
		if p%5 == 4 {
			pl.Bot = 1
			pl.Ping = 0
		}
		if p == n-1 && n > 3 {
			pl.Spectator = 1
		}
		if teams > 0 && pl.Spectator == 0 {
			pl.Team = uint8(p % teams)
		}
		resp.Players = append(resp.Players, pl)
	}
	resp.NumPlayers = uint8(len(resp.Players))

	// The server's corrections (docs/protocols/zandronum.md 2.5): this server has no
	// optional WADs and no DeHackEd patches.
	resp.Flags, resp.Flags2 = zandronum.CorrectFlags(req.Flags, req.Flags2, s.mode, false, false)
	return resp
}

// zanMaster is an emulated Zandronum master server listing the demo's
// servers, with the master's per-IP bar: a second request within 10 s gets
// MSC_REQUESTIGNORED once, then silence for 3 s (docs/protocols/zandronum.md 3.3).
type zanMaster struct {
	servers []zandronum.Addr
	last    map[netip.Addr]time.Time
	ignored map[netip.Addr]time.Time
}

func newZandronumMaster(listed []netip.AddrPort) Handler {
	m := &zanMaster{last: map[netip.Addr]time.Time{}, ignored: map[netip.Addr]time.Time{}}
	for _, ap := range listed {
		if ap.Addr().Is4() {
			m.servers = append(m.servers, zandronum.Addr{IP: ap.Addr().As4(), Port: ap.Port()})
		}
	}
	return m
}

func (m *zanMaster) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	req, err := zandronum.DecodeMasterRequest(q)
	if err != nil {
		return nil
	}
	ip := from.Addr()
	if t, ok := m.ignored[ip]; ok && now.Sub(t) < 3*time.Second {
		return nil
	}
	if t, ok := m.last[ip]; ok && now.Sub(t) < rateWindow {
		m.ignored[ip] = now
		return [][]byte{zandronum.AppendMasterDenied(nil, zandronum.MasterIgnored)}
	}
	m.last[ip] = now
	if req.Command == zandronum.ServerChallenge {
		return [][]byte{zandronum.AppendLegacyMasterList(nil, m.servers)}
	}
	if req.Version != zandronum.MasterVersion {
		return [][]byte{zandronum.AppendMasterDenied(nil, zandronum.MasterWrongVersion)}
	}
	return zandronum.AppendMasterList(nil, m.servers)
}
