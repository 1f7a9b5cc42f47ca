package quake2

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Limits on what a decoder accepts, so that a hostile datagram cannot make
// it build more than a datagram's worth of values.
const (
	maxVars    = 512  // \key\value pairs (a datagram holds at most ~350 empty ones)
	maxPlayers = 1024 // player lines
)

// DecodeRequest decodes a query datagram of dialect d. Strings are copies.
func DecodeRequest(b []byte, d Dialect) (Request, error) {
	r := wire.NewReader(d.Protocol(), b, 0, nil)
	q := readRequest(r, d)
	return q, r.Err()
}

// readRequest reads a status query ([FF] FF FF FF FF status [" " flags]
// end) or, without the magic, a master's list query (c or query, end).
func readRequest(r *wire.Reader, d Dialect) Request {
	q := Request{Dialect: d}
	rest := r.Rest()
	if len(rest) > 0 && rest[0] != 0xff && d != Hexen2 {
		// A master query: a bare word.
		word := CmdQ2List
		if d == QuakeWorld {
			word = CmdQWList
		}
		start := r.Offset()
		b := r.Skip("command", min(len(word), len(rest)))
		if string(b) != word {
			r.FailAt("command", start, codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(string(b))+" is not a query (want status, or "+word+" to a master)"))
			return q
		}
		r.Mark("command", "text", start, word)
		q.Command = word
	} else {
		readMagic(r, d)
		start := r.Offset()
		b := r.Skip("command", min(len(CmdStatus), r.Len()))
		if r.Failed() || string(b) != CmdStatus {
			r.FailAt("command", start, codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(string(b))+" is not a query (want status)"))
			return q
		}
		r.Mark("command", "text", start, CmdStatus)
		q.Command = CmdStatus
		if rest := r.Rest(); len(rest) > 0 && rest[0] == ' ' {
			start := r.Offset()
			n := 1
			for n < len(rest) && rest[n] > ' ' && rest[n] < 0x7f {
				n++
			}
			if n == 1 {
				r.Fail("flags", codecs.Detail(codecs.ErrBadValue, "a space with no argument after it"))
				return q
			}
			q.Flags = string(r.Skip("flags", n)[1:])
			r.Mark("flags", "text", start, q.Flags)
		}
	}
	start := r.Offset()
	switch rest := string(r.Rest()); rest {
	case "", "\n", "\x00", "\n\x00":
		q.End = rest
		if rest != "" {
			r.Skip("end", len(rest))
			r.Mark("end", "bytes", start, string(codecs.AppendHex(nil, []byte(rest))))
		}
	default:
		r.FailAt("end", start, codecs.Detail(codecs.ErrTrailing, "a query ends with its last word, a newline, a NUL or both"))
	}
	return q
}

// readMagic reads the four 0xFF bytes, and HexenWorld's fifth.
func readMagic(r *wire.Reader, d Dialect) {
	n := len(Magic)
	if d == Hexen2 {
		n++
	}
	start := r.Offset()
	b := r.Skip("magic", n)
	if b == nil {
		return
	}
	for _, c := range b {
		if c != 0xff {
			r.FailAt("magic", start, codecs.Detail(codecs.ErrBadMagic, "want "+strconv.Itoa(n)+" bytes ff"))
			return
		}
	}
	r.Mark("magic", "bytes", start, string(codecs.AppendHex(nil, b)))
}

// DecodeResponse decodes one reply datagram of dialect d: a status reply
// or a master's list. req, if not nil, is the query it answers: a master
// query wants a list, a status query a status. On error the partial
// Response is returned too.
func DecodeResponse(b []byte, d Dialect, req *Request) (Response, error) {
	r := wire.NewReader(d.Protocol(), b, 0, nil)
	resp := readResponse(r, d)
	if err := r.Err(); err != nil {
		return resp, err
	}
	if req != nil && req.IsMaster() != resp.Master {
		return resp, codecs.NewError(d.Protocol(), "header", len(Magic), codecs.Detail(codecs.ErrUnknownCode, "the reply does not answer a "+req.Command+" query"))
	}
	return resp, nil
}

// header is the reply's header after the magic: the status header, or
// the master list's.
func header(d Dialect, master bool) string {
	switch {
	case master && d == QuakeWorld:
		return HdrQWList
	case master:
		return HdrQ2List
	case d == Quake2:
		return HdrPrint
	}
	return HdrQWPrint
}

