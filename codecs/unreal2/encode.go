package unreal2

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends query q: its version (RequestVersion when zero)
// and type.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	v := q.Version
	if v == 0 {
		v = RequestVersion
	}
	if !knownVersion(v) {
		return dst, newError("version", 0, "", codecs.Detail(codecs.ErrBadMagic, "no version qstat knows"))
	}
	if q.Type > TypeRulesPlayers {
		return dst, newError("type", 4, "", codecs.Detail(codecs.ErrUnknownCode, "a query's type is 0 to 3"))
	}
	return append(binary.LittleEndian.AppendUint32(dst, v), q.Type), nil
}

// AppendResponse appends reply datagram resp: the fields of its Type, the
// server-info tail in its Dialect. What does not fit one datagram is the
// caller's to split (Split).
func AppendResponse(dst []byte, resp Response) ([]byte, error) {
	v := resp.Version
	if v == 0 {
		v = VersionUT2004
	}
	if !knownVersion(v) {
		return dst, newError("version", 0, "", codecs.Detail(codecs.ErrBadMagic, "no version qstat knows"))
	}
	if resp.Type > TypePlayers {
		return dst, newError("type", 4, "", codecs.Detail(codecs.ErrUnknownCode, "a type is 0, 1 or 2"))
	}
	b := append(binary.LittleEndian.AppendUint32(dst, v), resp.Type)
	var err error
	switch resp.Type {
	case TypeInfo:
		in := &resp.Info
		b = binary.LittleEndian.AppendUint32(b, in.ServerID)
		b, err = appendString(b, in.IP, "info.ip", err)
		b = binary.LittleEndian.AppendUint32(b, in.GamePort)
		b = binary.LittleEndian.AppendUint32(b, in.QueryPort)
		b, err = appendString(b, in.Name, "info.name", err)
		b, err = appendString(b, in.Map, "info.map", err)
		b, err = appendString(b, in.GameType, "info.game_type", err)
		b = binary.LittleEndian.AppendUint32(b, in.NumPlayers)
		b = binary.LittleEndian.AppendUint32(b, in.MaxPlayers)
		if in.Dialect == DialectKillingFloor {
			b = binary.LittleEndian.AppendUint32(b, in.WaveCurrent)
			b = binary.LittleEndian.AppendUint32(b, in.WaveTotal)
		}
		if in.HasPing || in.Dialect != DialectUT2003 {
			b = binary.LittleEndian.AppendUint32(b, in.Ping)
		}
		if in.Dialect != DialectUT2003 {
			b = binary.LittleEndian.AppendUint32(b, in.Flags)
			b, err = appendString(b, in.Skill, "info.skill", err)
		}
		b = append(b, in.Extra...)
	case TypeRules:
		for _, p := range resp.Rules {
			b, err = appendString(b, p.Key, "rules.key", err)
			b, err = appendString(b, p.Value, "rules.value", err)
		}
	case TypePlayers:
		for _, p := range resp.Players {
			b = binary.LittleEndian.AppendUint32(b, p.ID)
			b, err = appendString(b, p.Name, "players.name", err)
			b = binary.LittleEndian.AppendUint32(b, p.Ping)
			b = binary.LittleEndian.AppendUint32(b, uint32(p.Score))
			b = binary.LittleEndian.AppendUint32(b, p.StatsID)
		}
	}
	if err != nil {
		return dst, err
	}
	return b, nil
}

// appendString appends s: Latin-1 of at most 127 bytes with its
// terminator, or UCS-2 of at most 127 code units, its colour codes put
// back where they stood. The first error sticks (err in, err out).
func appendString(b []byte, s String, field string, err error) ([]byte, error) {
	if err != nil {
		return b, err
	}
	start := len(b)
	b = append(b, 0)
	if s.UCS2 && s.Pad01 {
		b = append(b, 1)
	}
	units := 0
	put := func(c rune) {
		if s.UCS2 {
			b = binary.LittleEndian.AppendUint16(b, uint16(c))
		} else {
			b = append(b, byte(c))
		}
		units++
	}
	k := 0
	colour := func(at int) bool {
		for ; k < len(s.Colours) && s.Colours[k].At == at; k++ {
			c := s.Colours[k]
			put(0x1b)
			put(rune(c.R))
			put(rune(c.G))
			put(rune(c.B))
		}
		return k < len(s.Colours) && s.Colours[k].At < at
	}
	for i, c := range s.Value {
		if colour(i) {
			return b[:start], newError(field, 0, "", codecs.Detail(codecs.ErrBadValue, "colour codes out of order"))
		}
		switch {
		case !s.UCS2 && c > 0xff:
			return b[:start], newError(field, 0, "", codecs.Detail(codecs.ErrBadValue, "a character beyond Latin-1 in a Latin-1 string"))
		case c > 0xffff:
			c -= 0x10000
			put(0xd800 + c>>10)
			c = 0xdc00 + c&0x3ff
		case c == utf8.RuneError || c >= 0xd800 && c < 0xe000:
			if !s.UCS2 {
				return b[:start], newError(field, 0, "", codecs.Detail(codecs.ErrBadValue, "a character beyond Latin-1 in a Latin-1 string"))
			}
			c = utf8.RuneError
		}
		put(c)
	}
	if colour(len(s.Value)) || k < len(s.Colours) {
		return b[:start], newError(field, 0, "", codecs.Detail(codecs.ErrBadValue, "colour codes out of order"))
	}
	if !s.NoNUL {
		put(0)
	}
	if units > 0x7f {
		return b[:start], newError(field, 0, "", codecs.Detail(codecs.ErrTooLong, "a string is at most 127 characters"))
	}
	b[start] = byte(units)
	if s.UCS2 {
		b[start] |= 0x80
	}
	return b, nil
}

// Text returns a Latin-1 String of s, its colour codes (1B R G B) taken
// out into Colours, with a terminator: how a server writes names.
func Text(s string) String {
	var out String
	v := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+3 < len(s) {
			out.Colours = append(out.Colours, Colour{At: len(v), R: s[i+1], G: s[i+2], B: s[i+3]})
			i += 3
			continue
		}
		v = append(v, s[i])
	}
	out.Value = string(v)
	return out
}
