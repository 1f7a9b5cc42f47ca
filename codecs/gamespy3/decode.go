package gamespy3

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Protocol is the name the package registers and puts in every error.
const Protocol = "gamespy3"

// DecodeRequest parses a query: the challenge request (7 bytes, or 11
// with Padded: four zero bytes after the session id, as GameDig sends
// it), or the full stat query with FullPayload (11 bytes, GameSpy v3), with a
// challenge and FullPayload (15 bytes, GameSpy v4) or with a challenge
// and MinecraftPayload (15 bytes, Minecraft). Anything else is an error.
func DecodeRequest(b []byte) (Request, error) { return decodeRequest(b, nil, 0) }

func decodeRequest(b []byte, spans *[]codecs.Span, layer int) (Request, error) {
	var q Request
	r := wire.NewReader(Protocol, b, layer, spans)
	if m := r.Bytes("magic", 2); m != nil && (m[0] != Magic0 || m[1] != Magic1) {
		r.FailAt("magic", 0, codecs.ErrBadMagic)
	}
	q.Type = Type(r.U8("type"))
	if !r.Failed() && q.Type != TypeStat && q.Type != TypeChallenge {
		r.FailAt("type", 2, wire.Detailf(codecs.ErrNotQuery, "packet type %d", int64(q.Type)))
	}
	q.Session = r.U32BE("session")
	if r.Failed() {
		return q, r.Err()
	}
	if q.Type == TypeChallenge {
		switch n := r.Len(); {
		case n == len(ChallengePadding):
			start := r.Offset()
			if p := r.Bytes("padding", len(ChallengePadding)); [4]byte(p) != ChallengePadding {
				r.FailAt("padding", start, codecs.Detail(codecs.ErrBadValue, "padding "+string(codecs.AppendHex(nil, p))+" is not 00000000"))
				break
			}
			q.Padded = true
		case n > 0:
			r.Fail("payload", codecs.Detail(codecs.ErrTrailing, "a challenge request ends after its session id or four zero bytes of padding"))
		}
		return q, r.Err()
	}
	switch n := r.Len(); {
	case n == 8:
		q.HasChallenge = true
		start := r.Offset()
		q.Challenge = int32(binary.BigEndian.Uint32(r.Skip("challenge", 4)))
		r.Mark("challenge", "s32be", start, strconv.Itoa(int(q.Challenge)))
	case n < 4:
		r.Fail("payload", codecs.Detail(codecs.ErrShort, "the stat query's payload is 4 bytes"))
	case n > 8:
		r.FailAt("payload", r.Offset()+8, codecs.Detail(codecs.ErrTrailing, "a stat query is at most a challenge and a 4-byte payload"))
	case n != 4:
		r.Fail("challenge", codecs.Detail(codecs.ErrShort, "a challenge and a payload take 8 bytes"))
	}
	start := r.Offset()
	p := r.Bytes("payload", 4)
	switch {
	case r.Failed():
	case [4]byte(p) == FullPayload:
	case [4]byte(p) == MinecraftPayload && q.HasChallenge:
		q.Minecraft = true
	case [4]byte(p) == MinecraftPayload:
		r.FailAt("payload", start, codecs.Detail(codecs.ErrBadValue, "a Minecraft full stat query carries a challenge"))
	default:
		r.FailAt("payload", start, codecs.Detail(codecs.ErrBadValue, "payload "+string(codecs.AppendHex(nil, p))+" is neither ffffff01 (full stat) nor 00000000 (Minecraft)"))
	}
	return q, r.Err()
}

// DecodeResponse parses one datagram from a server: a challenge reply, or
// one packet of a stat reply (its header, and the server keys when it is
// packet 0, then the player and team fields it carries). With req, a
// reply of another type than req's is an error; the session id is not
// checked (Minecraft masks it, and a relay shares one reply among
// askers).
//
// A packet that ends inside a key, a value or a field's values is not an
// error: what it holds is returned with Truncated set. A header or a
// challenge reply cut short is.
//
// Returned strings are UTF-8 copies (Latin-1 on the wire); nothing
// aliases b.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	return decodeResponse(b, req, nil, 0)
}

