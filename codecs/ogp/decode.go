package ogp

import (
	"encoding/binary"
	"strconv"
	"unsafe"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// magic starts every datagram of both versions.
const magic = "\xff\xff\xff\xffOGP\x00"

// Protocol is the name the package registers and puts in every error.
const Protocol = "ogp"

// scanBits reads the VarBitArray at b[off:end] without recording anything:
// its value, its length in bytes, and ok false when its last byte (bit 7
// clear) is not before end.
func scanBits(b []byte, off, end int) (v Bits, n int, ok bool) {
	for i := 0; off+i < end; i++ {
		c := b[off+i]
		if i < maxBitBytes {
			v |= Bits(c&0x7f) << (7 * i)
		}
		if c&0x80 == 0 {
			return v, i + 1, true
		}
	}
	return v, 0, false
}

// optLen is the size of the optional header fields flags selects.
func optLen(v Version, flags Bits) int {
	n := 0
	chal, rid := HeadChallenge, HeadRequestID
	if v == V004 {
		chal, rid = Head004Challenge, Head004RequestID
	}
	if flags&chal != 0 {
		n += 4
	}
	if flags&rid != 0 {
		n += 4
	}
	if flags&HeadSplit != 0 {
		n += 2 // UINT16 MaxBytesPerPacket, or UINT8 count + UINT8 number
	}
	return n
}

// sniff1 checks b's header as 1.0x: HeadSize >= 3 and inside b, a known
// Type, HeadFlags ending inside the header, and the optional fields it
// selects fitting in HeadSize. exact says they fill it.
func sniff1(b []byte) (ok, exact bool) {
	if len(b) < 11 || string(b[:8]) != magic {
		return false, false
	}
	size := int(b[8])
	if size < 3 || 8+size > len(b) {
		return false, false
	}
	if _, ok := typeOf(V1, b[9]); !ok {
		return false, false
	}
	flags, n, ok := scanBits(b, 10, 8+size)
	if !ok {
		return false, false
	}
	known := 2 + n + optLen(V1, flags)
	return known <= size, known == size
}

// sniff004 checks b's header as v0.04: HeadFlags, the optional fields it
// selects and a known Type byte, all inside b.
func sniff004(b []byte) bool {
	if len(b) < 10 || string(b[:8]) != magic {
		return false
	}
	flags, n, ok := scanBits(b, 8, len(b))
	if !ok {
		return false
	}
	at := 8 + n + optLen(V004, flags)
	if at >= len(b) {
		return false
	}
	_, ok = typeOf(V004, b[at])
	return ok
}

// detect picks the version of datagram b. When only one form's header is
// valid, that is it. When both are, each form is tried on the whole
// datagram and the best reading wins, in this order: 1.0x with a HeadSize
// exactly what its flags need, decoding cleanly; v0.04 with a defined body
// layout, cleanly; 1.0x with header padding, cleanly; the same three with
// trailing bytes; the exact 1.0x header failing; v0.04 with an opaque body
// (banned, none, rcon: they decode from almost anything); then 1.0x. ok is
// false when neither header is valid; v is then the form to report errors
// in.
func detect(b []byte) (v Version, ok bool) {
	ok1, exact := sniff1(b)
	ok004 := sniff004(b)
	switch {
	case ok1 && ok004:
		q1, _ := decodesAs(V1, b)
		q004, structured := decodesAs(V004, b)
		rank1 := [...]int{0, 3, 6}[q1] // padded 1.0x: failing, trailing, clean
		if exact {
			rank1 = [...]int{2, 5, 8}[q1]
		}
		rank004 := 1 // opaque
		if structured {
			rank004 = [...]int{0, 4, 7}[q004]
		}
		if rank004 > rank1 {
			return V004, true
		}
		return V1, true
	case ok1:
		return V1, true
	case ok004:
		return V004, true
	}
	if len(b) > 8 && b[8] < 3 {
		return V004, false // never a valid HeadSize; a v0.04 query's HeadFlags usually is
	}
	return V1, false
}

// decodesAs tries b in version v: quality 2 decodes cleanly, 1 with
// trailing bytes, 0 not at all. structured is false for bodies without a
// defined layout (ping, rcon, banned, master uplink).
func decodesAs(v Version, b []byte) (quality int, structured bool) {
	d := newDecoder(b, 0, nil)
	d.v, d.forced = v, true
	var h Header
	d.header(&h)
	if d.err() != nil {
		return 0, false
	}
	structured = h.Type == TypeDefault || h.Type == TypeError
	d = newDecoder(b, 0, nil)
	d.v, d.forced = v, true
	if h.Answer {
		var a Response
		d.answer(&a)
	} else {
		var q Request
		d.request(&q)
	}
	switch err := d.err(); {
	case err == nil:
		return 2, structured
	case isTrailing(err):
		return 1, structured
	}
	return 0, structured
}

// decoder holds the state of decoding one datagram.
type decoder struct {
	_        [0]func() // not comparable: no equality function to compile
	r        *wire.Reader
	spans    *[]codecs.Span
	v        Version
	utf8     bool
	forced   bool // v is set: do not detect it
	paths    bool // keep the field path stack (for spans, or for an error's path)
	flagsOff int  // offset of HeadFlags, for errors about the answer bit
	ridOff   int  // offset of the RequestID, for an answer that echoes another
	unknown  bool // flags the decoder had to ignore: unknown layout bits or bits past the 63rd
}

func newDecoder(b []byte, layer int, spans *[]codecs.Span) decoder {
	return decoder{r: wire.NewReader(Protocol, b, layer, spans), spans: spans, paths: spans != nil}
}

// enter and leave keep the field path only when it will be used: decoding
// without spans skips it, and decodes again with it when there is an error
// to name (see withPaths).
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *decoder) enter(name string, index int) {
	if d.paths {
		d.r.Enter(name, index)
	}
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *decoder) leave() {
	if d.paths {
		d.r.Leave()
	}
}

