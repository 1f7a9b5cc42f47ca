package a2s

import (
	"encoding/binary"
	"math"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends query q to dst. PLAYER and RULES always carry a
// challenge: without one (HasChallenge false) they ask for one with
// ChallengeRequest.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint32(dst, headerSingle)
	switch q.Type {
	case TypeInfoRequest:
		dst = append(append(dst, byte(q.Type)), InfoPayload...)
		dst = append(dst, 0)
		if q.HasChallenge {
			dst = binary.LittleEndian.AppendUint32(dst, q.Challenge)
		}
	case TypePlayerRequest, TypeRulesRequest:
		c := q.Challenge
		if !q.HasChallenge {
			c = ChallengeRequest
		}
		dst = binary.LittleEndian.AppendUint32(append(dst, byte(q.Type)), c)
	default:
		return dst, newDetailf("type", 4, "", codecs.ErrUnknownCode, "query type %d", int64(q.Type))
	}
	return dst, nil
}

// AppendResponse appends whole message a (starting FF FF FF FF) to dst; a
// server splits it with SplitResponse when it is too large for one
// datagram. Strings holding a NUL are refused.
func AppendResponse(dst []byte, a Response) ([]byte, error) {
	e := encoder{b: binary.LittleEndian.AppendUint32(dst, headerSingle)}
	e.b = append(e.b, byte(a.Type))
	switch {
	case a.Type == TypeChallenge:
		e.b = binary.LittleEndian.AppendUint32(e.b, a.Challenge)
	case a.Type == TypeInfo && a.Info != nil:
		e.info(a.Info)
	case a.Type == TypeInfoGoldSrc && a.Info != nil:
		e.infoGoldSrc(a.Info)
	case a.Type == TypePlayers && a.Players != nil:
		e.players(a.Players)
	case a.Type == TypeRules && a.Rules != nil:
		e.b = binary.LittleEndian.AppendUint16(e.b, a.Rules.Count)
		for _, r := range a.Rules.Rules {
			e.str("rules.name", r.Name)
			e.str("rules.value", r.Value)
		}
	default:
		return dst, newDetailf("type", 4, "", codecs.ErrBadValue, "reply type %d without its body", int64(a.Type))
	}
	if e.err != nil {
		return dst, e.err
	}
	return e.b, nil
}

type encoder struct {
	b   []byte
	err error
}

func (e *encoder) str(field, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 && e.err == nil {
			e.err = newDetail(field, len(e.b)+i, "", codecs.ErrBadValue, "a NUL inside a string")
		}
	}
	e.b = append(append(e.b, s...), 0)
}

func (e *encoder) info(in *Info) {
	e.b = append(e.b, in.Protocol)
	e.str("name", in.Name)
	e.str("map", in.Map)
	e.str("folder", in.Folder)
	e.str("game", in.Game)
	e.b = binary.LittleEndian.AppendUint16(e.b, in.AppID)
	e.b = append(e.b, in.Players, in.MaxPlayers, in.Bots, in.ServerType, in.Environment, in.Visibility, in.VAC)
	if in.AppID == ShipAppID {
		e.b = append(e.b, in.Ship.Mode, in.Ship.Witnesses, in.Ship.Duration)
	}
	e.str("version", in.Version)
	if !in.HasEDF {
		return
	}
	e.b = append(e.b, in.EDF)
	if in.EDF&EDFPort != 0 {
		e.b = binary.LittleEndian.AppendUint16(e.b, in.Port)
	}
	if in.EDF&EDFSteamID != 0 {
		e.b = binary.LittleEndian.AppendUint64(e.b, in.SteamID)
	}
	if in.EDF&EDFSourceTV != 0 {
		e.b = binary.LittleEndian.AppendUint16(e.b, in.SourceTVPort)
		e.str("sourcetv_name", in.SourceTVName)
	}
	if in.EDF&EDFKeywords != 0 {
		e.str("keywords", in.Keywords)
	}
	if in.EDF&EDFGameID != 0 {
		e.b = binary.LittleEndian.AppendUint64(e.b, in.GameID)
	}
}

func (e *encoder) infoGoldSrc(in *Info) {
	e.str("address", in.Address)
	e.str("name", in.Name)
	e.str("map", in.Map)
	e.str("folder", in.Folder)
	e.str("game", in.Game)
	e.b = append(e.b, in.Players, in.MaxPlayers, in.Protocol, in.ServerType, in.Environment, in.Visibility, in.Mod)
	if in.Mod == 1 {
		m := &in.ModInfo
		e.str("mod.link", m.Link)
		e.str("mod.download_link", m.DownloadLink)
		e.b = append(e.b, m.Null)
		e.b = binary.LittleEndian.AppendUint32(e.b, m.Version)
		e.b = binary.LittleEndian.AppendUint32(e.b, m.Size)
		e.b = append(e.b, m.Type, m.DLL)
	}
	e.b = append(e.b, in.VAC, in.Bots)
}

func (e *encoder) players(p *Players) {
	e.b = append(e.b, p.Count)
	for _, x := range p.Players {
		e.b = append(e.b, x.Index)
		e.str("players.name", x.Name)
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(x.Score))
		e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(x.Duration))
	}
	if p.Ship && len(p.Players) > 0 {
		for _, x := range p.Players {
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(x.Deaths))
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(x.Money))
		}
	}
}

// AppendMasterRequest appends a Steam master query for the page after
// q.Seed.
func AppendMasterRequest(dst []byte, q MasterRequest) ([]byte, error) {
	if len(q.Filter) > maxFilter {
		return dst, newDetailf("filter", 0, "", codecs.ErrTooLong, "%d bytes, at most %d", int64(len(q.Filter)), maxFilter)
	}
	for i := 0; i < len(q.Filter); i++ {
		if c := q.Filter[i]; c < 0x20 || c > 0x7e {
			return dst, newDetailf("filter", i, "", codecs.ErrBadValue, "byte %d is not printable", int64(c))
		}
	}
	dst = append(dst, MasterQuery, byte(q.Region))
	dst = append(q.Seed.AppendTo(dst), 0)
	return append(append(dst, q.Filter...), 0), nil
}

// AppendMasterReply appends one page of a master's reply: the header, then
// servers, then 0.0.0.0:0 when end is true (the list is complete).
func AppendMasterReply(dst []byte, servers []Addr, end bool) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, headerSingle)
	dst = append(dst, MasterReply, masterReplyEnd)
	for _, a := range servers {
		dst = append(dst, a.IP[:]...)
		dst = binary.BigEndian.AppendUint16(dst, a.Port)
	}
	if end {
		dst = append(dst, 0, 0, 0, 0, 0, 0)
	}
	return dst
}

// MasterPageSize is how many addresses a Steam master puts in one page
// (231 entries of 6 bytes fill 1392 bytes).
const MasterPageSize = 231

// MasterPage returns the reply a master gives to a query seeded with seed,
// out of its whole list: the servers after seed (from the start when seed
// is 0.0.0.0:0, or not in the list), at most MasterPageSize of them, ended
// by 0.0.0.0:0 when they are the last.
func MasterPage(dst []byte, list []Addr, seed Addr) []byte {
	from := 0
	if !seed.IsZero() {
		for i, a := range list {
			if a == seed {
				from = i + 1
				break
			}
		}
	}
	to := min(len(list), from+MasterPageSize)
	return AppendMasterReply(dst, list[from:to], to == len(list))
}