// readResponse reads one reply datagram.
func readResponse(r *wire.Reader, d Dialect) Response {
	resp := Response{Dialect: d}
	readMagic(r, d)
	if r.Failed() {
		return resp
	}
	rest := r.Rest()
	status := header(d, false)
	start := r.Offset()
	switch {
	case bytes.HasPrefix(rest, []byte(status)):
		r.Skip("header", len(status))
		r.Mark("header", "text", start, status)
		resp.Vars = readInfostring(r, resp.Vars)
		readPlayers(r, &resp)
	case d != Hexen2 && bytes.HasPrefix(rest, []byte(header(d, true))):
		resp.Master = true
		h := header(d, true)
		n := len(h)
		if d == Quake2 {
			n++ // the separator
		}
		b := r.Skip("header", n)
		if b == nil {
			return resp
		}
		if d == Quake2 {
			resp.Sep = b[n-1]
			if resp.Sep != ' ' && resp.Sep != '\n' {
				r.FailAt("header", start+n-1, codecs.Detail(codecs.ErrBadValue, "want a space or a newline after \"servers\""))
				return resp
			}
		}
		r.Mark("header", "text", start, string(b))
		readEntries(r, &resp)
	default:
		want := strconv.Quote(status)
		if d != Hexen2 {
			want += " or " + strconv.Quote(header(d, true))
		}
		r.Fail("header", codecs.Detail(codecs.ErrUnknownCode, "want "+want))
	}
	return resp
}

// readInfostring reads the serverinfo's \key\value pairs and the newline
// that ends it. The leading '\' is optional, as the engines read it.
func readInfostring(r *wire.Reader, vars []Var) []Var {
	for i := 0; !r.Failed(); i++ {
		rest := r.Rest()
		if len(rest) == 0 || rest[0] == 0 {
			r.Fail("vars", codecs.Detail(codecs.ErrShort, "the serverinfo ends without its newline (the reply is cut short)"))
			return vars
		}
		if rest[0] == '\n' {
			start := r.Offset()
			r.Skip("vars", 1)
			r.Mark("vars.end", "bytes", start, "0a")
			return vars
		}
		if i >= maxVars {
			r.Fail("vars", codecs.Detail(codecs.ErrTooLong, "more than "+strconv.Itoa(maxVars)+" keys"))
			return vars
		}
		r.Enter("vars", i)
		key := readInfoText(r, "key", i == 0)
		value := readInfoText(r, "value", false)
		r.Leave()
		vars = append(vars, Var{Key: codecs.Latin1(key), Value: codecs.Latin1(value)})
	}
	return vars
}

// readInfoText reads one key or value: a '\' (optional before the first
// key), then bytes up to the next '\', newline, NUL or the end.
func readInfoText(r *wire.Reader, field string, optionalSlash bool) []byte {
	start := r.Offset()
	rest := r.Rest()
	n := 0
	if len(rest) > 0 && rest[0] == '\\' {
		n = 1
	} else if !optionalSlash {
		if field == "value" {
			return nil // "\key" at the end: an empty value, as the engines read it
		}
		r.Fail(field, codecs.Detail(codecs.ErrBadValue, "want '\\'"))
		return nil
	}
	m := n
	for m < len(rest) && rest[m] != '\\' && rest[m] != '\n' && rest[m] != 0 {
		m++
	}
	b := r.Skip(field, m)[n:]
	if r.Recording() {
		r.Mark(field, "text", start, codecs.Latin1(b))
	}
	return b
}

// readPlayers reads the player lines, and the NUL QuakeWorld ends with.
func readPlayers(r *wire.Reader, resp *Response) {
	for i := 0; !r.Failed() && r.Len() > 0; i++ {
		if rest := r.Rest(); rest[0] == 0 {
			start := r.Offset()
			r.Skip("end", 1)
			r.Mark("end", "bytes", start, "00")
			resp.Nul = true
			if r.Len() > 0 {
				r.Fail("trailing", codecs.Detail(codecs.ErrTrailing, "bytes after the NUL that ends the reply"))
			}
			return
		}
		if i >= maxPlayers {
			r.Fail("players", codecs.Detail(codecs.ErrTooLong, "more than "+strconv.Itoa(maxPlayers)+" player lines"))
			return
		}
		r.Enter("players", i)
		p := readPlayer(r, resp.Dialect)
		r.Leave()
		if r.Failed() {
			return
		}
		resp.Players = append(resp.Players, p)
	}
}