// withPaths is a decoder for b that keeps field paths: the typed decoders
// decode a second time with it when the first pass (without them) failed,
// so that the error names its field.
func withPaths(b []byte) decoder {
	d := newDecoder(b, 0, nil)
	d.paths = true
	return d
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *decoder) err() error { return d.r.Err() }

// text converts a wire string for display: UTF-8 when the header says so,
// else Latin-1.
func (d *decoder) text(b []byte) string {
	if d.utf8 {
		return string(b)
	}
	return codecs.Latin1(b)
}

// bits reads a VarBitArray of any length. Bytes past the ninth still count
// as part of it; their flags are dropped, and noted in d.unknown.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *decoder) bits(field string, names *bitNames) Bits {
	return d.bitsAs(field, names.appendList)
}

// bitsAs is bits with its own display of the value.
func (d *decoder) bitsAs(field string, show func([]byte, Bits) []byte) Bits {
	r := d.r
	if r.Failed() {
		return 0
	}
	start := r.Offset()
	v, n, ok := scanBits(r.Rest(), 0, r.Len())
	if !ok {
		r.Skip(field, r.Len()+1) // fails with ErrShort at the current offset
		return 0
	}
	raw := r.Skip(field, n)
	for i := maxBitBytes; i < n; i++ {
		if raw[i]&0x7f != 0 {
			d.unknown = true
		}
	}
	if r.Recording() {
		r.Mark(field, "varbits", start, string(show(nil, v)))
	}
	return v
}

// layoutBits reads a bit array that selects fields and notes flags the
// decoder cannot lay out.
func (d *decoder) layoutBits(field string, names *bitNames) Bits {
	v := d.bits(field, names)
	if v&^names.known() != 0 {
		d.unknown = true
	}
	return v
}

// varuint reads a VarUINT in the version's form: 1.0x UINT8 <= 0xFD, 0xFE
// + UINT16 or 0xFF + UINT32; v0.04 UINT8 <= 0xFE, else 0xFF + UINT16 <=
// 0xFFFE, else 0xFF 0xFF 0xFF + UINT32.
func (d *decoder) varuint(field string) uint32 {
	r := d.r
	if r.Failed() {
		return 0
	}
	start := r.Offset()
	rest := r.Rest()
	if len(rest) == 0 {
		r.Fail(field, codecs.ErrShort)
		return 0
	}
	var v uint32
	n := 1
	switch c := rest[0]; {
	case d.v == V1 && c <= 0xfd, d.v == V004 && c <= 0xfe:
		v = uint32(c)
	case d.v == V1 && c == 0xfe:
		n = 3
	case d.v == V1:
		n = 5
	case len(rest) >= 3 && binary.LittleEndian.Uint16(rest[1:]) != 0xffff:
		n = 3 // v0.04 16-bit form
	default:
		n = 7 // v0.04 32-bit form; or short, which Skip reports
	}
	b := r.Skip(field, n)
	if b == nil {
		return 0
	}
	switch n {
	case 3:
		v = uint32(binary.LittleEndian.Uint16(b[1:]))
	case 5:
		v = binary.LittleEndian.Uint32(b[1:])
	case 7:
		v = binary.LittleEndian.Uint32(b[3:])
	}
	if r.Recording() {
		r.Mark(field, "varuint", start, strconv.FormatUint(uint64(v), 10))
	}
	return v
}

