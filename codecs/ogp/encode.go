package ogp

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// appendBits appends b as a VarBitArray: seven flags a byte, bit 7 set on
// every byte but the last, and no trailing all-zero bytes (an empty set is
// one 00 byte).
func appendBits(dst []byte, b Bits) []byte {
	for {
		c := byte(b & 0x7f)
		b >>= 7
		if b == 0 {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

// appendVarUint appends x as a VarUINT of version v, in its shortest form.
func appendVarUint(dst []byte, v Version, x uint32) []byte {
	if v == V004 {
		switch {
		case x <= 0xfe:
			return append(dst, byte(x))
		case x <= 0xfffe:
			return binary.LittleEndian.AppendUint16(append(dst, 0xff), uint16(x))
		}
		return binary.LittleEndian.AppendUint32(append(dst, 0xff, 0xff, 0xff), x)
	}
	switch {
	case x <= 0xfd:
		return append(dst, byte(x))
	case x <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(dst, 0xfe), uint16(x))
	}
	return binary.LittleEndian.AppendUint32(append(dst, 0xff), x)
}

// appendVarSint appends x as a 1.0x VarSINT, in its shortest form. -127
// and -128 are the markers of the longer forms, so they take three bytes.
func appendVarSint(dst []byte, x int32) []byte {
	switch {
	case x >= -126 && x <= 127:
		return append(dst, byte(int8(x)))
	case x >= -0x8000 && x <= 0x7fff:
		return binary.LittleEndian.AppendUint16(append(dst, 0x80), uint16(int16(x)))
	}
	return binary.LittleEndian.AppendUint32(append(dst, 0x81), uint32(x))
}

// encoder appends one datagram. Its first error sticks; field paths are
// only built for that error.
type encoder struct {
	b     []byte
	v     Version
	err   error
	list  string // the list or object being written ("players", "server_info"), or ""
	index int    // the entry of the list, or -1
	obj   string // the object inside it being written ("map"), or ""
}

func (e *encoder) fail(field string, err error) {
	if e.err != nil {
		return
	}
	path := field
	if e.list != "" {
		path = e.list
		if e.index >= 0 {
			path += wire.Msg("[%d]", int64(e.index))
		}
		if e.obj != "" {
			path += "." + e.obj
		}
		if field != "" {
			path += "." + field
		}
	}
	e.err = newError(path, len(e.b), "", err)
}

func (e *encoder) bits(b Bits) { e.b = appendBits(e.b, b) }

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (e *encoder) varuint(x uint32) { e.b = appendVarUint(e.b, e.v, x) }

func (e *encoder) varsint(x int32) { e.b = appendVarSint(e.b, x) }

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (e *encoder) u16(x uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, x) }

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (e *encoder) u32(x uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, x) }

// str appends a SzString; a NUL inside s cannot be sent.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (e *encoder) str(field string, s []byte) {
	if bytes.IndexByte(s, 0) >= 0 {
		e.fail(field, codecs.Detail(codecs.ErrBadValue, "string contains a NUL byte"))
	}
	e.b = append(append(e.b, s...), 0)
}

// u8 appends a v0.04 UINT8 field, which must be in 0..255.
func (e *encoder) u8(field string, x int64) {
	if x < 0 || x > 0xff {
		e.fail(field, wire.Detailf(codecs.ErrBadValue, "%d does not fit in a byte", x))
	}
	e.b = append(e.b, byte(x))
}

// colors appends a StringColorInfo: its size, then the entries.
func (e *encoder) colors(field string, c Colors) {
	if !validColors(c) {
		e.fail(field, codecs.Detail(codecs.ErrBadValue, "malformed colour entries"))
	}
	e.varuint(uint32(len(c)))
	e.b = append(e.b, c...)
}

// validColors reports whether c is a sequence of whole colour entries.
func validColors(c Colors) bool {
	for i := 0; i < len(c); {
		switch x := c[i]; {
		case x <= 0xfd:
			i++
		case x == 0xfe:
			i += 3
		default:
			i += 5
		}
		if i >= len(c) {
			return false
		}
		v := c[i]
		i++
		if v >= 0x90 && v <= 0x9f {
			i += 2
		}
		if i > len(c) {
			return false
		}
	}
	return true
}

