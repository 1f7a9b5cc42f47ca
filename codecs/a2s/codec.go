package a2s

import (
	"encoding/binary"
	"errors"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Codec is the codecs.Codec of Valve's A2S server queries and the Steam
// master list. Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Valve A2S" }
func (*Codec) DefaultPort() int { return DefaultPort }

// Detect: a datagram that decodes completely as a query, a reply or a
// master message is Certain; a known type after FF FF FF FF, or a packet 0
// of a split message, is Likely; later split parts are Weak (eight bytes
// of header say little).
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case len(b) > 0 && b[0] == MasterQuery:
		if _, err := DecodeMasterRequest(b); err == nil {
			return codecs.KindMasterQuery, codecs.Certain
		}
	case isMasterPage(b):
		if _, err := DecodeMasterReply(b); err == nil {
			return codecs.KindMasterList, codecs.Certain
		}
		return codecs.KindMasterList, codecs.Likely
	case hasMagic(b, 0) && len(b) >= 5:
		switch t := Type(b[4]); t {
		case TypeInfoRequest, TypePlayerRequest, TypeRulesRequest:
			if _, err := DecodeRequest(b); err == nil {
				return codecs.KindQuery, codecs.Certain
			}
			return codecs.KindQuery, codecs.Likely
		case TypeChallenge, TypeInfo, TypeInfoGoldSrc, TypePlayers, TypeRules:
			kind := codecs.KindResponse
			if t == TypeChallenge {
				kind = codecs.KindChallenge
			}
			if _, err := DecodeResponse(b, nil); err == nil {
				return kind, codecs.Certain
			}
			return kind, codecs.Likely
		}
	case len(b) >= 9 && binary.LittleEndian.Uint32(b) == headerSplit:
		if _, ok := formOf(b); ok {
			return codecs.KindResponse, codecs.Likely
		}
		return codecs.KindResponse, codecs.Weak
	}
	return "", codecs.NotMine
}

// CheckQuery accepts a complete A2S_INFO (with or without a challenge),
// A2S_PLAYER or A2S_RULES query, or a Steam master query whose seed is an
// address and whose filter is printable, of at most MaxQueryLen bytes.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	if len(b) > 0 && b[0] == MasterQuery {
		q, err := DecodeMasterRequest(b)
		if err != nil {
			return err
		}
		for i := 0; i < len(q.Filter); i++ {
			if c := q.Filter[i]; c < 0x20 || c > 0x7e {
				return newDetailf("filter", len(b)-1-len(q.Filter)+i, "", codecs.ErrBadValue, "byte %d is not printable", int64(c))
			}
		}
		return nil
	}
	_, err := DecodeRequest(b)
	return err
}

// challengeMarker replaces the challenge in a QueryKey. Five bytes where
// a query has four, so that no query's key equals another query.
const challengeMarker = "\x00chal"

// QueryKey implements codecs.QueryKeyer. A challenge is handed to one
// client address, and every user of a relay shares one, so a challenged
// query of one kind gets one key whatever its challenge: its bytes with
// the challenge replaced by a fixed marker. The unchallenged A2S_INFO and
// the challenge requests (FF FF FF FF) keep their own bytes as their key,
// so a cached challenge reply is never served for a challenged query, nor
// the reverse. Nil when b is not a query CheckQuery accepts.
func (c *Codec) QueryKey(b []byte) []byte {
	if c.CheckQuery(b) != nil {
		return nil
	}
	if len(b) > 0 && b[0] == MasterQuery {
		return b
	}
	q, _ := DecodeRequest(b)
	if !q.HasChallenge || q.Challenge == ChallengeRequest {
		return b
	}
	k := make([]byte, 0, len(b)+1)
	k = append(k, b[:len(b)-4]...)
	return append(k, challengeMarker...)
}

// wireLayer names datagram i of n in errors, spans and layers.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func wireLayer(i, n int) string {
	if n == 1 {
		return "wire"
	}
	return wire.Msg("wire %d", int64(i))
}

// inLayer sets the layer of a *codecs.Error that has none.
func inLayer(err error, layer string) error {
	if e, ok := errors.AsType[*codecs.Error](err); ok && e.Layer == "" {
		e.Layer = layer
	}
	return err
}

// Caps of one Decode as a whole: a conversation asks at most three
// queries (INFO, PLAYER, RULES), each reply within the per-query caps,
// and its queries and challenges come on top (at most maxChallenges per
// query), so four times the per-query caps hold any conversation.
const (
	maxDecodeDatagrams = 4 * MaxDatagrams
	maxDecodeBytes     = 4 * MaxBytes
)