// varsint reads a 1.0x VarSINT: INT8 -126..127, or 0x80 + INT16, or 0x81 + INT32.
func (d *decoder) varsint(field string) int32 {
	r := d.r
	if r.Failed() {
		return 0
	}
	start := r.Offset()
	rest := r.Rest()
	if len(rest) == 0 {
		r.Fail(field, codecs.ErrShort)
		return 0
	}
	n := 1
	switch rest[0] {
	case 0x80:
		n = 3
	case 0x81:
		n = 5
	}
	b := r.Skip(field, n)
	if b == nil {
		return 0
	}
	var v int32
	switch n {
	case 1:
		v = int32(int8(b[0]))
	case 3:
		v = int32(int16(binary.LittleEndian.Uint16(b[1:])))
	case 5:
		v = int32(binary.LittleEndian.Uint32(b[1:]))
	}
	if r.Recording() {
		r.Mark(field, "varsint", start, strconv.FormatInt(int64(v), 10))
	}
	return v
}

// str reads a SzString (aliasing the input, without the NUL).
func (d *decoder) str(field string) []byte {
	r := d.r
	if r.Failed() {
		return nil
	}
	start := r.Offset()
	rest := r.Rest()
	for i, c := range rest {
		if c == 0 {
			r.Skip(field, i+1)
			if r.Recording() {
				r.Mark(field, "cstring", start, d.text(rest[:i]))
			}
			return rest[:i:i]
		}
	}
	r.Fail(field, codecs.Detail(codecs.ErrShort, "string has no terminator"))
	return nil
}

// colors reads a StringColorInfo: VarUINT size, then entries filling
// exactly that many bytes. field names it ("name_colors").
func (d *decoder) colors(field string) Colors {
	r := d.r
	d.enter(field, -1)
	size := d.varuint("size")
	d.leave()
	if r.Failed() {
		return nil
	}
	if uint64(size) > uint64(r.Len()) {
		r.Fail(field, codecs.ErrShort)
		return nil
	}
	end := r.Offset() + int(size)
	raw := r.Rest()[:size:size]
	for i := 0; r.Offset() < end && !r.Failed(); i++ {
		d.enter(field, i)
		entry := r.Offset()
		d.varuint("delta_position")
		c := r.U8("color_value")
		if c >= 0x90 && c <= 0x9f {
			r.U16LE("color_value16")
		}
		if r.Offset() > end {
			r.FailAt("", entry, codecs.Detail(codecs.ErrBadValue, "colour entry overruns the colour info size"))
		}
		d.leave()
	}
	return raw
}

// DecodeHeader decodes the header of datagram b and returns it with the
// offset where the body starts. The version is detected from the bytes.
func DecodeHeader(b []byte) (Header, int, error) { return decodeHeader(b, asked{}) }

// asked is the version a conversation's query was sent in, when known: a
// server answers in the version it was asked in, and some answers read as
// either (a v0.04 challenge answer whose number starts with 00 is also a
// well-formed 1.0x query), so a conversation reads its replies in its own
// version instead of detecting it.
type asked struct {
	v   Version
	set bool
}

// apply makes d read in the asked version, when there is one.
func (a asked) apply(d *decoder) {
	if a.set {
		d.v, d.forced = a.v, true
	}
}

func decodeHeader(b []byte, a asked) (Header, int, error) {
	var h Header
	d := newDecoder(b, 0, nil)
	a.apply(&d)
	if d.header(&h); d.err() != nil {
		d = withPaths(b)
		a.apply(&d)
		d.header(&h)
	}
	return h, d.r.Offset(), d.err()
}

