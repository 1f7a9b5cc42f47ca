package gamespy3

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// AppendRequest appends the wire form of q to dst: the challenge request
// (which carries nothing after the session id, or ChallengePadding when
// Padded), or the stat query with
// the challenge when HasChallenge, then FullPayload (MinecraftPayload with
// Minecraft, which needs a challenge).
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	switch {
	case q.Type == TypeChallenge && (q.HasChallenge || q.Minecraft):
		return dst, encodeError("challenge", 7, codecs.Detail(codecs.ErrBadValue, "a challenge request carries no challenge and no payload"))
	case q.Type == TypeStat && q.Padded:
		return dst, encodeError("padding", 7, codecs.Detail(codecs.ErrBadValue, "only a challenge request is padded"))
	case q.Type != TypeChallenge && q.Type != TypeStat:
		return dst, encodeError("type", 2, wire.Detailf(codecs.ErrBadValue, "packet type %d", int64(q.Type)))
	case q.Minecraft && !q.HasChallenge:
		return dst, encodeError("challenge", 7, codecs.Detail(codecs.ErrBadValue, "a Minecraft full stat query carries a challenge"))
	}
	dst = append(dst, Magic0, Magic1, byte(q.Type))
	dst = binary.BigEndian.AppendUint32(dst, q.Session)
	if q.Type == TypeChallenge {
		if q.Padded {
			dst = append(dst, ChallengePadding[:]...)
		}
		return dst, nil
	}
	if q.HasChallenge {
		dst = binary.BigEndian.AppendUint32(dst, uint32(q.Challenge))
	}
	p := FullPayload
	if q.Minecraft {
		p = MinecraftPayload
	}
	return append(dst, p[:]...), nil
}

func encodeError(field string, off int, err error) error {
	return newError(field, off, "", err)
}

