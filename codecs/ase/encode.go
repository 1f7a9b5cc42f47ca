package ase

import (
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// AppendRequest appends the query datagram: the byte QueryFull. It never
// fails.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	return append(dst, QueryFull), nil
}

// AppendResponse appends the reply r: the magic, the nine strings, the
// rules and their end marker, then each player's flags and the fields its
// flags select. A string longer than MaxStringLen, a rule with an empty
// key (which would end the rules), and a field whose flag bit is off but
// which holds text (it would be dropped) are errors.
func AppendResponse(dst []byte, r Response) ([]byte, error) {
	dst = append(dst, Magic...)
	var err error
	for _, h := range r.header() {
		if dst, err = appendString(dst, h.name, *h.v); err != nil {
			return dst, err
		}
	}
	for i, x := range r.Rules {
		if x.Key == "" {
			return dst, newError("rules["+itoa(i)+"].key", 0, "", codecs.Detail(codecs.ErrBadValue, "an empty key ends the rules"))
		}
		if dst, err = appendString(dst, "rules["+itoa(i)+"].key", x.Key); err != nil {
			return dst, err
		}
		if dst, err = appendString(dst, "rules["+itoa(i)+"].value", x.Value); err != nil {
			return dst, err
		}
	}
	dst = append(dst, 1) // the empty key that ends the rules
	for i := range r.Players {
		p := &r.Players[i]
		dst = append(dst, byte(p.Flags))
		for bit, name := range flagFields {
			v := *p.field(bit)
			if p.Flags&(1<<bit) == 0 {
				if v != "" {
					return dst, newError("players["+itoa(i)+"]."+name, 0, "", codecs.Detail(codecs.ErrBadValue, "text in a field whose flag bit is off"))
				}
				continue
			}
			if dst, err = appendString(dst, "players["+itoa(i)+"]."+name, v); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// appendString appends s with its length byte, which counts itself.
func appendString(dst []byte, field, s string) ([]byte, error) {
	if len(s) > MaxStringLen {
		return dst, newError(field, 0, "", wire.Detailf(codecs.ErrTooLong, "%d bytes; a string is at most %d", int64(len(s)), MaxStringLen))
	}
	return append(append(dst, byte(len(s)+1)), s...), nil
}