func (d *decoder) header(h *Header) {
	r := d.r
	b := r.Rest()
	if !d.forced {
		d.v, _ = detect(b)
	}
	v := d.v
	h.Version = v
	d.enter("header", -1)
	defer d.leave()

	if n := min(len(b), len(magic)); string(b[:n]) != magic[:n] {
		i := 0
		for b[i] == magic[i] {
			i++
		}
		r.FailAt("magic", i, codecs.ErrBadMagic)
		return
	}
	if r.Skip("prefix", 4) != nil && r.Recording() {
		r.Mark("prefix", "u32le", 0, "4294967295")
	}
	if r.Skip("id", 4) != nil && r.Recording() {
		r.Mark("id", "cstring", 4, "OGP")
	}

	sizeOff := r.Offset()
	var size uint8
	if v == V1 {
		size = r.U8("head_size")
		d.typ(h)
	}
	d.flagsOff = r.Offset()
	flags := d.bits("head_flags", headNames(v))
	h.Answer = flags&HeadAnswer != 0
	h.Split = flags&HeadSplit != 0
	if v == V1 {
		h.HasChallenge = flags&HeadChallenge != 0
		h.HasRequestID = flags&HeadRequestID != 0
		h.UTF8 = flags&HeadUTF8 != 0
		h.OtherFlags = flags &^ headKnown1
		d.utf8 = h.UTF8
	} else {
		h.HasRequestID = flags&Head004RequestID != 0
		h.HasChallenge = flags&Head004Challenge != 0
		h.OtherFlags = flags &^ headKnown004
	}
	if v == V1 && h.HasChallenge {
		h.Challenge = r.U32LE("challenge_number")
	}
	if h.HasRequestID {
		d.ridOff = r.Offset()
		h.RequestID = r.U32LE("request_id")
	}
	if v == V004 && h.HasChallenge {
		h.Challenge = r.U32LE("challenge_number")
	}
	if h.Split {
		if h.Answer {
			at := r.Offset()
			h.SplitCount = r.U8("split_packet_count")
			h.SplitNo = r.U8("split_packet_no")
			if !r.Failed() && (h.SplitCount == 0 || h.SplitNo >= h.SplitCount) {
				r.FailAt("split_packet_no", at, codecs.Detail(codecs.ErrBadValue, "packet number not below the packet count"))
			}
		} else {
			at := r.Offset()
			m := r.U16LE("max_bytes_per_packet")
			if !r.Failed() && (v == V1 && m != 0 && m < 500 || v == V004 && (m < 500 || m > 1500)) {
				r.FailAt("max_bytes_per_packet", at, codecs.Detail(codecs.ErrBadValue, "out of range"))
			}
			h.MaxBytesPerPacket = m
		}
	}
	if v == V004 {
		d.typ(h)
	}
	if v == V1 && !r.Failed() {
		known := r.Offset() - sizeOff
		switch {
		case int(size) < known:
			r.FailAt("head_size", sizeOff, codecs.Detail(codecs.ErrBadValue, "smaller than the header fields"))
		case int(size) > known:
			h.Padding = r.Bytes("padding", int(size)-known)
		}
	}
	if !r.Failed() && h.Type.answerOnly() && !h.Answer {
		r.FailAt("head_flags", d.flagsOff, codecs.Detail(codecs.ErrBadValue, "type "+h.Type.String()+" is sent by servers only"))
	}
}

// typ reads the Type byte.
func (d *decoder) typ(h *Header) {
	r := d.r
	at := r.Offset()
	c := r.Skip("type", 1)
	if c == nil {
		return
	}
	t, ok := typeOf(d.v, c[0])
	if !ok {
		r.FailAt("type", at, wire.Detailf(codecs.ErrUnknownCode, "type %d", int64(c[0])))
		return
	}
	h.Type = t
	if r.Recording() {
		r.Mark("type", "u8", at, wire.Msg("%d ", int64(c[0]))+t.name(d.v))
	}
}

// DecodeRequest decodes a query datagram of either version. On error it
// returns what was decoded so far. Byte slices alias b.
func DecodeRequest(b []byte) (Request, error) {
	var q Request
	err := q.Decode(b)
	return q, err
}

// Decode decodes query datagram b into q, overwriting it.
func (q *Request) Decode(b []byte) error { return q.decode(b, asked{}) }