// AppendResponse appends one datagram a server would send: a challenge
// reply (resp.Challenge, which must read as a 32-bit number), or one
// packet of a stat reply: the split header when resp.Split (else the
// packet must be number 0 and the last), the server keys and the empty
// key when it is packet 0, then the sections. Keys, field names and
// values must be non-empty (an empty one ends its list) and hold no NUL;
// a field name must not start with a byte <= 2 (a section marker), and a
// value must not look like a stray token (Rule.Stray), or it would not
// read back. Text is written as Latin-1.
func AppendResponse(dst []byte, resp Response) ([]byte, error) {
	start := len(dst)
	w := writer{b: dst, start: start}
	w.b = append(w.b, byte(resp.Type))
	w.b = binary.BigEndian.AppendUint32(w.b, resp.Session)
	switch resp.Type {
	case TypeChallenge:
		if _, ok := parseChallenge(resp.Challenge); !ok {
			return w.b, encodeError("challenge", w.off(), codecs.Detail(codecs.ErrBadValue, strconv.Quote(resp.Challenge)+" is not a 32-bit number"))
		}
		w.b = append(append(w.b, resp.Challenge...), 0)
		return w.b, nil
	case TypeStat:
	default:
		return w.b, encodeError("type", 0, wire.Detailf(codecs.ErrBadValue, "packet type %d", int64(resp.Type)))
	}
	switch {
	case resp.Split && (resp.Number < 0 || resp.Number >= MaxPackets):
		return w.b, encodeError("packet", w.off(), wire.Detailf(codecs.ErrBadValue, "packet number %d", int64(resp.Number)))
	case resp.Split:
		id := byte(resp.Number)
		if resp.Last {
			id |= LastPacket
		}
		w.b = append(w.b, splitTag...)
		w.b = append(w.b, 0, id, resp.Extra)
	case resp.Number != 0 || !resp.Last:
		return w.b, encodeError("packet", w.off(), codecs.Detail(codecs.ErrBadValue, "a packet without the split header is the whole reply (number 0, last)"))
	}
	if resp.Number != 0 && len(resp.Rules) > 0 {
		return w.b, encodeError("rules", w.off(), codecs.Detail(codecs.ErrBadValue, "server keys are sent in packet 0 only"))
	}
	if resp.Number == 0 {
		for i, kv := range resp.Rules {
			field := "rules[" + strconv.Itoa(i) + "]"
			if i == 0 && !resp.Split && kv.Key == splitTag {
				return w.b, encodeError(field+".key", w.off(), codecs.Detail(codecs.ErrBadValue, "a first key \"splitnum\" reads as a split header"))
			}
			if err := w.text(field+".key", kv.Key); err != nil {
				return w.b, err
			}
			for j, s := range kv.Stray {
				if !stray([]byte(s)) {
					return w.b, encodeError(field+".stray["+strconv.Itoa(j)+"]", w.off(), codecs.Detail(codecs.ErrBadValue, strconv.Quote(s)+" is not a stray token (p and digits)"))
				}
				w.b = append(append(w.b, s...), 0)
			}
			if stray([]byte(kv.Value)) {
				return w.b, encodeError(field+".value", w.off(), codecs.Detail(codecs.ErrBadValue, strconv.Quote(kv.Value)+" reads as a stray token"))
			}
			if strings.IndexByte(kv.Value, 0) >= 0 {
				return w.b, encodeError(field+".value", w.off(), codecs.Detail(codecs.ErrBadValue, "text holding a NUL"))
			}
			w.b = append(codecs.ToLatin1(w.b, kv.Value), 0)
		}
		w.b = append(w.b, 0)
	}
	for i, s := range resp.Sections {
		field := "sections[" + strconv.Itoa(i) + "]"
		switch {
		case s.Marker > SectionTeams:
			return w.b, encodeError(field+".marker", w.off(), wire.Detailf(codecs.ErrBadValue, "marker %d; 1 (players) or 2 (teams)", int64(s.Marker)))
		case s.Marker == 0 && i > 0 && !resp.Sections[i-1].End:
			return w.b, encodeError(field+".marker", w.off(), codecs.Detail(codecs.ErrBadValue, "a section without a marker must follow an ended one"))
		case s.Marker == 0 && len(s.Fields) == 0 && !s.End:
			return w.b, encodeError(field, w.off(), codecs.Detail(codecs.ErrBadValue, "an empty section without a marker or an end"))
		case s.Marker != 0:
			w.b = append(w.b, s.Marker)
		}
		for j, f := range s.Fields {
			ff := field + ".fields[" + strconv.Itoa(j) + "]"
			if f.Name != "" && f.Name[0] <= SectionTeams {
				return w.b, encodeError(ff+".name", w.off(), codecs.Detail(codecs.ErrBadValue, "a name starting with a byte <= 2 reads as a section marker"))
			}
			if err := w.text(ff+".name", f.Name); err != nil {
				return w.b, err
			}
			if f.Offset < 0 || f.Offset > 0xff {
				return w.b, encodeError(ff+".offset", w.off(), wire.Detailf(codecs.ErrBadValue, "offset %d is not a byte", int64(f.Offset)))
			}
			w.b = append(w.b, byte(f.Offset))
			for k, v := range f.Values {
				if err := w.text(ff+".values["+strconv.Itoa(f.Offset+k)+"]", v); err != nil {
					return w.b, err
				}
			}
			w.b = append(w.b, 0)
		}
		if s.End {
			w.b = append(w.b, 0)
		}
	}
	if n := len(w.b) - start; n > MaxReplyBytes {
		return w.b, encodeError("datagram", MaxReplyBytes, wire.Detailf(codecs.ErrTooLong, "%d bytes; a packet is at most %d", int64(n), MaxReplyBytes))
	}
	return w.b, nil
}

type writer struct {
	b     []byte
	start int
}

func (w *writer) off() int { return len(w.b) - w.start }

// text appends s as Latin-1 and its NUL; s must be non-empty and hold no
// NUL.
func (w *writer) text(field, s string) error {
	if s == "" || strings.IndexByte(s, 0) >= 0 {
		return encodeError(field, w.off(), codecs.Detail(codecs.ErrBadValue, "empty, or text holding a NUL"))
	}
	w.b = append(codecs.ToLatin1(w.b, s), 0)
	return nil
}
