package samp

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// protocolOf is the registered name a datagram's magic belongs to, for its
// errors: VC:MP's magics name "vcmp", anything else "samp".
func protocolOf(b []byte) string {
	if len(b) >= 4 && (string(b[:4]) == MagicVCMP || string(b[:4]) == MagicVCMPReply) {
		return ProtocolVCMP
	}
	return Protocol
}

// DecodeRequest decodes a query: the header with 'i', 'r', 'c' or 'd' (11
// bytes), or 'p' and its 4 bytes (15). Anything else, RCON's 'x' among
// them, is refused.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(protocolOf(b), b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

func readRequest(r *wire.Reader) Request {
	var q Request
	q.Header = readHeader(r, false)
	switch q.Opcode {
	case OpInfo, OpRules, OpClients, OpDetailed:
	case OpPing:
		copy(q.Ping[:], r.Bytes("ping", 4))
	default:
		if !r.Failed() {
			r.FailAt("opcode", HeaderLen-1, codecs.Detail(codecs.ErrUnknownCode, "not a query of i, r, c, d or p"))
		}
	}
	if !r.Failed() && r.Len() > 0 {
		r.Fail("datagram", codecs.Detail(codecs.ErrTrailing, "a "+q.Opcode.String()+" query is "+strconv.Itoa(r.Offset())+" bytes"))
	}
	return q
}

// readHeader reads the 11-byte header; reply says which magics are right.
func readHeader(r *wire.Reader, reply bool) Header {
	var h Header
	start := r.Offset()
	magic := r.Skip("magic", 4)
	if magic == nil {
		return h
	}
	copy(h.Magic[:], magic)
	other := MagicVCMP
	if reply {
		other = MagicVCMPReply
	}
	if string(magic) != MagicSAMP && string(magic) != other {
		r.FailAt("magic", start, codecs.Detail(codecs.ErrBadMagic, "want "+MagicSAMP+" or "+other))
		return h
	}
	r.Mark("magic", "text", start, string(magic))
	start = r.Offset()
	if ip := r.Skip("ip", 4); ip != nil {
		copy(h.IP[:], ip)
		if r.Recording() {
			r.Mark("ip", "ipv4", start, ipString(h.IP))
		}
	}
	h.Port = r.U16LE("port")
	start = r.Offset()
	if op := r.Skip("opcode", 1); op != nil {
		h.Opcode = Opcode(op[0])
		if r.Recording() {
			r.Mark("opcode", "char", start, h.Opcode.String())
		}
	}
	return h
}

// ipString is a dotted quad.
func ipString(ip [4]byte) string {
	b := make([]byte, 0, 15)
	for i, x := range ip {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	return string(b)
}

// DecodeResponse decodes one reply datagram, its text read as
// Windows-1252 (DecodeResponseCharset for another code page). req, when
// given, is the query it answers: a reply whose opcode differs is an
// error. Bytes after the body are left unread (Decode shows them as
// trailing). Returned strings do not alias b.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	return DecodeResponseCharset(b, req, Windows1252)
}

// DecodeResponseCharset is DecodeResponse with text in cs.
func DecodeResponseCharset(b []byte, req *Request, cs Charset) (Response, error) {
	r := wire.NewReader(protocolOf(b), b, 0, nil)
	resp := readResponse(r, cs, "language")
	if req != nil && !r.Failed() && resp.Opcode != req.Opcode {
		r.FailAt("opcode", HeaderLen-1, codecs.Detail(codecs.ErrUnknownCode, "the reply's opcode is not the query's"))
	}
	return resp, r.Err()
}

// readResponse reads one reply; third names the info reply's third string
// ("language" or "map") in spans and errors.
func readResponse(r *wire.Reader, cs Charset, third string) Response {
	resp := Response{Charset: cs}
	resp.Header = readHeader(r, true)
	if r.Failed() {
		return resp
	}
	switch resp.Opcode {
	case OpInfo:
		readInfo(r, &resp, third)
	case OpRules:
		n := readCount(r, 2)
		resp.Rules = make([]Rule, 0, n)
		for i := 0; i < n && !r.Failed(); i++ {
			r.Enter("rules", i)
			start := r.Offset()
			var rule Rule
			rule.Name = readString(r, "name", 1, cs)
			rule.Value = readString(r, "value", 1, cs)
			r.Mark("", "group", start, rule.Name)
			r.Leave()
			if r.Failed() {
				break // a cut entry is not kept
			}
			resp.Rules = append(resp.Rules, rule)
		}
	case OpClients, OpDetailed:
		min := 1 + 4
		if resp.Opcode == OpDetailed {
			min = 1 + 1 + 4 + 4
		}
		n := readCount(r, min)
		resp.Players = make([]Player, 0, n)
		for i := 0; i < n && !r.Failed(); i++ {
			r.Enter("players", i)
			start := r.Offset()
			var p Player
			if resp.Opcode == OpDetailed {
				p.ID = r.U8("id")
			}
			p.Name = readString(r, "name", 1, cs)
			p.Score = r.S32LE("score")
			if resp.Opcode == OpDetailed {
				p.Ping = r.U32LE("ping")
			}
			r.Mark("", "group", start, p.Name)
			r.Leave()
			if r.Failed() {
				break
			}
			resp.Players = append(resp.Players, p)
		}
	case OpPing:
		copy(resp.Ping[:], r.Bytes("ping", 4))
	default:
		r.FailAt("opcode", HeaderLen-1, codecs.Detail(codecs.ErrUnknownCode, "not a reply to i, r, c, d or p"))
	}
	return resp
}

// readCount reads a list's u16 count. It returns how many entries of at
// least min bytes the rest can hold, at most the count: nothing is
// allocated for entries that are not there (the loop then fails on the
// first missing one).
func readCount(r *wire.Reader, min int) int {
	n := int(r.U16LE("count"))
	if room := r.Len()/min + 1; n > room {
		return room
	}
	return n
}

func readInfo(r *wire.Reader, resp *Response, third string) {
	in := &resp.Info
	if resp.VCMP() {
		start := r.Offset()
		if v := r.Skip("version", VCMPVersionLen); v != nil {
			for i, c := range v {
				if c == 0 {
					v = v[:i]
					break
				}
			}
			in.Version = resp.Charset.Decode(v)
			r.Mark("version", "cstring", start, in.Version)
		}
	}
	in.Password = r.Bool("password")
	in.Players = r.U16LE("players")
	in.MaxPlayers = r.U16LE("max_players")
	in.Hostname = readString(r, "hostname", 4, resp.Charset)
	in.Gamemode = readString(r, "gamemode", 4, resp.Charset)
	in.Language = readString(r, third, 4, resp.Charset)
}

// readString reads a string after its length (width 1: u8; 4: u32le),
// decoded from cs. A length past the datagram's end fails at the length.
func readString(r *wire.Reader, field string, width int, cs Charset) string {
	start := r.Offset()
	lb := r.Skip(field, width)
	if lb == nil {
		return ""
	}
	n := uint64(lb[0])
	kind := "lstring"
	if width == 4 {
		n = uint64(binary.LittleEndian.Uint32(lb))
		kind = "lstring32le"
	}
	if n > uint64(r.Len()) {
		r.FailAt(field, start, codecs.Detail(codecs.ErrShort, "length "+strconv.FormatUint(n, 10)+", "+strconv.Itoa(r.Len())+" bytes left"))
		return ""
	}
	s := cs.Decode(r.Skip(field, int(n)))
	r.Mark(field, kind, start, s)
	return s
}