// DecodeRequestAs decodes query datagram b in version v, for a reader that
// knows the version it speaks (a server): some v0.04 queries, those whose
// challenge number starts with a 00 byte, also read as well-formed 1.0x
// ones, and detection takes them for those.
func DecodeRequestAs(b []byte, v Version) (Request, error) {
	var q Request
	err := q.decode(b, asked{v: v, set: true})
	return q, err
}

func (q *Request) decode(b []byte, a asked) error {
	d := newDecoder(b, 0, nil)
	a.apply(&d)
	if d.request(q); d.err() != nil {
		d = withPaths(b)
		a.apply(&d)
		d.request(q)
	}
	return d.err()
}

func (d *decoder) request(q *Request) {
	_, _ = *d, *q // one nil check for the whole function
	*q = Request{}
	r := d.r
	d.header(&q.Header)
	if r.Failed() {
		return
	}
	if q.Answer {
		r.FailAt("header.head_flags", d.flagsOff, codecs.ErrNotQuery)
		return
	}
	if q.Type != TypeDefault {
		q.Raw = d.raw()
		return
	}
	if d.v == V1 && r.Len() == 0 {
		return // header only: the challenge request
	}
	q.Body = true
	q.Requests = d.layoutBits("requests", requestNames(d.v))
	if d.v == V1 {
		q.ServerInfoFields = d.layoutBits("server_info_fields", infoNames)
		q.ModFields = d.layoutBits("mod_fields", modNames)
		q.MapFields = d.layoutBits("map_fields", mapNames)
		q.TeamFields = d.layoutBits("team_fields", teamNames1)
		q.PlayerFields = d.layoutBits("player_fields", playerNames1)
		q.AddOnFields = d.layoutBits("addon_fields", addOnNames)
	} else {
		if q.Requests&Req004Teams != 0 {
			q.TeamFields = d.layoutBits("team_fields", teamNames004)
		}
		if q.Requests&Req004Players != 0 {
			q.PlayerFields = d.layoutBits("player_fields", playerNames004)
		}
		if q.Requests&Req004AddOns != 0 {
			q.AddOnFields = d.layoutBits("addon_fields", addOnNames)
		}
	}
	d.trailing()
}

// raw takes the rest of the datagram as an opaque body.
func (d *decoder) raw() []byte {
	if d.r.Len() == 0 {
		return nil
	}
	return d.r.Bytes("body", d.r.Len())
}

// trailing fails with ErrTrailing when bytes are left after a complete message.
func (d *decoder) trailing() {
	if !d.r.Empty() {
		d.r.Fail("", wire.Detailf(codecs.ErrTrailing, "%d bytes after the message", int64(d.r.Len())))
	}
}

// DecodeResponse decodes an answer datagram of either version, or a split
// answer after Reassemble. On error it returns what was decoded so far; an
// error wrapping codecs.ErrTrailing comes with the complete answer. Byte
// slices alias b.
//
// req is the query the answer answers, or nil when it is not known. When
// req carries a RequestID, an answer that does not echo it is an error
// wrapping codecs.ErrBadValue at field "header.request_id" (the decoded
// answer is returned too).
func DecodeResponse(b []byte, req *Request) (Response, error) {
	var a Response
	err := a.Decode(b, req)
	return a, err
}

// Decode is DecodeResponse into a, reusing a's list slices, so that
// decoding into the same Response again does not allocate.
func (a *Response) Decode(b []byte, req *Request) error {
	d := newDecoder(b, 0, nil)
	if d.answer(a); d.err() != nil {
		d = withPaths(b)
		d.answer(a)
	}
	err := d.err()
	if req == nil || !req.HasRequestID || err != nil && !isTrailing(err) {
		return err
	}
	switch {
	case !a.HasRequestID:
		return newError("header.request_id", d.flagsOff, "", wire.Detailf(codecs.ErrBadValue, "no RequestID echoed, the query sent %d", int64(req.RequestID)))
	case a.RequestID != req.RequestID:
		return newError("header.request_id", d.ridOff, "", wire.Detailf(codecs.ErrBadValue, "%d echoed, the query sent %d", int64(a.RequestID), int64(req.RequestID)))
	}
	return err
}

