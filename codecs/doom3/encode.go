package doom3

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends the getInfo query q to dst.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	if len(q.Tail) > 8 {
		return dst, newError("tail", 0, "", codecs.Detail(codecs.ErrTooLong, "at most 8 bytes after the challenge"))
	}
	dst = append(dst, Magic...)
	dst = append(dst, CmdGetInfo...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, q.Challenge)
	if q.HasSecond {
		dst = binary.LittleEndian.AppendUint32(dst, q.Second)
	} else if len(q.Tail) >= 4 {
		return dst, newError("tail", 0, "", codecs.Detail(codecs.ErrBadValue, "four bytes or more after one challenge read as a second one"))
	}
	return append(dst, q.Tail...), nil
}

// AppendResponse appends the infoResponse r, in the layout of r.Game
// (GameAuto: the game of r's version, as GuessGame reads it), to dst.
// Text is written as Latin-1.
func AppendResponse(dst []byte, r Response) ([]byte, error) {
	g := r.Game
	if g == GameAuto {
		g = gameOfVersion(r.Major)
	}
	if g >= gameCount {
		return dst, newError("game", 0, "", codecs.Detail(codecs.ErrBadValue, "unknown game "+strconv.Itoa(int(g))))
	}
	v := uint32(r.Major)<<16 | uint32(r.Minor)
	dst = append(dst, Magic...)
	dst = append(dst, CmdInfoResponse...)
	dst = append(dst, 0)
	if g == GameETQW {
		dst = binary.LittleEndian.AppendUint32(dst, r.TaskID)
	}
	dst = binary.LittleEndian.AppendUint32(dst, r.Challenge)
	dst = binary.LittleEndian.AppendUint32(dst, v)
	if g == GameETQW {
		dst = binary.LittleEndian.AppendUint32(dst, r.Size)
	}
	for i, kv := range r.Vars {
		if kv.Key == "" && kv.Value == "" {
			return dst, newError("vars["+strconv.Itoa(i)+"]", len(dst), "", codecs.Detail(codecs.ErrBadValue, "an empty pair ends the list"))
		}
		if hasNUL(kv.Key) || hasNUL(kv.Value) {
			return dst, nulError("vars["+strconv.Itoa(i)+"]", len(dst))
		}
		dst = appendString(dst, kv.Key)
		dst = appendString(dst, kv.Value)
	}
	dst = append(dst, 0, 0)
	end := uint8(maxPlayersListed)
	if g == GameWolf && r.End == maxPlayersListed/2 {
		end = r.End
	}
	if len(r.Players) > maxPlayersListed {
		return dst, newError("players", len(dst), "", codecs.Detail(codecs.ErrTooLong, "at most 32 players"))
	}
	for i, p := range r.Players {
		if p.ID >= maxPlayersListed || g == GameWolf && p.ID == maxPlayersListed/2 {
			return dst, newError("players["+strconv.Itoa(i)+"].id", len(dst), "", codecs.Detail(codecs.ErrBadValue, "id "+strconv.Itoa(int(p.ID))+" ends the list"))
		}
		if hasNUL(p.Name) || hasNUL(p.Clan) {
			return dst, nulError("players["+strconv.Itoa(i)+"]", len(dst))
		}
		dst = append(dst, p.ID)
		dst = binary.LittleEndian.AppendUint16(dst, p.Ping)
		if hasRate(g, v) {
			dst = binary.LittleEndian.AppendUint32(dst, p.Rate)
		}
		dst = appendString(dst, p.Name)
		if hasClanPos(g, v) {
			dst = append(dst, p.ClanPos)
		}
		if hasClan(g, v) {
			dst = appendString(dst, p.Clan)
		}
		if hasBot(g) {
			dst = append(dst, p.Bot)
		}
	}
	dst = append(dst, end)
	dst = binary.LittleEndian.AppendUint32(dst, r.OSMask)
	if g == GameETQW {
		dst = append(dst, r.Ranked)
		dst = binary.LittleEndian.AppendUint32(dst, r.TimeLeft)
		dst = append(dst, r.GameState, r.ServerType)
		switch r.ServerType {
		case ServerRegular:
			dst = append(dst, r.Interested)
		case ServerTV:
			dst = binary.LittleEndian.AppendUint32(dst, r.Connected)
			dst = binary.LittleEndian.AppendUint32(dst, r.MaxTV)
		}
	}
	return append(dst, r.Trailing...), nil
}

// gameOfVersion is the game a protocol major number belongs to, as
// GuessGame reads it.
func gameOfVersion(major uint16) Game {
	switch {
	case major == 2:
		return GameQuake4
	case major == 3 || major == 4:
		return GamePrey
	case major >= 10 && major <= 15:
		return GameETQW
	}
	return GameDoom3
}

// appendString appends s as Latin-1 and its NUL.
func appendString(dst []byte, s string) []byte {
	return append(codecs.ToLatin1(dst, s), 0)
}

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// nulError is the error of a string with a NUL inside, which would end it
// early, in the record at field.
func nulError(field string, off int) error {
	return newError(field, off, "", codecs.Detail(codecs.ErrBadValue, "a NUL inside the text"))
}
