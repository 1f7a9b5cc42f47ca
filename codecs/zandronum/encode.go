package zandronum

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// AppendResponse appends the datagram of reply resp (Huffman layer
// included) to dst. See AppendResponsePayload.
func AppendResponse(dst []byte, resp Response) ([]byte, error) {
	s := getScratch()
	defer putScratch(s)
	p, err := AppendResponsePayload(s.buf[:0], resp)
	s.buf = p[:0]
	if err != nil {
		return dst, err
	}
	return wrap(dst, p), nil
}

// AppendResponsePayload appends the plain payload of resp to dst, as a
// server writes it: for CodeAccepted (or 0) the code, time, version, flags
// and exactly the fields the flags name, in bit order; for CodeIgnored and
// CodeBanned the code and time. Trailing is appended as is. Errors are
// *codecs.Error naming the field and its offset in the payload.
func AppendResponsePayload(dst []byte, resp Response) ([]byte, error) {
	e := encoder{b: dst, start: len(dst)}
	switch resp.Code {
	case CodeIgnored, CodeBanned:
		e.u32(resp.Code)
		e.u32(resp.Time)
		e.b = append(e.b, resp.Trailing...)
		return e.b, nil
	case 0, CodeAccepted:
		e.u32(CodeAccepted)
		e.body(&resp)
	case CodeSegmented:
		e.fail("response", codecs.Detail(codecs.ErrBadValue, "a segmented reply is built with AppendSegmented"))
	default:
		e.fail("response", codecs.Detail(codecs.ErrUnknownCode, strconv.FormatUint(uint64(resp.Code), 10)))
	}
	if e.err != nil {
		return dst, e.err
	}
	return e.b, nil
}

// encoder appends fields; its first error sticks.
type encoder struct {
	b     []byte
	start int // offset of the payload in b
	err   error
}

func (e *encoder) fail(field string, err error) {
	if e.err == nil {
		e.err = newError(field, len(e.b)-e.start, "", err)
	}
}

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }

// str appends s as Latin-1 with its terminator. A NUL inside s would end
// the string early, so it is an error.
func (e *encoder) str(field, s string) { e.strAt(field, -1, "", s) }

// strAt is str for element i of list (i >= 0), or its member sub
// ("players[2].name"); the path is built only for an error.
func (e *encoder) strAt(list string, i int, sub, s string) {
	for j := 0; j < len(s); j++ {
		if s[j] == 0 {
			field := list
			if i >= 0 {
				field += wire.Msg("[%d]", int64(i))
			}
			if sub != "" {
				field += "." + sub
			}
			e.fail(field, codecs.Detail(codecs.ErrBadValue, "NUL inside a string"))
			return
		}
	}
	e.b = codecs.ToLatin1(e.b, s)
	e.b = append(e.b, 0)
}

// count appends a BYTE count, which must fit.
func (e *encoder) count(field string, n int) bool {
	if n > 255 {
		e.fail(field, wire.Detailf(codecs.ErrTooLong, "%d entries, at most 255", int64(n)))
		return false
	}
	e.u8(uint8(n))
	return true
}

func (e *encoder) strings(field string, v []string) {
	if !e.count(field, len(v)) {
		return
	}
	for i, s := range v {
		e.strAt(field, i, "", s)
	}
}

// body appends a reply from the time on (what segments carry).
func (e *encoder) body(r *Response) {
	e.u32(r.Time)
	e.str("version", r.Version)
	e.u32(uint32(r.Flags))
	for bit := range 31 {
		if r.Flags&(1<<bit) != 0 && e.err == nil {
			e.field(r, bit)
		}
	}
	if r.Flags&SQF_EXTENDED_INFO != 0 && e.err == nil {
		e.u32(uint32(r.Flags2))
		for bit := range 5 {
			if r.Flags2&(1<<bit) != 0 && e.err == nil {
				e.field2(r, bit)
			}
		}
	}
	e.b = append(e.b, r.Trailing...)
}

// teamCount is the number of entries each TEAMINFO list must have.
func (e *encoder) teams(field string, r *Response) bool {
	if r.Flags&SQF_TEAMINFO_NUMBER != 0 && len(r.Teams) != int(r.NumTeams) {
		e.fail(field, wire.Detailf(codecs.ErrBadValue, "%d teams but numteams %d", int64(len(r.Teams)), int64(r.NumTeams)))
		return false
	}
	return true
}

