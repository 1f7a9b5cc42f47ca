package unreal2

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// newError is codecs.NewError for this protocol, with the layer named.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	e := codecs.NewError(Protocol, field, off, err)
	e.Layer = layer
	return e
}

// DecodeRequest decodes a query: the header (a version qstat knows) and a
// type of 0 to 3, five bytes in all.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

func readRequest(r *wire.Reader) Request {
	var q Request
	q.Version = readVersion(r)
	q.Type = readType(r, TypeRulesPlayers)
	if !r.Failed() && !r.Empty() {
		r.Fail("datagram", codecs.Detail(codecs.ErrTrailing, "a query is five bytes"))
	}
	return q
}

func readVersion(r *wire.Reader) uint32 {
	start := r.Offset()
	v := r.U32LE("version")
	if !r.Failed() && !knownVersion(v) {
		r.FailAt("version", start, codecs.Detail(codecs.ErrBadMagic, "0x"+strconv.FormatUint(uint64(v), 16)+" is no version qstat knows"))
	}
	return v
}

// readType reads the type byte, at most max.
func readType(r *wire.Reader, max uint8) uint8 {
	start := r.Offset()
	t := r.U8("type")
	if !r.Failed() && t > max {
		r.FailAt("type", start, wire.Detailf(codecs.ErrUnknownCode, "type %d", int64(t)))
	}
	return t
}

// DecodeResponse decodes one reply datagram. The end of a server-info
// reply is read in the dialect its shape says (guessDialect); Codec.Decode
// also asks the rules, as GameDig does. req, when given, is the query the
// reply answers: a reply of another type is an error. Strings are copied
// out of b.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	resp := readResponse(r, guessDialect, false)
	if req != nil && !r.Failed() && resp.Type != req.Type {
		r.FailAt("type", 4, wire.Detailf(codecs.ErrUnknownCode, "type %d answers no query of type %d", int64(resp.Type), int64(req.Type)))
	}
	return resp, r.Err()
}

// readResponse reads one reply datagram; the server-info tail in dialect
// guess(tail), or Killing Floor's when kf is set.
func readResponse(r *wire.Reader, guess func([]byte) Dialect, kf bool) Response {
	var resp Response
	resp.Version = readVersion(r)
	resp.Type = readType(r, TypePlayers)
	if r.Failed() {
		return resp
	}
	switch resp.Type {
	case TypeInfo:
		readInfo(r, &resp.Info, guess, kf)
	case TypeRules:
		for i := 0; !r.Empty(); i++ {
			start := r.Offset()
			r.Enter("rules", i)
			var p Rule
			p.Key = readString(r, "key")
			p.Value = readString(r, "value")
			r.Leave()
			if r.Failed() {
				break
			}
			resp.Rules = append(resp.Rules, p)
			if r.Recording() {
				r.Mark("rules["+strconv.Itoa(i)+"]", "group", start, p.Key.Value+"="+p.Value.Value)
			}
		}
	case TypePlayers:
		for i := 0; !r.Empty(); i++ {
			start := r.Offset()
			r.Enter("players", i)
			var p Player
			p.ID = r.U32LE("id")
			p.Name = readString(r, "name")
			p.Ping = r.U32LE("ping")
			p.Score = r.S32LE("score")
			p.StatsID = r.U32LE("stats_id")
			r.Leave()
			if r.Failed() {
				break
			}
			resp.Players = append(resp.Players, p)
			if r.Recording() {
				r.Mark("players["+strconv.Itoa(i)+"]", "group", start, p.Name.Value)
			}
		}
	}
	return resp
}

func readInfo(r *wire.Reader, in *ServerInfo, guess func([]byte) Dialect, kf bool) {
	r.Enter("info", -1)
	defer r.Leave()
	in.ServerID = r.U32LE("server_id")
	in.IP = readString(r, "ip")
	in.GamePort = r.U32LE("game_port")
	in.QueryPort = r.U32LE("query_port")
	in.Name = readString(r, "name")
	in.Map = readString(r, "map")
	in.GameType = readString(r, "game_type")
	in.NumPlayers = r.U32LE("num_players")
	in.MaxPlayers = r.U32LE("max_players")
	if r.Failed() {
		return
	}
	in.Dialect = guess(r.Rest())
	if kf {
		in.Dialect = DialectKillingFloor
	}
	switch in.Dialect {
	case DialectKillingFloor:
		in.WaveCurrent = r.U32LE("wave_current")
		in.WaveTotal = r.U32LE("wave_total")
		fallthrough
	case DialectUT2004:
		in.HasPing, in.Ping = true, r.U32LE("ping")
		in.HasFlags, in.Flags = true, r.U32LE("flags")
		in.Skill = readString(r, "skill")
	default:
		if r.Len() >= 4 {
			in.HasPing, in.Ping = true, r.U32LE("ping")
		}
	}
	if !r.Failed() && r.Len() > 0 {
		in.Extra = append([]byte(nil), r.Bytes("extra", r.Len())...)
	}
}

