package quake2

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends the query datagram of q to dst.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	p := q.Dialect.Protocol()
	switch {
	case q.Command == CmdStatus:
		dst = append(dst, Magic...)
		if q.Dialect == Hexen2 {
			dst = append(dst, 0xff)
		}
		dst = append(dst, CmdStatus...)
		if q.Flags != "" {
			for i := 0; i < len(q.Flags); i++ {
				if q.Flags[i] <= ' ' || q.Flags[i] >= 0x7f {
					return dst, codecs.NewError(p, "flags", i, codecs.Detail(codecs.ErrBadValue, strconv.Quote(q.Flags)+" is not one printable word"))
				}
			}
			dst = append(append(dst, ' '), q.Flags...)
		}
	case q.Command == CmdQWList && q.Dialect == QuakeWorld, q.Command == CmdQ2List && q.Dialect == Quake2:
		if q.Flags != "" {
			return dst, codecs.NewError(p, "flags", 0, codecs.Detail(codecs.ErrBadValue, "a master query takes no argument"))
		}
		dst = append(dst, q.Command...)
	default:
		return dst, codecs.NewError(p, "command", 0, codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(q.Command)+" is not a query of "+p))
	}
	switch q.End {
	case "", "\n", "\x00", "\n\x00":
		return append(dst, q.End...), nil
	}
	return dst, codecs.NewError(p, "end", len(dst), codecs.Detail(codecs.ErrBadValue, "a query ends with nothing, a newline, a NUL or both"))
}

// AppendResponse appends the reply datagram of resp to dst, as a server
// or master sends it (the demo servers and the tests use it). Keys and
// values hold no '\', newline or NUL; names, skins and addresses no quote
// and no newline. Text is written as Latin-1, so each code point up to
// U+00FF is one byte (the Quake characters kept).
func AppendResponse(dst []byte, resp Response) ([]byte, error) {
	d := resp.Dialect
	p := d.Protocol()
	dst = append(dst, Magic...)
	if d == Hexen2 {
		dst = append(dst, 0xff)
	}
	if resp.Master {
		if d == Hexen2 {
			return dst, codecs.NewError(p, "header", 0, codecs.Detail(codecs.ErrBadValue, "HexenWorld's masters are not supported"))
		}
		dst = append(dst, header(d, true)...)
		if d == Quake2 {
			if resp.Sep != ' ' && resp.Sep != '\n' {
				return dst, codecs.NewError(p, "header", 0, codecs.Detail(codecs.ErrBadValue, "the separator is a space or a newline"))
			}
			dst = append(dst, resp.Sep)
		}
		for _, s := range resp.Servers {
			dst = binary.BigEndian.AppendUint16(append(dst, s.IP[:]...), s.Port)
		}
		return dst, nil
	}
	dst = append(dst, header(d, false)...)
	for i, v := range resp.Vars {
		if strings.ContainsAny(v.Key, "\\\n\x00") || strings.ContainsAny(v.Value, "\\\n\x00") {
			return dst, codecs.NewError(p, "vars["+strconv.Itoa(i)+"]", 0, codecs.Detail(codecs.ErrBadValue, "a serverinfo holds no '\\', newline or NUL"))
		}
		dst = codecs.ToLatin1(append(dst, '\\'), v.Key)
		dst = codecs.ToLatin1(append(dst, '\\'), v.Value)
	}
	dst = append(dst, '\n')
	for i, pl := range resp.Players {
		for _, s := range [...]string{pl.Name, pl.Skin, pl.Address, pl.Team} {
			if strings.ContainsAny(s, "\"\n") {
				return dst, codecs.NewError(p, "players["+strconv.Itoa(i)+"]", 0, codecs.Detail(codecs.ErrBadValue, "a player's text holds no quote and no newline"))
			}
		}
		if d == Quake2 {
			dst = strconv.AppendInt(dst, int64(pl.Score), 10)
			dst = strconv.AppendInt(append(dst, ' '), int64(pl.Ping), 10)
			dst = appendQuoted(append(dst, ' '), pl.Name)
			if pl.HasAddress {
				dst = appendQuoted(append(dst, ' '), pl.Address)
			}
		} else {
			for _, n := range [...]int{pl.ID, pl.Score, pl.Time, pl.Ping} {
				dst = append(strconv.AppendInt(dst, int64(n), 10), ' ')
			}
			dst = appendQuoted(dst, pl.Name)
			dst = appendQuoted(append(dst, ' '), pl.Skin)
			dst = strconv.AppendInt(append(dst, ' '), int64(pl.Top), 10)
			dst = strconv.AppendInt(append(dst, ' '), int64(pl.Bottom), 10)
			if pl.HasTeam {
				dst = appendQuoted(append(dst, ' '), pl.Team)
			}
		}
		dst = append(dst, '\n')
	}
	if resp.Nul {
		dst = append(dst, 0)
	}
	return dst, nil
}

func appendQuoted(dst []byte, s string) []byte {
	return append(codecs.ToLatin1(append(dst, '"'), s), '"')
}
