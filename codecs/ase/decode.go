package ase

import (
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DecodeRequest reads a query datagram: the one byte QueryFull.
func DecodeRequest(b []byte) (Request, error) {
	switch {
	case len(b) == 0:
		return Request{}, newError("query", 0, "", codecs.Detail(codecs.ErrShort, "empty datagram"))
	case b[0] != QueryFull:
		return Request{}, newError("query", 0, "", codecs.Detail(codecs.ErrNotQuery, "the query is the byte 's'"))
	case len(b) > 1:
		return Request{}, newError("query", 1, "", codecs.Detail(codecs.ErrTrailing, "the query is one byte"))
	}
	return Request{}, nil
}

// DecodeResponse reads a reply to the full query. req, the query it
// answers, is unused (there is one query) and may be nil. On error it
// returns what decoded before the fault: the strings, rules and players
// read whole. Strings alias nothing: they are copied out of b.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	var resp Response
	r := wire.NewReader(Protocol, b, 0, nil)
	readResponse(r, nil, &resp)
	return resp, r.Err()
}

// readResponse decodes the reply under r into resp; spans is r's span
// sink (nil: none), where each player gets a "group" span. The reply's
// end is the datagram's: the player list runs to it. It returns how far it
// got: the header strings read whole (0 to 9; -1 when the magic is bad or
// cut) and whether the rules' end marker was read.
func readResponse(r *wire.Reader, spans *[]codecs.Span, resp *Response) (head int, rulesEnd bool) {
	start := r.Offset()
	magic := r.Skip("magic", len(Magic))
	if magic == nil {
		return -1, false
	}
	if string(magic) != Magic {
		r.FailAt("magic", start, codecs.Detail(codecs.ErrBadMagic, "a reply starts with "+Magic))
		return -1, false
	}
	r.Mark("magic", "bytes", start, Magic)
	for _, h := range resp.header() {
		s, ok := readString(r, h.name)
		if !ok {
			return head, false
		}
		*h.v = s
		head++
	}
	for i := 0; ; i++ {
		if r.Empty() {
			r.Fail("rules_end", codecs.Detail(codecs.ErrShort, "the rules end without their end marker (an empty key)"))
			return head, false
		}
		if r.Rest()[0] == 1 { // an empty key: the end of the rules
			start := r.Offset()
			r.Skip("rules_end", 1)
			r.Mark("rules_end", "lstring", start, "")
			break
		}
		r.Enter("rules", i)
		k, ok := readString(r, "key")
		v, ok2 := readString(r, "value")
		r.Leave()
		if !ok || !ok2 {
			return head, false
		}
		resp.Rules = append(resp.Rules, Rule{Key: k, Value: v})
	}
	for i := 0; !r.Empty(); i++ {
		r.Enter("players", i)
		g := openGroup(r, spans)
		var p Player
		fstart := r.Offset()
		f := r.Skip("flags", 1)
		p.Flags = Flags(f[0])
		if r.Recording() {
			v := "0x" + hex2(f[0])
			if f[0] != 0 {
				v += " " + p.Flags.String()
			}
			r.Mark("flags", "flags:ASE", fstart, v)
		}
		ok := true
		for bit := range len(flagFields) {
			if p.Flags&(1<<bit) == 0 {
				continue
			}
			if *p.field(bit), ok = readString(r, flagFields[bit]); !ok {
				break
			}
		}
		closeGroup(r, spans, g, p.Name)
		r.Leave()
		if !ok {
			return head, true
		}
		resp.Players = append(resp.Players, p)
	}
	return head, true
}

// readString reads one string: a length byte that counts itself, then
// length-1 bytes. A length of 0 (which would count less than its own
// byte) and one beyond the datagram fail, naming field at the length
// byte's offset.
func readString(r *wire.Reader, field string) (string, bool) {
	if r.Failed() {
		return "", false
	}
	start := r.Offset()
	if r.Empty() {
		r.Fail(field, codecs.Detail(codecs.ErrShort, "no length byte"))
		return "", false
	}
	n := int(r.Rest()[0])
	if n == 0 {
		r.Fail(field, codecs.Detail(codecs.ErrBadValue, "length 0: a length counts its own byte, so it is at least 1"))
		return "", false
	}
	if n > r.Len() {
		r.Fail(field, wire.Detailf(codecs.ErrShort, "length %d (with its own byte), %d bytes left", int64(n), int64(r.Len())))
		return "", false
	}
	b := r.Skip(field, n)
	s := string(b[1:])
	if r.Recording() {
		r.Mark(field, "lstring", start, Text(s))
	}
	return s, true
}

// openGroup starts a "group" span for the current path (one player) and
// returns its index, or -1 when spans are off.
func openGroup(r *wire.Reader, sp *[]codecs.Span) int {
	if sp == nil || r.Failed() {
		return -1
	}
	*sp = append(*sp, codecs.Span{Start: r.Offset(), End: r.Offset(), Field: r.Path(""), Kind: "group"})
	return len(*sp) - 1
}

// closeGroup ends group span g at the current offset, with value v.
func closeGroup(r *wire.Reader, sp *[]codecs.Span, g int, v string) {
	if g < 0 {
		return
	}
	(*sp)[g].End = r.Offset()
	(*sp)[g].Value = Text(v)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
