package minecraft

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// The status reply is JSON. encoding/json would cost the browser module
// more than the whole family may (reflection, its encoder), so this is a
// small reader of its own: it parses one document into a flat list of
// nodes, bounded in depth (MaxJSONDepth), in nodes (MaxJSONNodes) and in
// size (the caller's: the reply cap), and never panics (FuzzJSON).

// Bounds of the JSON reader.
const (
	MaxJSONDepth = 32
	MaxJSONNodes = 1 << 14
)

var (
	errJSONSyntax = errors.New("json: syntax error")
	errJSONDepth  = errors.New("json: nested too deep")
	errJSONNodes  = errors.New("json: too many values")
)

// JSON node kinds.
const (
	jNull = iota
	jFalse
	jTrue
	jNumber
	jString
	jArray
	jObject
)

// jnode is one value: its kind, byte range [start, end) in the text, its
// member key (inside an object), its text (a string's unescaped, a
// number's as written), and its first child and next sibling (-1: none).
type jnode struct {
	kind        uint8
	start, end  int32
	key         string
	text        string
	first, next int32
}

// jdoc is a parsed document; node 0 is the root.
type jdoc struct {
	n []jnode
}

// jsonError is a syntax error at a byte offset of the text.
type jsonError struct {
	off int
	err error
}

func (e *jsonError) Error() string { return e.err.Error() }

type jparser struct {
	s   []byte
	i   int
	doc jdoc
	err *jsonError
}

// parseJSON parses s, which must hold exactly one value (white space
// around it allowed).
func parseJSON(s []byte) (jdoc, *jsonError) {
	// Every value but the root follows a '[', a ':' or a ',': their
	// count (strings' included) bounds the nodes, so the list is
	// allocated once instead of growing.
	n := 1 + bytes.Count(s, []byte{'['}) + bytes.Count(s, []byte{':'}) + bytes.Count(s, []byte{','})
	p := jparser{s: s, doc: jdoc{n: make([]jnode, 0, min(n, MaxJSONNodes+1))}}
	p.value(0, "")
	p.space()
	if p.err == nil && p.i != len(s) {
		p.fail(errJSONSyntax)
	}
	return p.doc, p.err
}

func (p *jparser) fail(err error) {
	if p.err == nil {
		p.err = &jsonError{off: p.i, err: err}
	}
}

func (p *jparser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses one value at depth, returning its node index (-1 on error).
func (p *jparser) value(depth int, key string) int32 {
	p.space()
	if p.err != nil {
		return -1
	}
	if depth > MaxJSONDepth {
		p.fail(errJSONDepth)
		return -1
	}
	if len(p.doc.n) >= MaxJSONNodes {
		p.fail(errJSONNodes)
		return -1
	}
	if p.i >= len(p.s) {
		p.fail(errJSONSyntax)
		return -1
	}
	idx := int32(len(p.doc.n))
	p.doc.n = append(p.doc.n, jnode{start: int32(p.i), key: key, first: -1, next: -1})
	var kind uint8
	var text string
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		kind = jArray
		end := byte(']')
		if c == '{' {
			kind, end = jObject, '}'
		}
		p.i++
		p.space()
		last := int32(-1)
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			break
		}
		for p.err == nil {
			k := ""
			if kind == jObject {
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != '"' {
					p.fail(errJSONSyntax)
					break
				}
				k = p.str()
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					p.fail(errJSONSyntax)
					break
				}
				p.i++
			}
			child := p.value(depth+1, k)
			if child < 0 {
				break
			}
			if last < 0 {
				p.doc.n[idx].first = child
			} else {
				p.doc.n[last].next = child
			}
			last = child
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				break
			}
			p.fail(errJSONSyntax)
		}
	case c == '"':
		kind, text = jString, p.str()
	case c == 't':
		kind = jTrue
		p.word("true")
	case c == 'f':
		kind = jFalse
		p.word("false")
	case c == 'n':
		kind = jNull
		p.word("null")
	case c == '-' || c >= '0' && c <= '9':
		kind, text = jNumber, p.number()
	default:
		p.fail(errJSONSyntax)
	}
	if p.err != nil {
		return -1
	}
	n := &p.doc.n[idx]
	n.kind, n.text, n.end = kind, text, int32(p.i)
	return idx
}

