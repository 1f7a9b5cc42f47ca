package quake3

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
	// MaxMasterDatagrams bounds one master conversation: a list of 64K
	// servers is 1,100 datagrams of ~60 entries at most; real lists are a
	// few thousand servers.
	MaxMasterDatagrams = 512
	maxPlayers         = 1024 // player lines in one statusResponse
)

// DecodeRequest decodes a query datagram. Strings alias nothing: they are
// copies.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

// readRequest reads a query: the magic, the command and its arguments, one
// line of printable ASCII words.
func readRequest(r *wire.Reader) Request {
	var q Request
	readMagic(r)
	cmd := readWord(r, "command")
	q.Command = string(cmd)
	switch q.Command {
	case CmdGetInfo, CmdGetStatus:
		if arg := readArg(r, "challenge"); arg != nil {
			q.Challenge = string(arg)
		}
	case CmdGetServers, CmdGetServersExt:
		first := readArg(r, "game")
		if first == nil && !r.Failed() {
			r.Fail("protocol", codecs.Detail(codecs.ErrShort, "a master query names its protocol number"))
			return q
		}
		if v, ok := number(first); ok && q.Command == CmdGetServers {
			q.Version = v // Quake III's own form: no game name
		} else {
			q.Game = string(first)
			start := r.Offset()
			p := readArg(r, "protocol")
			v, ok := number(p)
			if !ok && !r.Failed() {
				r.FailAt("protocol", start, codecs.Detail(codecs.ErrBadValue, strconv.Quote(string(p))+" is not a protocol number"))
				return q
			}
			q.Version = v
		}
		for i := 0; !r.Failed(); i++ {
			r.Enter("filters", i)
			f := readArg(r, "")
			r.Leave()
			if f == nil {
				break
			}
			q.Filters = append(q.Filters, string(f))
		}
	default:
		if !r.Failed() {
			r.FailAt("command", len(Magic), codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(q.Command)+" is not a query"))
		}
		return q
	}
	if !r.Failed() && r.Len() > 0 {
		start := r.Offset()
		c := r.Skip("end", 1)[0]
		if (c != '\n' && c != 0) || r.Len() > 0 {
			r.FailAt("end", start, codecs.Detail(codecs.ErrTrailing, "a query ends with its last word, a newline or a NUL"))
			return q
		}
		q.End = string(rune(c))
		r.Mark("end", "bytes", start, string(codecs.AppendHex(nil, []byte{c})))
	}
	return q
}

// readMagic reads the four 0xFF bytes.
func readMagic(r *wire.Reader) {
	start := r.Offset()
	b := r.Skip("magic", len(Magic))
	if b != nil && string(b) != Magic {
		r.FailAt("magic", start, codecs.Detail(codecs.ErrBadMagic, "want ff ff ff ff"))
		return
	}
	r.Mark("magic", "bytes", start, "ffffffff")
}

// readWord reads the command: printable bytes up to a space, newline, NUL,
// '\' or the end. The separator is left unread.
func readWord(r *wire.Reader, field string) []byte {
	if r.Failed() {
		return nil
	}
	start := r.Offset()
	rest := r.Rest()
	n := 0
	for n < len(rest) && rest[n] > ' ' && rest[n] < 0x7f && rest[n] != '\\' && rest[n] != '/' {
		n++
	}
	if n == 0 {
		r.FailAt(field, start, codecs.Detail(codecs.ErrShort, "no command"))
		return nil
	}
	w := r.Skip(field, n)
	r.Mark(field, "text", start, string(w))
	return w
}

// readArg reads " word" (one space, then printable ASCII) and returns the
// word, or nil when the query has no more arguments.
func readArg(r *wire.Reader, field string) []byte {
	rest := r.Rest()
	if r.Failed() || len(rest) == 0 || rest[0] != ' ' {
		return nil
	}
	start := r.Offset()
	n := 1
	for n < len(rest) && rest[n] > ' ' && rest[n] < 0x7f {
		n++
	}
	if n == 1 {
		r.FailAt(field, start, codecs.Detail(codecs.ErrBadValue, "an empty argument (two spaces, or a space at the end)"))
		return nil
	}
	w := r.Skip(field, n)[1:]
	r.Mark(field, "text", start, string(w))
	return w
}

// number parses a protocol number of a query as the engines print it:
// decimal without a sign or leading zeros, so that a query is written back
// byte for byte.
func number(b []byte) (int, bool) {
	v, ok := codecs.Atoi(b)
	return v, ok && v >= 0 && len(b) == len(strconv.Itoa(v))
}