// field appends the field of SQF flag 1<<bit, mirroring body.field.
func (e *encoder) field(r *Response, bit int) {
	switch bit {
	case 0:
		e.str("name", r.Name)
	case 1:
		e.str("url", r.URL)
	case 2:
		e.str("email", r.Email)
	case 3:
		e.str("map", r.Map)
	case 4:
		e.u8(r.MaxClients)
	case 5:
		e.u8(r.MaxPlayers)
	case 6:
		e.strings("pwads", r.PWADs)
	case 7:
		e.u8(uint8(r.GameMode))
		e.u8(r.Instagib)
		e.u8(r.Buckshot)
	case 8:
		e.str("gamename", r.GameName)
	case 9:
		e.str("iwad", r.IWAD)
	case 10:
		e.u8(r.ForcePassword)
	case 11:
		e.u8(r.ForceJoinPassword)
	case 12:
		e.u8(r.Skill)
	case 13:
		e.u8(r.BotSkill)
	case 14:
		for _, v := range r.DMFlags {
			e.u32(v)
		}
	case 16:
		l := &r.Limits
		e.u16(l.FragLimit)
		e.u16(l.TimeLimit)
		if l.TimeLimit != 0 {
			e.u16(l.TimeLeft)
		}
		e.u16(l.DuelLimit)
		e.u16(l.PointLimit)
		e.u16(l.WinLimit)
	case 17:
		e.u32(math.Float32bits(r.TeamDamage))
	case 18:
		for _, v := range r.TeamScores {
			e.u16(uint16(v))
		}
	case 19:
		e.u8(r.NumPlayers)
	case 20:
		n := len(r.Players)
		if r.Flags&SQF_NUMPLAYERS == 0 {
			e.fail("players", codecs.Detail(codecs.ErrBadValue, "player data without SQF_NUMPLAYERS"))
			return
		}
		// One record fewer than numplayers is what a server with an
		// invisible spectator sends; anything else cannot be decoded.
		if n != int(r.NumPlayers) && n+1 != int(r.NumPlayers) {
			e.fail("players", wire.Detailf(codecs.ErrBadValue, "%d players but numplayers %d", int64(n), int64(r.NumPlayers)))
			return
		}
		for i := range r.Players {
			p := &r.Players[i]
			e.strAt("players", i, "name", p.Name)
			e.u16(uint16(p.Score))
			e.u16(p.Ping)
			e.u8(p.Spectator)
			e.u8(p.Bot)
			if r.TeamByte {
				e.u8(p.Team)
			}
			e.u8(p.Minutes)
		}
	case 21:
		e.u8(r.NumTeams)
	case 22:
		if e.teams("team_names", r) {
			for i, t := range r.Teams {
				e.strAt("team_names", i, "", t.Name)
			}
		}
	case 23:
		if e.teams("team_colors", r) {
			for _, t := range r.Teams {
				e.u32(t.Color)
			}
		}
	case 24:
		if e.teams("team_scores", r) {
			for _, t := range r.Teams {
				e.u16(uint16(t.Score))
			}
		}
	case 25:
		e.u8(r.Testing)
		e.str("testing_name", r.TestingName)
	case 26:
		e.str("data_md5sum", r.DataMD5Sum)
	case 27:
		if e.count("all_dmflags", len(r.AllDMFlags)) {
			for _, v := range r.AllDMFlags {
				e.u32(v)
			}
		}
	case 28:
		e.u8(r.Security)
	case 29:
		if e.count("optional_wads", len(r.OptionalWADs)) {
			e.b = append(e.b, r.OptionalWADs...)
		}
	case 30:
		e.strings("deh", r.DEH)
	}
}

// field2 appends the field of SQF2 flag 1<<bit, mirroring body.field2.
func (e *encoder) field2(r *Response, bit int) {
	switch bit {
	case 0:
		e.strings("sqf2.pwad_hashes", r.PWADHashes)
	case 1:
		n := len(e.b)
		e.b = codecs.ToLatin1(e.b, r.Country)
		if len(e.b)-n != 3 {
			e.b = e.b[:n]
			e.fail("sqf2.country", codecs.Detail(codecs.ErrBadValue, "country "+strconv.Quote(r.Country)+" is not 3 characters"))
		}
	case 2:
		e.str("sqf2.gamemode_name", r.GameModeName)
	case 3:
		e.str("sqf2.gamemode_shortname", r.GameModeShort)
	case 4:
		e.u8(r.VoiceChat)
	}
}