// header appends the magic and the header of h, as a query or an answer.
func (e *encoder) header(h *Header, answer bool) {
	e.b = append(e.b, magic...)
	v := h.Version
	if v != V1 && v != V004 {
		e.fail("header.version", codecs.Detail(codecs.ErrBadValue, v.String()))
		return
	}
	code, ok := h.Type.Code(v)
	if !ok {
		e.fail("header.type", codecs.Detail(codecs.ErrBadValue, "version "+v.String()+" has no type "+h.Type.String()))
		return
	}
	if !answer && h.Type.answerOnly() {
		e.fail("header.type", codecs.Detail(codecs.ErrBadValue, "type "+h.Type.String()+" is sent by servers only"))
		return
	}
	flags := h.OtherFlags
	set := func(on bool, b Bits) {
		if on {
			flags |= b
		}
	}
	if v == V1 {
		flags &^= headKnown1
		set(h.HasChallenge, HeadChallenge)
		set(h.HasRequestID, HeadRequestID)
		set(h.UTF8, HeadUTF8)
	} else {
		flags &^= headKnown004
		set(h.HasChallenge, Head004Challenge)
		set(h.HasRequestID, Head004RequestID)
		if len(h.Padding) > 0 {
			e.fail("header.padding", codecs.Detail(codecs.ErrBadValue, "v0.04 has no HeadSize"))
		}
	}
	set(answer, HeadAnswer)
	set(h.Split, HeadSplit)

	start := len(e.b)
	if v == V1 {
		e.b = append(e.b, 0, code) // HeadSize is filled in below
	}
	e.bits(flags)
	if v == V1 && h.HasChallenge {
		e.u32(h.Challenge)
	}
	if h.HasRequestID {
		e.u32(h.RequestID)
	}
	if v == V004 && h.HasChallenge {
		e.u32(h.Challenge)
	}
	if h.Split {
		if answer {
			if h.SplitCount == 0 || h.SplitNo >= h.SplitCount {
				e.fail("header.split_packet_no", codecs.Detail(codecs.ErrBadValue, "packet number not below the packet count"))
			}
			e.b = append(e.b, h.SplitCount, h.SplitNo)
		} else {
			m := h.MaxBytesPerPacket
			if v == V1 && m != 0 && m < 500 || v == V004 && (m < 500 || m > 1500) {
				e.fail("header.max_bytes_per_packet", codecs.Detail(codecs.ErrBadValue, "out of range"))
			}
			e.u16(m)
		}
	}
	if v == V004 {
		e.b = append(e.b, code)
		return
	}
	e.b = append(e.b, h.Padding...)
	size := len(e.b) - start
	if size > 0xff {
		e.fail("header.head_size", wire.Detailf(codecs.ErrTooLong, "%d header bytes", int64(size)))
	}
	e.b[start] = byte(size)
}

// AppendRequest appends query q to dst. It clears the answer flag. A 1.0x
// TypeDefault query without Body is the header-only challenge request.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	e := encoder{b: dst, v: q.Version}
	e.header(&q.Header, false)
	switch {
	case q.Type == TypeDefault && (q.Body || q.Version == V004):
		e.bits(q.Requests)
		if q.Version == V1 {
			for _, b := range [...]Bits{q.ServerInfoFields, q.ModFields, q.MapFields, q.TeamFields, q.PlayerFields, q.AddOnFields} {
				e.bits(b)
			}
			break
		}
		if q.Requests&Req004Teams != 0 {
			e.bits(q.TeamFields)
		}
		if q.Requests&Req004Players != 0 {
			e.bits(q.PlayerFields)
		}
		if q.Requests&Req004AddOns != 0 {
			e.bits(q.AddOnFields)
		}
	case q.Type != TypeDefault:
		e.b = append(e.b, q.Raw...)
	}
	return e.b, e.err
}

// AppendResponse appends answer a to dst as one datagram (see SplitResponse
// for answers that must be split). It sets the answer flag. Fields whose
// bits are clear are not written; lists are written with their fields
// arrays only when they have entries.
func AppendResponse(dst []byte, a Response) ([]byte, error) {
	e := encoder{b: dst, v: a.Version}
	e.header(&a.Header, true)
	e.body(&a)
	return e.b, e.err
}

// body appends everything after the header.
func (e *encoder) body(a *Response) {
	switch a.Type {
	case TypeError:
		e.b = append(e.b, byte(a.ErrorID))
	case TypeDefault:
		e.u16(a.GameID)
		e.bits(a.Requests)
		if e.v == V1 {
			e.answer1(a)
		} else {
			e.answer004(a)
		}
	default:
		e.b = append(e.b, a.Raw...)
	}
}

