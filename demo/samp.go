package demo

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/samp"
)

// SAMPFlavor is which server of the SA-MP family a demo server plays.
type SAMPFlavor uint8

const (
	SAMP037    SAMPFlavor = iota // SA-MP 0.3.7: the map as the info reply's third string, 'd' lists
	SAMPOpenMP                   // open.mp: its language there, allowed_clients and an omp version in the rules
	SAMPVCMP                     // Vice City: Multiplayer: VCMP/MP04, a version first in the info reply, no rules
)

var sampNames = [...]string{
	"Carl_Johnson", "Big_Smoke", "Ryder", "Sweet", "Cesar_Vialpando", "Catalina", "Kendl", "Zero",
	"Jizzy_B", "T-Bone_Mendez", "Mike_Toreno", "Wu_Zi_Mu", "Maccer", "Tenpenny", "OG_Loc",
}

var vcmpNames = [...]string{"Tommy_Vercetti", "Lance_Vance", "Ken_Rosenberg", "Sonny_Forelli", "Kent_Paul", "Phil_Cassidy", "Mercedes"}

// sampRegular and vcmpRegular never leave; their names are not ASCII, so
// that every answer carries Windows-1252 text.
const (
	sampRegular = "Jos\u00e9_\u00d1\u00fa\u00f1ez"
	vcmpRegular = "Ricardo_D\u00edaz"
)

// sampServer is an emulated server of the SA-MP family: its roster is a
// function of the seed and the clock, as Bloodmasters' is.
type sampServer struct {
	behavior Behavior
	flavor   SAMPFlavor
	seed     uint64
	info     samp.ServerInfo
	rules    []samp.Rule
	names    []string
	regular  string
}

// NewSAMP returns an emulated SA-MP, open.mp or VC:MP server, built with
// the samp encoder; its text is Windows-1252 (the name of a player who
// never leaves is not ASCII). Between 2 and 8 players are on at any time,
// one with a negative score. It honours Silent, Truncated (every reply cut
// in half) and two hostile behaviours: BadLength (the info reply's
// hostname length says 4 KiB more than follows) and BadCount (a player
// list, and the rules, count one more entry than they carry). Slow is the caller's to
// apply.
func NewSAMP(seed int64, f SAMPFlavor, b Behavior) Handler {
	s := &sampServer{behavior: b, flavor: f, seed: uint64(seed)}
	n := strconv.Itoa(int(bmMix(s.seed, 1)%90 + 10))
	s.names, s.regular = sampNames[:], sampRegular
	switch f {
	case SAMP037:
		s.info = samp.ServerInfo{MaxPlayers: 50, Hostname: "querylens demo SA-MP #" + n, Gamemode: "Grand Larceny", Language: "San Andreas"}
		s.rules = []samp.Rule{{Name: "lagcomp", Value: "On"}, {Name: "mapname", Value: "San Andreas"}, {Name: "version", Value: "0.3.7-R2"},
			{Name: "weather", Value: "10"}, {Name: "weburl", Value: "www.sa-mp.com"}, {Name: "worldtime", Value: "12:00"}}
	case SAMPOpenMP:
		s.info = samp.ServerInfo{MaxPlayers: 100, Hostname: "querylens demo open.mp #" + n, Gamemode: "Freeroam", Language: "Espa\u00f1ol"}
		s.rules = []samp.Rule{{Name: "allowed_clients", Value: "0.3.7, 0.3.DL"}, {Name: "artwork", Value: "No"}, {Name: "lagcomp", Value: "On"},
			{Name: "mapname", Value: "Los Santos"}, {Name: "version", Value: "omp 1.4.0.2779"}, {Name: "weather", Value: "1"},
			{Name: "weburl", Value: "open.mp"}, {Name: "worldtime", Value: "09:00"}}
	case SAMPVCMP:
		s.info = samp.ServerInfo{Version: "04rel006", MaxPlayers: 32, Hostname: "querylens demo VC:MP #" + n, Gamemode: "Deathmatch", Language: "Vice City"}
		s.names, s.regular = vcmpNames[:], vcmpRegular
	}
	s.info.Password = bmMix(s.seed, 2)%4 == 0
	return s
}

// players is who is on at now: the regular and 1 to 7 of the names, on a
// cycle of minutes.
func (s *sampServer) players(now time.Time) []samp.Player {
	minute := uint64(bmMod(now.Unix()/60, 1<<40))
	n := int(2 + (bmMix(s.seed, 3)+minute)%7)
	out := make([]samp.Player, 0, n)
	first := int(bmMix(s.seed, 4) % uint64(len(s.names)))
	for i := range n {
		h := bmMix(s.seed, uint64(100+i)+minute)
		score := int32(h % 500)
		if i == 1 {
			score = -score - 1 // scores are signed
		}
		name := s.regular
		if i > 0 {
			name = s.names[(first+i)%len(s.names)]
		}
		out = append(out, samp.Player{ID: uint8(i * 3), Name: name, Score: score, Ping: uint32(20 + h%180)})
	}
	return out
}

func (s *sampServer) Respond(q []byte, _ netip.AddrPort, now time.Time) [][]byte {
	req, err := samp.DecodeRequest(q)
	if err != nil || req.VCMP() != (s.flavor == SAMPVCMP) {
		return nil
	}
	players := s.players(now)
	resp := samp.Response{Header: samp.ReplyHeader(req.Header), Ping: req.Ping, Info: s.info, Rules: s.rules, Players: players}
	resp.Info.Players = uint16(len(players))
	switch req.Opcode {
	case samp.OpRules:
		if s.flavor == SAMPVCMP {
			return nil // VC:MP has no rules
		}
	case samp.OpClients, samp.OpDetailed:
		if len(players) >= samp.NoPlayerList {
			return nil
		}
	}
	out, err := samp.AppendResponse(nil, resp)
	if err != nil {
		return nil
	}
	switch {
	case s.behavior == Truncated:
		out = out[:len(out)/2]
	case s.behavior == BadLength && req.Opcode == samp.OpInfo:
		at := samp.HeaderLen + 5 // password, players, max
		if s.flavor == SAMPVCMP {
			at += samp.VCMPVersionLen
		}
		binary.LittleEndian.PutUint32(out[at:], binary.LittleEndian.Uint32(out[at:])+4096)
	case s.behavior == BadCount && (req.Opcode == samp.OpClients || req.Opcode == samp.OpDetailed):
		binary.LittleEndian.PutUint16(out[samp.HeaderLen:], uint16(len(players)+1))
	case s.behavior == BadCount && req.Opcode == samp.OpRules:
		// The rules too, which a server list asks.
		binary.LittleEndian.PutUint16(out[samp.HeaderLen:], uint16(len(s.rules)+1))
	}
	return [][]byte{out}
}