func decodeResponse(b []byte, req *Request, spans *[]codecs.Span, layer int) (Response, error) {
	var resp Response
	d := decoder{r: wire.NewReader(Protocol, b, layer, spans), b: b}
	r := d.r
	if len(b) > MaxReplyBytes {
		r.Fail("datagram", wire.Detailf(codecs.ErrTooLong, "%d bytes; a reply is at most %d", int64(len(b)), MaxReplyBytes))
		return resp, r.Err()
	}
	resp.Type = Type(r.U8("type"))
	if !r.Failed() && resp.Type != TypeStat && resp.Type != TypeChallenge {
		r.FailAt("type", 0, wire.Detailf(codecs.ErrUnknownCode, "packet type %d", int64(resp.Type)))
	}
	if !r.Failed() && req != nil && req.Type != resp.Type {
		r.FailAt("type", 0, codecs.Detail(codecs.ErrBadValue, "a "+resp.Type.String()+" reply to a "+req.Type.String()+" query"))
	}
	resp.Session = r.U32BE("session")
	if r.Failed() {
		return resp, r.Err()
	}
	if resp.Type == TypeChallenge {
		start := r.Offset()
		c := r.CString("challenge")
		if !r.Failed() {
			resp.Challenge = string(c)
			if _, ok := parseChallenge(resp.Challenge); !ok {
				r.FailAt("challenge", start, codecs.Detail(codecs.ErrBadValue, strconv.Quote(codecs.Latin1(c))+" is not a 32-bit number"))
			}
		}
		if !r.Failed() && r.Len() > 0 {
			r.Fail("trailing", codecs.Detail(codecs.ErrTrailing, "after the challenge"))
		}
		return resp, r.Err()
	}
	d.header(&resp)
	if r.Failed() {
		return resp, r.Err()
	}
	if resp.Number == 0 {
		resp.HasRules = true
		d.rules(&resp)
	}
	if !resp.Truncated {
		d.sections(&resp)
	}
	return resp, nil
}

// decoder reads the body of a stat packet; a cut string ends the packet
// (Truncated) instead of failing.
type decoder struct {
	r    *wire.Reader
	b    []byte
	text string // string(b), made on first use: ASCII strings are substrings of it
}

// header reads the split header, when the packet has one.
func (d *decoder) header(resp *Response) {
	r := d.r
	rest := r.Rest()
	tag := splitTag + "\x00"
	switch {
	case bytes.HasPrefix(rest, []byte(tag)):
	case len(rest) < len(tag) && len(rest) > 0 && bytes.HasPrefix([]byte(tag), rest):
		r.Fail("splitnum", codecs.Detail(codecs.ErrShort, "split header cut short"))
		return
	default:
		resp.Number, resp.Last = 0, true // a whole reply in one packet
		return
	}
	resp.Split = true
	r.CString("splitnum")
	start := r.Offset()
	id := r.Skip("packet", 1)
	if r.Failed() {
		return
	}
	resp.Number, resp.Last = int(id[0]&^LastPacket), id[0]&LastPacket != 0
	if r.Recording() {
		v := "number " + strconv.Itoa(resp.Number)
		if resp.Last {
			v += ", last"
		}
		r.Mark("packet", "u8", start, v)
	}
	if resp.Number >= MaxPackets {
		r.FailAt("packet", start, wire.Detailf(codecs.ErrTooLong, "packet number %d; a reply is at most %d packets", int64(resp.Number), MaxPackets))
		return
	}
	resp.Extra = r.U8("extra")
}

// str reads a NUL-terminated string, or marks the packet truncated (with a
// span over what is left) when there is none.
func (d *decoder) str(resp *Response, field string) (string, bool) {
	r := d.r
	if bytes.IndexByte(r.Rest(), 0) < 0 {
		d.cut(resp, field)
		return "", false
	}
	start := r.Offset()
	return d.string(r.CString(field), start), true
}