func (p *jparser) word(w string) {
	if len(p.s)-p.i < len(w) || string(p.s[p.i:p.i+len(w)]) != w {
		p.fail(errJSONSyntax)
		return
	}
	p.i += len(w)
}

func digit(c byte) bool { return c >= '0' && c <= '9' }

// number reads a number as JSON spells it and returns its text.
func (p *jparser) number() string {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && digit(p.s[p.i]) {
			p.i++
			n++
		}
		return n
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case digits() == 0:
		p.fail(errJSONSyntax)
		return ""
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.fail(errJSONSyntax)
			return ""
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.fail(errJSONSyntax)
			return ""
		}
	}
	return string(p.s[start:p.i])
}

// str reads a string at p.i (its opening quote) and returns it
// unescaped; invalid UTF-8 and lone surrogates become U+FFFD.
func (p *jparser) str() string {
	p.i++
	// Most strings (a favicon's base64 above all) have no escape: one
	// scan to the closing quote and one copy, instead of growing b a
	// byte at a time.
	start := p.i
	for j := start; j < len(p.s); j++ {
		c := p.s[j]
		if c == '"' {
			p.i = j + 1
			if !utf8.Valid(p.s[start:j]) {
				return validUTF8(p.s[start:j])
			}
			return string(p.s[start:j])
		}
		if c < 0x20 || c == '\\' {
			break
		}
	}
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(b) {
				return validUTF8(b)
			}
			return string(b)
		case c < 0x20:
			p.fail(errJSONSyntax)
			return ""
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			break
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := p.hex4()
			if r >= 0xd800 && r < 0xdc00 && p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				lo := p.hex4()
				if lo >= 0xdc00 && lo < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				} else {
					p.i = save
				}
			}
			if r < 0 {
				return ""
			}
			b = utf8.AppendRune(b, r)
		default:
			p.i -= 2
			p.fail(errJSONSyntax)
			return ""
		}
	}
	p.fail(errJSONSyntax)
	return ""
}

// hex4 reads four hex digits as a code unit; -1 (and a failure) if they
// are not.
func (p *jparser) hex4() rune {
	if len(p.s)-p.i < 4 {
		p.fail(errJSONSyntax)
		return -1
	}
	var r rune
	for _, c := range p.s[p.i : p.i+4] {
		var d byte
		switch {
		case digit(c):
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			p.fail(errJSONSyntax)
			return -1
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r
}

// get returns the index of member key of object node i, or -1.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *jdoc) get(i int32, key string) int32 {
	if i < 0 || d.n[i].kind != jObject {
		return -1
	}
	for c := d.n[i].first; c >= 0; c = d.n[c].next {
		if d.n[c].key == key {
			return c
		}
	}
	return -1
}

// str returns node i's text if it is a string.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *jdoc) str(i int32) (string, bool) {
	if i < 0 || d.n[i].kind != jString {
		return "", false
	}
	return d.n[i].text, true
}

// integer returns node i as an int if it is a number without a fraction
// or exponent that fits 32 bits.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *jdoc) integer(i int32) (int, bool) {
	if i < 0 || d.n[i].kind != jNumber {
		return 0, false
	}
	s := d.n[i].text
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	v := 0
	for j := 0; j < len(s); j++ {
		if !digit(s[j]) || v > 1<<31/10 {
			return 0, false
		}
		v = v*10 + int(s[j]-'0')
	}
	if v > 1<<31 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// boolean returns node i's value if it is true or false.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *jdoc) boolean(i int32) (v, ok bool) {
	if i < 0 {
		return false, false
	}
	switch d.n[i].kind {
	case jTrue:
		return true, true
	case jFalse:
		return false, true
	}
	return false, false
}

// validUTF8 is b with every invalid byte replaced by U+FFFD.
func validUTF8(b []byte) string {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r)
		b = b[n:]
	}
	return string(out)
}