func (e *encoder) answer1(a *Response) {
	colored := a.Requests&ReqColoredNames != 0
	if a.Requests&ReqServerInfo != 0 {
		e.serverInfo1(&a.Server, colored)
	}
	e.lists(a, colored)
}

// lists writes the lists the answer's Requests select, in wire order.
func (e *encoder) lists(a *Response, colored bool) {
	lb := listBits(e.v)
	if a.Requests&lb[listTeams] != 0 {
		e.teams(a, colored)
	}
	if a.Requests&lb[listPlayers] != 0 {
		e.players(a, colored)
	}
	if a.Requests&lb[listRules] != 0 {
		e.rules(a)
	}
	if a.Requests&lb[listAddOns] != 0 {
		e.addOns(a)
	}
	if a.Requests&lb[listLimits] != 0 {
		e.limits(a)
	}
}

func (e *encoder) answer004(a *Response) {
	e.lists(a, false)
	e.enter("server_info", -1)
	for _, i := range info004Order {
		f := &infoFields[i]
		if fm := f.formIn(V004, a.Requests, false); fm != absent {
			e.value(fm, f.name, f.at(unsafe.Pointer(&a.Server)))
		}
	}
	e.leave()
}

func (e *encoder) serverInfo1(s *ServerInfo, colored bool) {
	e.bits(s.Fields)
	e.enter("server_info", -1)
	encodeFields(e, unsafe.Pointer(s), infoFields[:], s.Fields, colored)
	e.leave()
}

// enter and leave name the list entry (or, with index -1, the object)
// being written, for errors.
func (e *encoder) enter(list string, i int) { e.list, e.index = list, i }
func (e *encoder) leave()                   { e.list, e.obj = "", "" }

func (e *encoder) teams(a *Response, colored bool) {
	e.varuint(uint32(len(a.Teams)))
	if len(a.Teams) == 0 {
		return
	}
	f := a.TeamFields
	e.bits(f)
	for i := range a.Teams {
		e.enter("teams", i)
		encodeFields(e, unsafe.Pointer(&a.Teams[i]), teamFields[:], f, colored)
		e.leave()
	}
}

func (e *encoder) players(a *Response, colored bool) {
	e.varuint(uint32(len(a.Players)))
	if len(a.Players) == 0 {
		return
	}
	f := a.PlayerFields
	e.bits(f)
	for i := range a.Players {
		e.enter("players", i)
		encodeFields(e, unsafe.Pointer(&a.Players[i]), playerFields[:], f, colored)
		e.leave()
	}
}

func (e *encoder) rules(a *Response) {
	e.varuint(uint32(len(a.Rules)))
	for i := range a.Rules {
		e.enter("rules", i)
		e.str("key", a.Rules[i].Key)
		e.str("value", a.Rules[i].Value)
		e.leave()
	}
}

func (e *encoder) addOns(a *Response) {
	e.varuint(uint32(len(a.AddOns)))
	if len(a.AddOns) == 0 {
		return
	}
	f := a.AddOnFields
	e.bits(f)
	for i := range a.AddOns {
		e.enter("addons", i)
		encodeFields(e, unsafe.Pointer(&a.AddOns[i]), addOnFields[:], f, false)
		e.leave()
	}
}

func (e *encoder) limits(a *Response) {
	e.varuint(uint32(len(a.Limits)))
	for i := range a.Limits {
		x := &a.Limits[i]
		e.enter("limits", i)
		if e.v == V1 {
			if x.Type > 0x0f {
				e.fail("type", codecs.Detail(codecs.ErrBadValue, "1.0x limit types are 0..15"))
			}
			t := x.OtherFlags&^0x1f | Bits(x.Type&0x0f)<<1
			if x.HasLeft {
				t |= limitLeftFlag
			}
			e.bits(t)
		} else {
			if x.Type > 0x7f {
				e.fail("type", codecs.Detail(codecs.ErrBadValue, "v0.04 limit types are 0..127"))
			}
			t := x.Type & 0x7f
			if x.HasLeft {
				t |= 0x80
			}
			e.b = append(e.b, t)
		}
		e.varuint(x.Limit)
		if x.HasLeft {
			e.varuint(x.Left)
		}
		e.leave()
	}
}