// string returns the UTF-8 form of s, which starts at offset start of
// the packet: a substring of one copy of the packet when s is ASCII, so
// that a packet's strings cost one allocation, not one each.
func (d *decoder) string(s []byte, start int) string {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return codecs.Latin1(s)
		}
	}
	if d.text == "" {
		d.text = string(d.b)
	}
	return d.text[start : start+len(s)]
}

func (d *decoder) cut(resp *Response, field string) {
	resp.Truncated = true
	if r := d.r; r.Len() > 0 {
		start, n := r.Offset(), r.Len()
		r.Skip(field, n)
		if r.Recording() {
			r.Mark(field, "bytes", start, strconv.Itoa(n)+" bytes cut short")
		}
	}
}

// stray reports whether a value is one of the "p" + digits tokens some
// Unreal Tournament 3 servers put where a value belongs.
func stray(s []byte) bool {
	if len(s) < 2 || s[0] != 'p' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// rules reads the server keys up to the empty key.
func (d *decoder) rules(resp *Response) {
	r := d.r
	for i := 0; ; i++ {
		if r.Len() == 0 {
			resp.Truncated = true
			return
		}
		if r.Rest()[0] == 0 {
			r.U8("rules.end")
			return
		}
		r.Enter("rules", i)
		k, ok := d.str(resp, "key")
		kv := Rule{Key: k}
		for ok {
			if v, complete := peek(r.Rest()); complete && stray(v) {
				kv.Stray = append(kv.Stray, string(v))
				d.str(resp, "stray")
				continue
			}
			kv.Value, ok = d.str(resp, "value")
			break
		}
		r.Leave()
		if !ok {
			return
		}
		resp.Rules = append(resp.Rules, kv)
	}
}

// peek returns the NUL-terminated string at the start of b without
// consuming it; complete is false when b holds no NUL.
func peek(b []byte) (s []byte, complete bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return b, false
	}
	return b[:i], true
}

// sections reads the player and team fields to the end of the packet.
func (d *decoder) sections(resp *Response) {
	r := d.r
	cur := -1
	for r.Len() > 0 {
		if c := r.Rest()[0]; c <= SectionTeams {
			if c != 0 || cur < 0 {
				resp.Sections = append(resp.Sections, Section{Marker: c})
				cur = len(resp.Sections) - 1
			}
			r.Enter("sections", cur)
			if c == 0 {
				r.U8("end")
				resp.Sections[cur].End = true
			} else {
				r.U8("marker")
			}
			r.Leave()
			continue
		}
		if cur < 0 || resp.Sections[cur].End {
			resp.Sections = append(resp.Sections, Section{})
			cur = len(resp.Sections) - 1
		}
		s := &resp.Sections[cur]
		r.Enter("sections", cur)
		r.Enter("fields", len(s.Fields))
		ok := d.field(resp, s)
		r.Leave()
		r.Leave()
		if !ok {
			return
		}
	}
}

// field reads one field: its name, the offset byte and the values up to
// an empty one. A field cut short is kept with the values read.
func (d *decoder) field(resp *Response, s *Section) bool {
	r := d.r
	name, ok := d.str(resp, "name")
	if !ok {
		return false
	}
	s.Fields = append(s.Fields, Field{Name: name})
	f := &s.Fields[len(s.Fields)-1]
	if r.Len() == 0 {
		resp.Truncated = true
		return false
	}
	f.Offset = int(r.U8("offset"))
	for i := 0; ; i++ {
		if r.Len() == 0 {
			resp.Truncated = true
			return false
		}
		if r.Rest()[0] == 0 {
			r.U8("values.end")
			return true
		}
		r.Enter("values", f.Offset+i)
		v, ok := d.str(resp, "")
		r.Leave()
		if !ok {
			return false
		}
		f.Values = append(f.Values, v)
	}
}
