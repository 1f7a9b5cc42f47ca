package gamespy1

import (
	"bytes"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DecodeRequest decodes a query datagram. Strings are copies.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

// readRequest reads the words of a query: `\word\`, then for echo and
// secure a text, for the others optionally XServerQuery, closed by '\'
// unless it ends the datagram.
func readRequest(r *wire.Reader) Request {
	var q Request
	for i := 0; !r.Failed(); i++ {
		rest := r.Rest()
		if len(rest) == 0 {
			if i == 0 {
				r.Fail("words", codecs.Detail(codecs.ErrShort, "an empty query"))
			}
			break
		}
		if i >= MaxWords {
			r.Fail("words", wire.Detailf(codecs.ErrTooLong, "more than %d words", MaxWords))
			break
		}
		r.Enter("words", i)
		w := readWord(r, &q)
		r.Leave()
		if r.Failed() {
			break
		}
		q.Words = append(q.Words, w)
	}
	return q
}

// readWord reads one word and its value.
func readWord(r *wire.Reader, q *Request) Word {
	var w Word
	start := r.Offset()
	rest := r.Rest()
	if q.Open {
		r.Fail("name", codecs.Detail(codecs.ErrBadValue, "a word after a value left open"))
		return w
	}
	if rest[0] != '\\' {
		r.Fail("name", codecs.Detail(codecs.ErrBadValue, "a word starts with '\\' (after a value, '\\' closes it and another starts the next word)"))
		return w
	}
	n := 1
	for n < len(rest) && rest[n] != '\\' {
		n++
	}
	if n == len(rest) {
		r.Fail("name", codecs.Detail(codecs.ErrShort, "the word has no closing '\\'"))
		return w
	}
	w.Name = string(rest[1:n])
	switch w.Name {
	case WordStatus, WordBasic, WordInfo, WordRules, WordPlayers, WordEcho, WordSecure:
	default:
		r.Fail("name", codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(w.Name)+" is not a query word"))
		return w
	}
	for _, x := range q.Words {
		if x.Name == w.Name {
			r.Fail("name", codecs.Detail(codecs.ErrBadValue, w.Name+" asked twice"))
			return w
		}
	}
	r.Skip("name", n+1)
	r.Mark("name", "text", start, w.Name)
	rest = r.Rest()
	text := w.Name == WordEcho || w.Name == WordSecure
	if len(rest) == 0 || rest[0] == '\\' {
		if text {
			r.Fail("value", codecs.Detail(codecs.ErrShort, w.Name+" needs a text"))
		}
		return w
	}
	m := 0
	for m < len(rest) && rest[m] != '\\' {
		m++
	}
	v := rest[:m]
	if text {
		if err := checkText(string(v)); err != nil {
			r.Fail("value", err)
			return w
		}
	} else if string(v) != XServerQuery {
		r.Fail("value", codecs.Detail(codecs.ErrBadValue, w.Name+" takes no value but "+XServerQuery))
		return w
	}
	w.Value = string(v)
	vstart := r.Offset()
	if m < len(rest) {
		m++ // the closing '\'
	} else {
		q.Open = true
	}
	r.Skip("value", m)
	r.Mark("value", "text", vstart, w.Value)
	return w
}

// checkText checks an echo or secure text: 1 to MaxTextLen printable
// ASCII bytes, no '\' and no space.
func checkText(s string) error {
	if s == "" || len(s) > MaxTextLen {
		return wire.Detailf(codecs.ErrBadValue, "a text of 1 to %d bytes", MaxTextLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return codecs.Detail(codecs.ErrBadValue, "a text is printable ASCII without spaces or '\\'")
		}
	}
	return nil
}

// DecodeResponse decodes one reply datagram: \key\value pairs, the queryid
// and final ones taken out. req is not needed (a reply reads the same
// whatever was asked) and may be nil. On error the pairs before it are
// returned too. Strings are UTF-8, from Latin-1; ASCII ones share one copy
// of b.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	var resp Response
	readResponse(r, &resp)
	return resp, r.Err()
}

// readResponse reads one reply datagram into resp.
func readResponse(r *wire.Reader, resp *Response) {
	if r.Len() == 0 {
		r.Fail("vars", codecs.Detail(codecs.ErrShort, "an empty datagram"))
		return
	}
	seenID := false
	// One copy of the datagram: ASCII keys and values are substrings of it.
	origin, whole := r.Offset(), string(r.Rest())
	pairs := min(bytes.Count(r.Rest(), []byte{'\\'})/2, 128) // at most, capped: sizes Vars once for real replies
	text := func(b []byte, at int) string {
		for _, c := range b {
			if c >= 0x80 {
				return codecs.Latin1(b)
			}
		}
		return whole[at-origin : at-origin+len(b)]
	}
	for i := 0; !r.Failed() && r.Len() > 0; {
		start := r.Offset()
		rest := r.Rest()
		if rest[0] != '\\' {
			r.Fail("vars", codecs.Detail(codecs.ErrBadValue, "want '\\' before a key"))
			return
		}
		if len(rest) == 1 && (i > 0 || seenID || resp.Final) {
			r.Skip("end", 1)
			r.Mark("end", "bytes", start, "5c")
			resp.Trailer = true
			return
		}
		n := 1
		for n < len(rest) && rest[n] != '\\' {
			n++
		}
		key := rest[1:n]
		field := ""
		switch string(key) {
		case KeyQueryID, KeyFinal:
			field = string(key)
			r.Enter(field, -1)
		default:
			r.Enter("vars", i)
		}
		if n == len(rest) {
			r.Fail("key", codecs.Detail(codecs.ErrShort, "a key without its value (the datagram is cut short)"))
			r.Leave()
			return
		}
		if n == 1 {
			r.Fail("key", codecs.Detail(codecs.ErrBadValue, "an empty key"))
			r.Leave()
			return
		}
		r.Skip("key", n)
		if r.Recording() {
			r.Mark("key", "text", start, codecs.Latin1(key))
		}
		vstart := r.Offset()
		rest = r.Rest() // starts with '\'
		m := 1
		for m < len(rest) && rest[m] != '\\' {
			m++
		}
		val := rest[1:m]
		switch field {
		case KeyQueryID:
			if seenID {
				r.Fail("value", codecs.Detail(codecs.ErrBadValue, "a second queryid"))
			} else if !validQueryID(val) {
				r.Fail("value", codecs.Detail(codecs.ErrBadValue, strconv.Quote(string(val))+" is not ID.N"))
			}
			seenID = true
			resp.QueryID = text(val, vstart+1)
		case KeyFinal:
			if resp.Final {
				r.Fail("value", codecs.Detail(codecs.ErrBadValue, "a second final"))
			} else if len(val) > 0 {
				r.Fail("value", codecs.Detail(codecs.ErrBadValue, "final carries no value"))
			}
			resp.Final = true
			resp.FinalFirst = !seenID
		default:
			if resp.Vars == nil {
				resp.Vars = make([]Var, 0, pairs)
			}
			resp.Vars = append(resp.Vars, Var{Key: text(key, start+1), Value: text(val, vstart+1)})
			i++
		}
		r.Skip("value", m)
		if r.Recording() {
			r.Mark("value", "text", vstart, codecs.Latin1(val))
		}
		r.Leave()
	}
}

// validQueryID reports whether v is ID or ID.N, each 1 to 9 digits.
func validQueryID(v []byte) bool {
	id, n, dot := cut(string(v), '.')
	if _, ok := atoi(id); !ok {
		return false
	}
	if dot {
		_, ok := atoi(n)
		return ok
	}
	return true
}

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}
