package codecs

import "strconv"

// The kinds of Option, and how OptionReader reads each.
const (
	OptionBool   = "bool"   // strconv.ParseBool: true, false, 1, 0, t, f, ...
	OptionUint   = "uint"   // ParseUint: decimal, or hex after 0x; 010 is ten
	OptionHex    = "hex"    // an exact number of bytes as hex digits: 0000002a
	OptionChoice = "choice" // one of Option.Choices, as written
	OptionText   = "text"   // free text, checked by the codec (Value)
)

// ParseUint parses the value of a "uint" option: decimal digits, or hex
// digits after "0x" or "0X", fitting in bits bits. A leading zero does not
// mean octal: "010" is ten. The values come from a web form, a URL and the
// command line, where people write numbers with leading zeros and mean
// decimal, and flag masks in hex; nobody writes them in octal. Signs,
// underscores, spaces and the 0b and 0o prefixes are refused.
// On error the value is 0.
func ParseUint(s string, bits int) (uint64, error) {
	digits, base := s, 10
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits, base = s[2:], 16
	}
	n, err := strconv.ParseUint(digits, base, bits) // base 10 or 16: no prefixes, no underscores
	if err != nil {
		return 0, err
	}
	return n, nil
}

// OptionError is the error of Codec.NewQuery for option name: Field is
// "options.NAME" and Err wraps ErrBadValue with text.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func OptionError(protocol, name, text string) *Error {
	return &Error{Protocol: protocol, Field: "options." + name, Err: Detail(ErrBadValue, text)}
}

// OptionReader reads the options map of Codec.NewQuery against the codec's
// Options list, the same way for every protocol: an absent key takes the
// Option's Default, a key the list does not name is an error, and the
// first problem sticks (Err), as with the wire cursor:
//
//	r := codecs.ReadOptions(Protocol, options, opts)
//	flags := r.Uint("flags", 32)
//	seg := r.Bool("segmented")
//	if err := r.Err(); err != nil { return nil, err }
type OptionReader struct {
	protocol string
	known    []Option
	opts     map[string]string
	err      error
}

// ReadOptions starts reading opts. Unknown keys are reported at once; of
// several, the first in byte order, so the error does not depend on map
// order.
func ReadOptions(protocol string, known []Option, opts map[string]string) *OptionReader {
	r := &OptionReader{protocol: protocol, known: known, opts: opts}
	bad, found := "", false
	for k := range opts {
		if r.option(k) == nil && (!found || k < bad) {
			bad, found = k, true // "" is a key too (a URL's "&=1")
		}
	}
	if found {
		r.err = OptionError(protocol, bad, "unknown option")
	}
	return r
}

func (r *OptionReader) option(name string) *Option {
	for i := range r.known {
		if r.known[i].Name == name {
			return &r.known[i]
		}
	}
	return nil
}

// Value is the text of option name: the caller's without surrounding
// white space (as a form field may add), else its Default. It is "" after
// an error.
func (r *OptionReader) Value(name string) string {
	if r.err != nil {
		return ""
	}
	if v, ok := r.opts[name]; ok {
		return trimSpace(v)
	}
	if o := r.option(name); o != nil {
		return o.Default
	}
	r.err = OptionError(r.protocol, name, "not an option of this protocol") // a programming error, reported as data
	return ""
}

// Set reports whether option name has a non-empty value (its own or its
// Default), for options whose empty value means "do not send".
func (r *OptionReader) Set(name string) bool { return r.Value(name) != "" }

// Uint reads a "uint" option (ParseUint) of at most bits bits.
func (r *OptionReader) Uint(name string, bits int) uint64 {
	v := r.Value(name)
	if r.err != nil {
		return 0
	}
	n, err := ParseUint(v, bits)
	if err != nil {
		r.Fail(name, strconv.Quote(v)+" is not a "+strconv.Itoa(bits)+"-bit number (decimal, or hex after 0x)")
		return 0
	}
	return n
}

// Bool reads a "bool" option.
func (r *OptionReader) Bool(name string) bool {
	v := r.Value(name)
	if r.err != nil {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.Fail(name, strconv.Quote(v)+" is not true or false")
	}
	return b
}

// Choice reads a "choice" option: one of its Choices.
func (r *OptionReader) Choice(name string) string {
	v := r.Value(name)
	if r.err != nil {
		return ""
	}
	want := ""
	if o := r.option(name); o != nil {
		for i, c := range o.Choices {
			if c == v {
				return v
			}
			if i > 0 {
				want += ", "
			}
			want += c
		}
	}
	r.Fail(name, strconv.Quote(v)+" is not one of "+want)
	return ""
}

// Hex reads a "hex" option of exactly n bytes (2n hex digits) into dst.
func (r *OptionReader) Hex(name string, dst []byte) {
	v := r.Value(name)
	if r.err != nil {
		return
	}
	ok := len(v) == 2*len(dst)
	for i := 0; ok && i < len(dst); i++ {
		hi, lo := unhex(v[2*i]), unhex(v[2*i+1])
		ok = hi < 16 && lo < 16
		dst[i] = hi<<4 | lo
	}
	if !ok {
		clear(dst)
		r.Fail(name, strconv.Quote(v)+" is not "+strconv.Itoa(2*len(dst))+" hex digits")
	}
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 16
}

// Fail records that option name's value is wrong, for checks beyond its
// kind (a range); text says what was wanted. The first failure sticks.
func (r *OptionReader) Fail(name, text string) {
	if r.err == nil {
		r.err = OptionError(r.protocol, name, text)
	}
}

// Err returns the first problem found, or nil.
func (r *OptionReader) Err() error { return r.err }

// trimSpace drops ASCII white space around s.
func trimSpace(s string) string {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