// splitCount is what capped has kept of one split message.
type splitCount struct {
	_       [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	id      uint32
	n, size int
}

// capped returns the datagrams Decode reads, in order, and how many it
// drops. The caps are per reply message, as the relay's are per query: a
// split message keeps at most MaxDatagrams parts and MaxBytes bytes (its
// later parts are dropped), so a full rules reply after the info and
// player replies is read whole. Past maxDecodeDatagrams datagrams or
// maxDecodeBytes bytes in all, the rest are dropped. A master's pages
// (the first datagram is one) are capped at MaxMasterPages instead.
func capped(datagrams [][]byte) (kept [][]byte, dropped int) {
	if isMasterPage(datagrams[0]) {
		n, size := 0, 0
		for n < len(datagrams) && n < MaxMasterPages && size+len(datagrams[n]) <= MaxMasterPages*1500 {
			size += len(datagrams[n])
			n++
		}
		return datagrams[:n], len(datagrams) - n
	}
	kept = datagrams // until the first drop: no copy
	var sets []splitCount
	total, size, full := 0, 0, false
	for i, b := range datagrams {
		full = full || total == maxDecodeDatagrams || size+len(b) > maxDecodeBytes
		ok := !full
		if ok && len(b) >= 8 && binary.LittleEndian.Uint32(b) == headerSplit {
			id := binary.LittleEndian.Uint32(b[4:])
			k := 0
			for k < len(sets) && sets[k].id != id {
				k++
			}
			if k == len(sets) {
				sets = append(sets, splitCount{id: id})
			}
			s := &sets[k]
			if ok = s.n < MaxDatagrams && s.size+len(b) <= MaxBytes; ok {
				s.n++
				s.size += len(b)
			}
		}
		if !ok {
			if dropped == 0 {
				kept = append(make([][]byte, 0, len(datagrams)-1), datagrams[:i]...)
			}
			dropped++
			continue
		}
		total++
		size += len(b)
		if dropped > 0 {
			kept = append(kept, b)
		}
	}
	return kept, dropped
}

// payload is one whole message to decode: a datagram, or a reassembled
// (and perhaps decompressed) split message.
type payload struct {
	b     []byte
	layer int
	name  string
}

// decoder holds one Decode's state.
type decoder struct {
	datagrams [][]byte
	spans     *[]codecs.Span
	m         *codecs.Message // nil in Reassemble
	body      []int           // per datagram: where a split part's payload starts
	sets      []splitSet
}

func (d *decoder) init(datagrams [][]byte, m *codecs.Message) {
	d.datagrams, d.m = datagrams, m
	d.body = make([]int, len(datagrams))
	if m != nil && m.Layers != nil {
		d.spans = &m.Spans
	}
}

// file puts split datagram i in the set of its id.
func (d *decoder) file(i int) error {
	b := d.datagrams[i]
	if len(b) < 9 {
		// Too short for any form: read what there is for the error.
		r := wire.NewReader(Protocol, b, i, d.spans)
		readSplit(r, SplitGoldSrc)
		err := r.Err()
		if err == nil {
			err = newError("packet", len(b), "", codecs.ErrShort)
		}
		return inLayer(err, wireLayer(i, len(d.datagrams)))
	}
	id := binary.LittleEndian.Uint32(b[4:])
	k := 0
	for k < len(d.sets) && d.sets[k].id != id {
		k++
	}
	if k == len(d.sets) {
		d.sets = append(d.sets, splitSet{id: id})
	}
	s := &d.sets[k]
	s.member = append(s.member, i)
	if f, ok := formOf(b); ok && !s.known {
		s.form, s.known = f, true
	}
	return nil
}

// reassemble reads the headers of a set's parts and joins (and
// decompresses) its message. The payload comes back with the layer it is
// in; it is nil when packet 0 is missing or the message cannot be
// decompressed.
func (d *decoder) reassemble(s *splitSet) (payload, error) {
	n := len(d.datagrams)
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, i := range s.member {
		r := wire.NewReader(Protocol, d.datagrams[i], i, d.spans)
		if !s.known {
			// Without packet 0 the form is unknown: show the id and the rest.
			readSplitUnknown(r)
			continue
		}
		p := readSplit(r, s.form)
		if err := r.Err(); err != nil {
			keep(inLayer(err, wireLayer(i, n)))
			continue
		}
		d.body[i] = p.body
		if p.number == 0 && s.part[0] == 0 {
			s.first = p // the other parts are checked against it below
		}
		if s.part[p.number] != 0 {
			s.dups++ // the first copy wins
			continue
		}
		s.part[p.number] = i + 1
		s.have++
	}
	if !s.known {
		keep(newDetail("number", 0, "", codecs.ErrIncomplete, s.missing()))
		return payload{}, first
	}
	// Parts that disagree with packet 0 on the total are not of this message.
	for no := 1; no < 256; no++ {
		i := s.part[no] - 1
		if i < 0 {
			continue
		}
		if no >= s.first.total || !sameTotal(d.datagrams[i], s.form, s.first.total) {
			s.part[no] = 0
			s.have--
			keep(newDetailf("total", 8, wireLayer(i, n), codecs.ErrBadValue, "part of a message of another size than packet 0's %d packets", int64(s.first.total)))
		}
	}
	joined := s.join(nil, d.datagrams, d.body)
	complete := s.have == s.first.total
	if !complete {
		keep(newDetail("number", 0, "", codecs.ErrIncomplete, s.missing()))
	}
	layer := -1
	name := "reassembled"
	if s.first.compressed {
		name = "compressed"
	}
	if d.m != nil && d.m.Layers != nil {
		layer = len(d.m.Layers)
		d.m.Layers = append(d.m.Layers, codecs.Layer{Name: name, Bytes: joined, Parent: -1})
	}
	if !s.first.compressed {
		return payload{b: joined, layer: layer, name: name}, first
	}
	if d.spans != nil && len(joined) > 0 {
		r := wire.NewReader(Protocol, joined, layer, d.spans)
		r.Skip("bzip2", len(joined))
		r.Mark("bzip2", "bytes", 0, wire.Msg("%d bytes of bzip2", int64(len(joined))))
	}
	if !complete {
		return payload{}, first
	}
	sizeAt := 12 // FE FF FF FF, id, total, number, size
	if s.form == SplitSourceNoSize {
		sizeAt = 10
	}
	out, err := decompress(joined, s.first.rawSize, s.first.crc, sizeAt)
	if err != nil {
		if e, ok := errors.AsType[*codecs.Error](err); ok && (e.Field == "decompressed_size" || e.Field == "crc32") {
			e.Layer = wireLayer(s.part[0]-1, n)
		} else {
			inLayer(err, name)
		}
		keep(err)
		return payload{}, first
	}
	if d.m != nil && d.m.Layers != nil {
		d.m.Layers = append(d.m.Layers, codecs.Layer{Name: "decompressed", Bytes: out, Parent: layer})
		return payload{b: out, layer: layer + 1, name: "decompressed"}, first
	}
	return payload{b: out, layer: -1, name: "decompressed"}, first
}

// sameTotal reports whether split part b carries total.
func sameTotal(b []byte, f SplitForm, total int) bool {
	if f == SplitGoldSrc {
		return int(b[8]&0x0f) == total
	}
	return int(b[8]) == total
}

// readSplitUnknown shows a part whose form is unknown (packet 0 missing):
// header, id, and the rest as bytes.
func readSplitUnknown(r *wire.Reader) {
	start := r.Offset()
	r.Skip("header", 4)
	r.Mark("header", "s32le", start, "-2 split message")
	r.U32LE("id")
	if r.Len() > 0 {
		start = r.Offset()
		r.Skip("part", r.Len())
		r.Mark("part", "bytes", start, "a part whose form packet 0 would tell")
	}
}

// Decode decodes the datagrams of one conversation or one message, as they
// were on the wire, in any order: queries, a challenge, the info, player
// and rules replies (whole or split, compressed or not, with duplicates
// ignored), or the pages of a Steam master's reply, or a master query.
// Each split message reads at most MaxDatagrams parts and MaxBytes bytes
// (the caps are per query), and one Decode at most four times that in
// all; the rest are dropped and counted ("dropped_datagrams") with the
// warning "truncated".
//
// Layers (with spans): one "wire" layer per datagram, and for each split
// message a "reassembled" layer, or a "compressed" layer and a
// "decompressed" one.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, newDetail("datagrams", 0, "", codecs.ErrIncomplete, "no datagrams")
	}
	dgs, dropped := capped(datagrams)
	var first error
	keep := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 16)
		m.Layers = make([]codecs.Layer, 0, len(dgs)+1)
		for i, b := range dgs {
			m.Layers = append(m.Layers, codecs.Layer{Name: wireLayer(i, len(dgs)), Bytes: b, Parent: -1})
		}
	}
	var d decoder
	d.init(dgs, m)
	var ps []payload
	for i, b := range dgs {
		switch {
		case hasMagic(b, 0), len(b) > 0 && b[0] == MasterQuery:
			ps = append(ps, payload{b: b, layer: i, name: wireLayer(i, len(dgs))})
		case len(b) >= 4 && binary.LittleEndian.Uint32(b) == headerSplit:
			keep(d.file(i))
		default:
			if d.spans != nil && len(b) > 0 {
				r := wire.NewReader(Protocol, b, i, d.spans)
				r.Bytes("unknown", len(b))
			}
			keep(newDetail("header", 0, wireLayer(i, len(dgs)), codecs.ErrBadMagic, "want FF FF FF FF, FE FF FF FF or a master query"))
		}
	}
	var v view
	for k := range d.sets {
		p, err := d.reassemble(&d.sets[k])
		keep(err)
		if errors.Is(err, codecs.ErrIncomplete) {
			m.Warn(codecs.WarnTruncated)
		}
		v.splits = append(v.splits, &d.sets[k])
		if p.b != nil {
			ps = append(ps, p)
		}
	}
	for _, p := range ps {
		keep(v.decode(m, p, d.spans))
	}
	if dropped > 0 {
		v.dropped = dropped
		m.Warn(codecs.WarnTruncated)
	}
	v.message(m, opt.NoFields)
	return m, first
}