// DecodeResponse decodes one reply datagram: an infoResponse, a
// statusResponse or one datagram of a master's list. req, if not nil, is
// the query it answers; the reply must be the one it asks for. On error
// the partial Response is returned too.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	var resp Response
	readResponse(r, &resp, 0)
	if err := r.Err(); err != nil {
		return resp, err
	}
	if req != nil && resp.Command != answerTo(req.Command) {
		return resp, newError("command", len(Magic), "", codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(resp.Command)+" does not answer "+req.Command))
	}
	return resp, nil
}

// answerTo is the reply command of query command cmd.
func answerTo(cmd string) string {
	switch cmd {
	case CmdGetInfo:
		return CmdInfoResponse
	case CmdGetStatus:
		return CmdStatusResponse
	case CmdGetServers:
		return CmdServers
	case CmdGetServersExt:
		return CmdServersExt
	}
	return ""
}

// readResponse reads one reply datagram into resp. first is the index the
// datagram's first master entry gets (entries are numbered across the
// datagrams of one list).
func readResponse(r *wire.Reader, resp *Response, first int) {
	readMagic(r)
	resp.Command = string(readWord(r, "command"))
	if r.Failed() {
		return
	}
	switch resp.Command {
	case CmdInfoResponse, CmdStatusResponse:
		readNewline(r, "command")
		status := resp.Command == CmdStatusResponse
		resp.Vars = readInfostring(r, resp.Vars, status, codecs.Latin1)
		if status {
			readPlayers(r, resp)
		} else if !r.Failed() && r.Len() > 0 {
			start := r.Offset()
			r.Skip("trailing", r.Len())
			r.Mark("trailing", "bytes", start, "")
			r.FailAt("trailing", start, codecs.Detail(codecs.ErrTrailing, "an infoResponse ends with its infostring"))
		}
	case CmdServers, CmdServersExt:
		readEntries(r, resp, first)
	default:
		r.FailAt("command", len(Magic), codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(resp.Command)+" is not a reply"))
	}
}

// readNewline reads the '\n' after the reply's command.
func readNewline(r *wire.Reader, field string) {
	if r.Failed() {
		return
	}
	start := r.Offset()
	b := r.Skip(field, 1)
	if b == nil {
		return
	}
	if b[0] != '\n' {
		r.FailAt(field, start, codecs.Detail(codecs.ErrBadValue, "want a newline after the command"))
		return
	}
	r.Mark("newline", "bytes", start, "0a")
}