func (d *decoder) answer(a *Response) {
	teams, players, rules, addOns, limits := a.Teams[:0], a.Players[:0], a.Rules[:0], a.AddOns[:0], a.Limits[:0]
	*a = Response{Teams: teams, Players: players, Rules: rules, AddOns: addOns, Limits: limits}
	r := d.r
	d.header(&a.Header)
	if r.Failed() {
		return
	}
	if !a.Answer {
		r.FailAt("header.head_flags", d.flagsOff, codecs.Detail(codecs.ErrBadValue, "a query, not an answer"))
		return
	}
	switch a.Type {
	case TypeError:
		at := r.Offset()
		if c := r.Skip("error_id", 1); c != nil {
			a.ErrorID = ErrorID(c[0])
			if r.Recording() {
				r.Mark("error_id", "u8", at, wire.Msg("%d ", int64(c[0]))+a.ErrorID.String())
			}
		}
	case TypeDefault:
		a.GameID = r.U16LE("game_id")
		a.Requests = d.layoutBits("requests", requestNames(d.v))
		if d.v == V1 {
			d.answer1(a)
		} else {
			d.answer004(a)
		}
	default:
		a.Raw = d.raw()
		return
	}
	if !r.Failed() {
		d.trailing()
	}
}

// listCap checks a list's count n, read at offset at, against the bytes
// left, and returns how many entries to make room for. Entries of at least
// minEntry bytes are decoded until the count or the bytes run out, so room
// is made only for what the bytes can hold. Entries without fields take no
// bytes: such a list may not claim more entries than bytes remain.
func (d *decoder) listCap(field string, at int, n, minEntry int) (int, bool) {
	r := d.r
	if r.Failed() {
		return 0, false
	}
	if minEntry == 0 {
		if n > r.Len() {
			r.FailAt(field, at, wire.Detailf(codecs.ErrTooLong, "%d entries without fields in %d bytes", int64(n), int64(r.Len())))
			return 0, false
		}
		return n, true
	}
	return min(n, r.Len()/minEntry), true
}

// grow returns s emptied with room for n entries, reusing its array.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:0]
	}
	return make([]T, 0, n)
}

// answer1 decodes the body of a 1.0x Default query v1 answer after
// Requests: the server fields, then the lists.
func (d *decoder) answer1(a *Response) {
	colored := a.Requests&ReqColoredNames != 0
	if a.Requests&ReqServerInfo != 0 {
		d.enter("server_info", -1)
		d.serverInfo1(&a.Server, colored)
		d.leave()
	}
	d.lists(a, colored)
}

// lists decodes the lists the answer's Requests select, in wire order.
func (d *decoder) lists(a *Response, colored bool) {
	lb := listBits(d.v)
	for k := range lb {
		if a.Requests&lb[k] != 0 {
			d.list(a, k, colored)
		}
	}
}

// listNames are the count, fields and entry span names of the lists, by
// listTeams... ("" for lists without a fields bit array).
var listNames = [5][3]string{
	{"team_count", "team_fields", "teams"},
	{"player_count", "player_fields", "players"},
	{"rule_count", "", "rules"},
	{"addon_count", "addon_fields", "addons"},
	{"limit_count", "", "limits"},
}