// view gathers what the payloads of one Decode hold and turns it into the
// message.
type view struct {
	info       *Info
	players    *Players
	rules      *Rules
	challenges []uint32
	requests   []Request
	masterQ    []MasterRequest
	pages      []MasterReplyPage
	splits     []*splitSet
	dropped    int
	unknown    bool
	// infoSeen holds the fields of a cut info reply that were read, so that
	// the view shows only those; nil when the reply was whole.
	infoSeen map[string]bool
}

// seenFields lists the fields read from payload p before its error: from
// the spans recorded, or from a second decode recording them.
func seenFields(p payload, spans *[]codecs.Span) map[string]bool {
	layer := max(p.layer, 0)
	if spans == nil {
		var own []codecs.Span
		readResponse(wire.NewReader(Protocol, p.b, layer, &own))
		spans = &own
	}
	seen := map[string]bool{}
	for _, s := range *spans {
		if s.Layer == layer {
			seen[s.Field] = true
		}
	}
	return seen
}

// has reports whether info field f was read.
func (v *view) has(f string) bool { return v.infoSeen == nil || v.infoSeen[f] }

// decode decodes one whole message and files it.
func (v *view) decode(m *codecs.Message, p payload, spans *[]codecs.Span) error {
	_ = *v // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	r := wire.NewReader(Protocol, p.b, max(p.layer, 0), spans)
	b := p.b
	filed := false // this payload's info is the one shown
	switch {
	case len(b) > 0 && b[0] == MasterQuery:
		v.masterQ = append(v.masterQ, readMasterRequest(r))
	case len(b) >= 5 && b[4] == MasterReply:
		v.pages = append(v.pages, readMasterReply(r))
	case len(b) >= 5 && (Type(b[4]) == TypeInfoRequest || Type(b[4]) == TypePlayerRequest || Type(b[4]) == TypeRulesRequest):
		v.requests = append(v.requests, readRequest(r))
	default:
		a := readResponse(r)
		switch {
		case a.Type == TypeChallenge && !r.Failed():
			v.challenges = append(v.challenges, a.Challenge)
		case a.Info != nil && v.info == nil:
			v.info, filed = a.Info, true
			v.unknown = v.unknown || a.Info.EDF&^edfKnown != 0
		case a.Players != nil && v.players == nil:
			v.players = a.Players
		case a.Rules != nil && v.rules == nil:
			v.rules = a.Rules
		}
	}
	trailing(r)
	err := r.Err()
	if err != nil && !errors.Is(err, codecs.ErrTrailing) && filed {
		v.infoSeen = seenFields(p, spans)
	}
	if errors.Is(err, codecs.ErrTrailing) {
		m.Warn(codecs.WarnTrailing)
		return nil
	}
	return inLayer(err, p.name)
}

// isMasterPage reports whether b starts like a Steam master's page.
func isMasterPage(b []byte) bool {
	return hasMagic(b, 0) && len(b) >= 6 && b[4] == MasterReply && b[5] == masterReplyEnd
}