// readInfostring reads \key\value pairs up to a newline (consumed) or,
// unless newline says one must end it (a statusResponse's), the end of the
// datagram. The leading '\' is optional, as the engines read it. text
// decodes the bytes: codecs.Latin1, or UTF-8 as sent (FiveM).
func readInfostring(r *wire.Reader, vars []Var, newline bool, text func([]byte) string) []Var {
	for i := 0; !r.Failed(); i++ {
		rest := r.Rest()
		if len(rest) == 0 {
			if newline {
				r.Fail("vars", codecs.Detail(codecs.ErrShort, "the infostring ends without its newline (the reply is cut short)"))
			}
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
		key := readInfoText(r, "key", i == 0, text)
		value := readInfoText(r, "value", false, text)
		r.Leave()
		vars = append(vars, Var{Key: text(key), Value: text(value)})
	}
	return vars
}

// maxVars bounds the keys of one infostring (a datagram of 1,400 bytes
// holds at most 350 empty pairs).
const maxVars = 512

// readInfoText reads one key or value: an optional '\' (required except
// before the first key), then bytes up to the next '\', newline or the end.
func readInfoText(r *wire.Reader, field string, optionalSlash bool, text func([]byte) string) []byte {
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
	for m < len(rest) && rest[m] != '\\' && rest[m] != '\n' {
		m++
	}
	b := r.Skip(field, m)[n:]
	if r.Recording() {
		r.Mark(field, "text", start, text(b))
	}
	return b
}

// readPlayers reads the player lines of a statusResponse.
func readPlayers(r *wire.Reader, resp *Response) {
	for i := 0; !r.Failed() && r.Len() > 0; i++ {
		if i >= maxPlayers {
			r.Fail("players", codecs.Detail(codecs.ErrTooLong, "more than "+strconv.Itoa(maxPlayers)+" player lines"))
			return
		}
		r.Enter("players", i)
		p := readPlayer(r)
		r.Leave()
		if r.Failed() {
			return
		}
		resp.Players = append(resp.Players, p)
	}
}

// readPlayer reads `score ping [team] "name" [team]` and its newline,
// which every engine writes: a line without it was cut short.
func readPlayer(r *wire.Reader) Player {
	var p Player
	group := r.Offset()
	p.Score = readNumber(r, "score", false)
	p.Ping = readNumber(r, "ping", false)
	if rest := r.Rest(); !r.Failed() && len(rest) > 0 && rest[0] != '"' {
		p.Team, p.HasTeam = readNumber(r, "team", false), true
	}
	if r.Failed() {
		return p
	}
	start := r.Offset()
	rest := r.Rest()
	if len(rest) == 0 || rest[0] != '"' {
		r.Fail("name", codecs.Detail(codecs.ErrBadValue, "want a quoted name"))
		return p
	}
	end := bytes.IndexByte(rest[1:], '"')
	if nl := bytes.IndexByte(rest[1:], '\n'); end < 0 || (nl >= 0 && nl < end) {
		r.Fail("name", codecs.Detail(codecs.ErrShort, "the name's closing quote is missing"))
		return p
	}
	b := r.Skip("name", end+2)
	p.Name = codecs.Latin1(b[1 : len(b)-1])
	r.Mark("name", "text", start, p.Name)
	if rest := r.Rest(); len(rest) > 0 && rest[0] == ' ' && !p.HasTeam {
		p.Team, p.HasTeam = readNumber(r, "team", true), true
	}
	if rest := r.Rest(); !r.Failed() {
		start := r.Offset()
		if len(rest) == 0 {
			r.Fail("end", codecs.Detail(codecs.ErrShort, "the player line ends without its newline (the reply is cut short)"))
			return p
		}
		if rest[0] != '\n' {
			r.Fail("end", codecs.Detail(codecs.ErrBadValue, "want a newline after the player"))
			return p
		}
		r.Skip("end", 1)
		r.Mark("end", "bytes", start, "0a")
	}
	r.Mark("", "group", group, p.Name)
	return p
}

// readNumber reads a decimal integer: with lead, after one space; else
// followed by one space, if any. The space is part of the number's span.
func readNumber(r *wire.Reader, field string, lead bool) int {
	if r.Failed() {
		return 0
	}
	start := r.Offset()
	rest := r.Rest()
	n := 0
	if lead {
		n = 1 // the caller saw the space
	}
	from := n
	if n < len(rest) && rest[n] == '-' {
		n++
	}
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	v, ok := codecs.Atoi(rest[from:n])
	if !ok {
		r.FailAt(field, start+from, codecs.Detail(codecs.ErrBadValue, "want a number"))
		return 0
	}
	if !lead && n < len(rest) && rest[n] == ' ' {
		n++
	}
	r.Skip(field, n)
	r.Mark(field, "text", start, strconv.Itoa(v))
	return v
}

// readEntries reads a master reply's entries: '\' + IPv4 + port, or (in
// getserversExtResponse) '/' + IPv6 + port, up to the end marker or the
// end of the datagram.
func readEntries(r *wire.Reader, resp *Response, first int) {
	ext := resp.Command == CmdServersExt
	for i := first; !r.Failed() && r.Len() > 0; i++ {
		start := r.Offset()
		rest := r.Rest()
		n := 1 + 4 + 2
		switch {
		case rest[0] == '\\':
			if len(rest) >= 4 && string(rest[1:4]) == "EOT" && (len(rest) < n || rest[5] == 0 && rest[6] == 0) {
				r.Skip("end", min(n, len(rest)))
				r.Mark("end", "bytes", start, "EOT")
				resp.End = true
				if r.Len() > 0 {
					tail := r.Offset()
					r.Skip("trailing", r.Len())
					r.Mark("trailing", "bytes", tail, "")
					r.FailAt("trailing", tail, codecs.Detail(codecs.ErrTrailing, "bytes after the end of the list"))
				}
				return
			}
		case rest[0] == '/' && ext:
			n = 1 + 16 + 2
		default:
			r.Enter("servers", i)
			r.Fail("", codecs.Detail(codecs.ErrBadValue, "an entry starts with '\\' (IPv4)"+extHint(ext)))
			r.Leave()
			return
		}
		r.Enter("servers", i)
		b := r.Skip("", n)
		r.Leave()
		if b == nil {
			return
		}
		var ap Addr
		ap.Is6 = n > 7
		copy(ap.IP[:], b[1:n-2])
		ap.Port = binary.BigEndian.Uint16(b[n-2:])
		if r.Recording() {
			r.Enter("servers", i)
			r.Mark("", "addr", start, ap.String())
			r.Leave()
		}
		resp.Servers = append(resp.Servers, ap)
	}
}

func extHint(ext bool) string {
	if ext {
		return " or '/' (IPv6)"
	}
	return ""
}

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}