// list decodes list k (listTeams...) of a: its VarUINT count, then when it
// has entries its fields bit array, then each entry. The entries reuse the
// answer's slice.
func (d *decoder) list(a *Response, k int, colored bool) {
	_, _ = *d, *a // one nil check for the whole function
	names := &listNames[k]
	r := d.r
	at := r.Offset()
	n := int(d.varuint(names[0]))
	if n == 0 || r.Failed() {
		return
	}
	var f Bits
	size := 2
	switch k {
	case listTeams:
		f = d.layoutBits(names[1], teamNames(d.v))
		a.TeamFields = f
		size = entrySize(teamFields[:], f, d.v, colored)
	case listPlayers:
		f = d.layoutBits(names[1], playerNames(d.v))
		a.PlayerFields = f
		size = entrySize(playerFields[:], f, d.v, colored)
	case listAddOns:
		f = d.layoutBits(names[1], addOnNames)
		a.AddOnFields = f
		size = entrySize(addOnFields[:], f, d.v, false)
	}
	room, ok := d.listCap(names[0], at, n, size)
	if !ok {
		return
	}
	switch k {
	case listTeams:
		a.Teams = grow(a.Teams, room)
	case listPlayers:
		a.Players = grow(a.Players, room)
	case listRules:
		a.Rules = grow(a.Rules, room)
	case listAddOns:
		a.AddOns = grow(a.AddOns, room)
	default:
		a.Limits = grow(a.Limits, room)
	}
	for i := 0; i < n && !r.Failed(); i++ {
		d.enter(names[2], i)
		g := d.openGroup()
		switch k {
		case listTeams:
			a.Teams = append(a.Teams, Team{})
			decodeFields(d, unsafe.Pointer(&a.Teams[len(a.Teams)-1]), teamFields[:], f, colored)
		case listPlayers:
			a.Players = append(a.Players, Player{})
			decodeFields(d, unsafe.Pointer(&a.Players[len(a.Players)-1]), playerFields[:], f, colored)
		case listRules:
			a.Rules = append(a.Rules, Rule{})
			x := &a.Rules[len(a.Rules)-1]
			x.Key = d.str("key")
			x.Value = d.str("value")
		case listAddOns:
			a.AddOns = append(a.AddOns, AddOn{})
			decodeFields(d, unsafe.Pointer(&a.AddOns[len(a.AddOns)-1]), addOnFields[:], f, false)
		default:
			a.Limits = append(a.Limits, Limit{})
			d.limit(&a.Limits[len(a.Limits)-1])
		}
		d.closeGroup(g)
		d.leave()
	}
}

// answer004 decodes the body of a v0.04 Default query v1 answer after
// Requests: the lists first, then the server fields in the order of their
// Requests flags.
func (d *decoder) answer004(a *Response) {
	d.lists(a, false)
	s := &a.Server
	d.enter("server_info", -1)
	for _, i := range info004Order {
		f := &infoFields[i]
		if fm := f.formIn(V004, a.Requests, false); fm != absent {
			d.value(fm, f.name, f.names, f.at(unsafe.Pointer(s)))
		}
	}
	d.leave()
}

// serverInfo1 decodes 1.0x ServerInfoFields and the fields they select.
func (d *decoder) serverInfo1(s *ServerInfo, colored bool) {
	s.Fields = d.layoutBits("fields", infoNames)
	decodeFields(d, unsafe.Pointer(s), infoFields[:], s.Fields, colored)
}

// openGroup records the span of one list entry ahead of its fields, and
// returns its index for closeGroup (-1 when not recording).
func (d *decoder) openGroup() int {
	if !d.r.Recording() || d.r.Failed() {
		return -1
	}
	d.r.Mark("", "group", d.r.Offset(), "")
	return len(*d.spans) - 1
}

// closeGroup extends the entry's span over the bytes its fields took.
func (d *decoder) closeGroup(i int) {
	if i >= 0 {
		(*d.spans)[i].End = d.r.Offset()
	}
}

func (d *decoder) limit(x *Limit) {
	r := d.r
	if d.v == V1 {
		t := d.bitsAs("type", appendLimitType1)
		x.HasLeft = t&limitLeftFlag != 0
		x.Type = uint8(t>>1) & 0x0f
		x.OtherFlags = t &^ 0x1f
	} else {
		t := r.U8("type")
		x.HasLeft = t&0x80 != 0
		x.Type = t & 0x7f
	}
	x.Limit = d.varuint("limit")
	if x.HasLeft {
		x.Left = d.varuint("left")
	}
}

// appendServerFlags1 shows 1.0x server flags by meaning: "dedicated,linux,password".
func appendServerFlags1(dst []byte, f Bits) []byte {
	dst = append(append(append(dst, ServerType(f)...), ','), OS(f)...)
	if f&SFPassword != 0 {
		dst = append(dst, ",password"...)
	}
	if f&SFProxy != 0 {
		dst = append(dst, ",proxy"...)
	}
	if f>>7 != 0 {
		dst = serverFlagNames1.appendList(append(dst, ','), f&^0x7f)
	}
	return dst
}

// appendLimitType1 shows a 1.0x LimitType: "time,limit_left".
func appendLimitType1(dst []byte, t Bits) []byte {
	dst = append(dst, limitTypeName(uint8(t>>1)&0x0f)...)
	if t&limitLeftFlag != 0 {
		dst = append(dst, ",limit_left"...)
	}
	if t>>5 != 0 {
		dst = limitNames1.appendList(append(dst, ','), t&^0x1f)
	}
	return dst
}