// guessDialect reads the dialect of a server-info reply from the bytes
// after its player counts: UT2004's ping and flags and a string that ends
// the datagram, else Killing Floor's two waves before them, else UT2003's
// ping alone (or nothing). A tail that fits neither is read as UT2004's.
func guessDialect(tail []byte) Dialect {
	switch {
	case fitsString(tail, 8):
		return DialectUT2004
	case fitsString(tail, 16):
		return DialectKillingFloor
	case len(tail) < 8:
		return DialectUT2003
	}
	return DialectUT2004
}

// fitsString reports whether a string at b[off:] ends exactly at b's end.
func fitsString(b []byte, off int) bool {
	return off < len(b) && off+stringLen(b[off:]) == len(b)
}

// stringLen is the wire length of the string at the start of b, as its
// length byte (and, for UCS-2, the stray 01) says.
func stringLen(b []byte) int {
	n := int(b[0])
	if n < 0x80 {
		return 1 + n
	}
	pad := 0
	if len(b) > 1 && b[1] == 1 {
		pad = 1
	}
	return 1 + pad + 2*(n&0x7f)
}

// readString reads one string as field: its length byte, the stray 01 of
// some UCS-2 strings, then the text, which the spans show in runs between
// its colour codes, and the terminator.
func readString(r *wire.Reader, field string) String {
	var s String
	n := int(r.U8(field + ".length"))
	if r.Failed() {
		return s
	}
	width := 1
	if n >= 0x80 {
		s.UCS2, width, n = true, 2, n&0x7f
		if rest := r.Rest(); len(rest) > 0 && rest[0] == 1 {
			s.Pad01 = true
			r.U8(field + ".pad")
		}
	}
	base := r.Offset()
	sub := r.Sub(field, n*width)
	if r.Failed() {
		return s
	}
	b := sub.Rest()
	unit := func(i int) rune {
		if width == 1 {
			return rune(b[i])
		}
		return rune(binary.LittleEndian.Uint16(b[2*i:]))
	}
	end := n
	if end > 0 && unit(end-1) == 0 {
		end--
	} else {
		s.NoNUL = true
	}
	v := make([]byte, 0, end+end/2)
	run, vrun := 0, 0 // the current text run's first unit, and where it starts in v
	// flush records the text run that ends before unit to.
	flush := func(to int) {
		if to > run {
			sub.Skip(field, (to-run)*width)
			if sub.Recording() {
				sub.Mark(field+".text", "text", base+run*width, string(v[vrun:]))
			}
		}
	}
	for i := 0; i < end; i++ {
		c := unit(i)
		if c == 0x1b && i+3 < end && unit(i+1) <= 0xff && unit(i+2) <= 0xff && unit(i+3) <= 0xff {
			flush(i)
			s.Colours = append(s.Colours, Colour{At: len(v), R: uint8(unit(i + 1)), G: uint8(unit(i + 2)), B: uint8(unit(i + 3))})
			sub.Skip(field, 4*width)
			if sub.Recording() {
				sub.Mark(field+".colour", "colour", base+i*width, "#"+hex2(unit(i+1))+hex2(unit(i+2))+hex2(unit(i+3)))
			}
			i += 3
			run, vrun = i+1, len(v)
			continue
		}
		if width == 2 && c >= 0xd800 && c < 0xdc00 && i+1 < end {
			if lo := unit(i + 1); lo >= 0xdc00 && lo < 0xe000 {
				v = utf8.AppendRune(v, 0x10000+(c-0xd800)<<10+(lo-0xdc00))
				i++
				continue
			}
		}
		if c >= 0xd800 && c < 0xe000 {
			c = utf8.RuneError
		}
		v = utf8.AppendRune(v, c)
	}
	flush(end)
	if !s.NoNUL {
		sub.Skip(field, width)
		if sub.Recording() {
			sub.Mark(field+".nul", "nul", base+end*width, "")
		}
	}
	s.Value = string(v)
	if r.Recording() {
		r.Mark(field, "group", base-1-boolInt(s.Pad01), s.Value)
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hex2(c rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4&0xf], digits[c&0xf]})
}