// readPlayer reads one player line and its newline, which every server
// writes: a line without it was cut short.
func readPlayer(r *wire.Reader, d Dialect) Player {
	var p Player
	group := r.Offset()
	if d == Quake2 {
		p.Score = readNumber(r, "score", false)
		p.Ping = readNumber(r, "ping", false)
		p.Name = readQuoted(r, "name", false)
		if rest := r.Rest(); len(rest) > 0 && rest[0] == ' ' {
			p.Address, p.HasAddress = readQuoted(r, "address", true), true
		}
	} else {
		p.ID = readNumber(r, "id", false)
		p.Score = readNumber(r, "frags", false)
		p.Time = readNumber(r, "time", false)
		p.Ping = readNumber(r, "ping", false)
		p.Name = readQuoted(r, "name", false)
		p.Skin = readQuoted(r, "skin", true)
		p.Top = readNumber(r, "top", true)
		p.Bottom = readNumber(r, "bottom", false)
		if rest := r.Rest(); len(rest) > 0 && rest[0] == '"' {
			p.Team, p.HasTeam = readQuoted(r, "team", false), true
		}
	}
	if r.Failed() {
		return p
	}
	start := r.Offset()
	rest := r.Rest()
	switch {
	case len(rest) == 0:
		r.Fail("end", codecs.Detail(codecs.ErrShort, "the player line ends without its newline (the reply is cut short)"))
	case rest[0] != '\n':
		r.Fail("end", codecs.Detail(codecs.ErrBadValue, "want a newline after the player"))
	default:
		r.Skip("end", 1)
		r.Mark("end", "bytes", start, "0a")
		r.Mark("", "group", group, p.Name)
	}
	return p
}

// readSpace reads the one space before field, which starts at start.
func readSpace(r *wire.Reader, field string) bool {
	rest := r.Rest()
	switch {
	case len(rest) == 0:
		r.Fail(field, codecs.Detail(codecs.ErrShort, "the line ends before "+field))
	case rest[0] != ' ':
		r.Fail(field, codecs.Detail(codecs.ErrBadValue, "want a space before "+field))
	default:
		r.Skip(field, 1)
		return true
	}
	return false
}

// readNumber reads a decimal integer and the one space after it, if any;
// with lead, after a space. The spaces are part of its span.
func readNumber(r *wire.Reader, field string, lead bool) int {
	if r.Failed() {
		return 0
	}
	start := r.Offset()
	if lead && !readSpace(r, field) {
		return 0
	}
	rest := r.Rest()
	n := 0
	if n < len(rest) && rest[n] == '-' {
		n++
	}
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	v, ok := codecs.Atoi(rest[:n])
	if !ok {
		if n == len(rest) {
			r.Fail(field, codecs.Detail(codecs.ErrShort, "the line ends before "+field))
		} else {
			r.Fail(field, codecs.Detail(codecs.ErrBadValue, "want a number"))
		}
		return 0
	}
	if n < len(rest) && rest[n] == ' ' {
		n++
	}
	r.Skip(field, n)
	r.Mark(field, "text", start, strconv.Itoa(v))
	return v
}

// readQuoted reads "text", the text holding no quote and no newline;
// with lead, after a space, which is part of its span.
func readQuoted(r *wire.Reader, field string, lead bool) string {
	if r.Failed() {
		return ""
	}
	start := r.Offset()
	if lead && !readSpace(r, field) {
		return ""
	}
	rest := r.Rest()
	if len(rest) == 0 || rest[0] != '"' {
		if len(rest) == 0 {
			r.Fail(field, codecs.Detail(codecs.ErrShort, "the line ends before "+field))
		} else {
			r.Fail(field, codecs.Detail(codecs.ErrBadValue, "want a quoted "+field))
		}
		return ""
	}
	end := bytes.IndexAny(rest[1:], "\"\n")
	if end < 0 || rest[1+end] != '"' {
		r.Fail(field, codecs.Detail(codecs.ErrShort, "the "+field+"'s closing quote is missing"))
		return ""
	}
	b := r.Skip(field, end+2)
	s := codecs.Latin1(b[1 : len(b)-1])
	r.Mark(field, "text", start, s)
	return s
}

// readEntries reads a master list's 6-byte entries: an IPv4 address and a
// big-endian port.
func readEntries(r *wire.Reader, resp *Response) {
	for i := 0; !r.Failed() && r.Len() > 0; i++ {
		start := r.Offset()
		r.Enter("servers", i)
		b := r.Skip("", 6)
		if b != nil {
			var a Addr
			copy(a.IP[:], b)
			a.Port = binary.BigEndian.Uint16(b[4:])
			if r.Recording() {
				r.Mark("", "addr", start, a.String())
			}
			resp.Servers = append(resp.Servers, a)
		}
		r.Leave()
	}
}
