package zandronum

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Codec is the codecs.Codec of the Zandronum launcher and master
// protocols. Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Zandronum" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	{Name: "flags", Kind: codecs.OptionUint, Default: "0x" + hex32(uint32(DefaultFlags)), Help: "SQF flags to ask for (docs/protocols/zandronum.md 2.2)"},
	{Name: "flags2", Kind: codecs.OptionUint, Default: "0x" + hex32(uint32(SQF2_ALL)), Help: "SQF2 flags, sent when flags has bit 31"},
	{Name: "segmented", Kind: codecs.OptionBool, Default: "true", Help: "ask for a segmented reply (5660032)"},
	// The time only has to come back (Feed does not check it): the same
	// question is the same bytes, which a page may send before its decoder
	// is ready (the conversation takes the query over by its bytes).
	{Name: "time", Kind: codecs.OptionUint, Default: "0", Help: "value the server echoes (a LAN launcher sends 0)", Echo: true},
	{Name: "master", Kind: codecs.OptionBool, Default: "false", Help: "ask a master server for its list instead"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// NewQuery starts a query configured by opts (keys from Options).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	q := &query{master: r.Bool("master"), req: Request{
		Flags:     Flag(r.Uint("flags", 32)),
		Flags2:    Flag2(r.Uint("flags2", 32)),
		Segmented: r.Bool("segmented"),
		Time:      uint32(r.Uint("time", 32)),
	}}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return q, nil
}

// Query is the conversation of NewQuery: one request, then a reply, a
// refusal, the segments of a reply, or a master's packets.
type query struct {
	req    Request
	master bool
	done   bool
	reply  []byte   // the datagram that completed the query on its own
	parts  [][]byte // segments or list packets, as received
	seen   [256]bool
	total  int // segments announced, 0 before the first
	final  int // number of the packet that ends a master list, or -1
}

// Request returns the launcher request the query sends.
func (q *query) Request() Request { return q.req }

// Start returns the request datagram.
func (q *query) Start() [][]byte {
	q.final = -1
	if q.master {
		return [][]byte{AppendMasterRequest(nil)}
	}
	b, _ := AppendRequest(nil, q.req)
	return [][]byte{b}
}

func (q *query) ignore(field string, off int, err error) ([][]byte, bool, error) {
	return nil, q.done, newError(field, off, "payload", err)
}

// Feed takes one received datagram. A reply, a refusal or the last
// missing segment or list packet completes the query; a datagram that does
// not answer it (wrong code, a segment that disagrees with the others) is
// ignored with an error; repeats are ignored.
//
// The echoed time is not checked: a relay shares one server's reply among
// everyone who asked the same question (docs/protocols/zandronum.md 2.9: the server
// answers each IP once per 10 s), so a reply may echo another asker's time.
// The transports already accept only datagrams from the server queried.
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	var tmp [64]byte
	p, err := unwrap(tmp[:0], b, "wire")
	if err != nil {
		return nil, q.done, err
	}
	if q.done {
		return nil, true, nil
	}
	if len(p) < 4 {
		return q.ignore("response", 0, codecs.ErrShort)
	}
	code := binary.LittleEndian.Uint32(p)
	if q.master {
		return q.feedMaster(b, p, code)
	}
	switch code {
	case CodeAccepted, CodeIgnored, CodeBanned:
		if len(p) < 8 {
			return q.ignore("time", 4, codecs.ErrShort)
		}
		q.reply = append([]byte(nil), b...)
		q.done = true
		return nil, true, nil
	case CodeSegmented:
		g, err := DecodeSegmentPayload(p)
		if err != nil {
			return nil, q.done, inLayer(err, "payload")
		}
		if q.total != 0 && int(g.Total) != q.total {
			return q.ignore("segment.total", 5, wire.Detailf(codecs.ErrBadValue, "total %d, earlier segments said %d", int64(g.Total), int64(q.total)))
		}
		if q.seen[g.Number] {
			return nil, false, nil
		}
		q.seen[g.Number] = true
		q.total = int(g.Total)
		q.parts = append(q.parts, append([]byte(nil), b...))
		q.done = len(q.parts) == q.total
		return nil, q.done, nil
	}
	return q.ignore("response", 0, codecs.Detail(codecs.ErrUnknownCode, strconv.FormatUint(uint64(code), 10)))
}

func (q *query) feedMaster(b, p []byte, code uint32) ([][]byte, bool, error) {
	switch code {
	case MasterBeginList, MasterBanned, MasterIgnored, MasterWrongVersion:
		if _, err := DecodeMasterListPayloads([][]byte{p}); err != nil {
			return nil, false, inLayer(err, "payload")
		}
		q.reply = append([]byte(nil), b...)
		q.done = true
		return nil, true, nil
	case MasterBeginPart:
		r := wire.NewReader(Protocol, p, 0, nil)
		_, end := decodeListPart(r, nil, nil, false)
		if err := r.Err(); err != nil {
			return nil, false, inLayer(err, "payload")
		}
		num := int(p[4])
		if q.seen[num] {
			return nil, false, nil
		}
		q.seen[num] = true
		if end == MasterEndList {
			q.final = num
		}
		q.parts = append(q.parts, append([]byte(nil), b...))
		q.done = q.final >= 0 && len(q.parts) == q.final+1
		for i := 0; q.done && i <= q.final; i++ {
			q.done = q.seen[i]
		}
		return nil, q.done, nil
	}
	return q.ignore("response", 0, codecs.Detail(codecs.ErrUnknownCode, strconv.FormatUint(uint64(code), 10)))
}

// Result decodes what was received: the reply, or the segments or list
// packets held so far (ErrIncomplete names what is missing).
func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	var ds [][]byte
	switch {
	case q.reply != nil:
		ds = [][]byte{q.reply}
	case len(q.parts) > 0:
		ds = q.parts
	default:
		kind := codecs.KindResponse
		if q.master {
			kind = codecs.KindMasterList
		}
		return &codecs.Message{Protocol: Protocol, Kind: kind},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	if !q.master {
		opt.Query, _ = AppendRequest(nil, q.req)
	}
	return (&Codec{}).Decode(ds, opt)
}

// Detect reports what b is: it undoes the Huffman layer and looks for a
// known first LONG with a body of the right shape.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) == 0 {
		return "", codecs.NotMine
	}
	s := getScratch()
	k, c := detect(s, b)
	putScratch(s)
	return k, c
}

func detect(s *scratch, b []byte) (codecs.Kind, codecs.Confidence) {
	var err error
	s.buf, err = unwrap(s.buf, b, "wire")
	p := s.buf
	if err != nil || len(p) < 4 {
		return "", codecs.NotMine
	}
	switch code := binary.LittleEndian.Uint32(p); code {
	case ServerChallenge:
		if len(p) == 4 {
			return codecs.KindMasterQuery, codecs.Likely
		}
		s.r.Reset(p, 0)
		if _, err := decodeRequest(s.r); err == nil {
			return codecs.KindQuery, codecs.Certain
		}
	case MasterChallenge:
		if len(p) == 6 {
			return codecs.KindMasterQuery, codecs.Certain
		}
		return codecs.KindMasterQuery, codecs.Likely
	case CodeAccepted:
		// time, a terminated version string, flags.
		for i := 8; i < len(p); i++ {
			if p[i] == 0 {
				if len(p)-i-1 >= 4 {
					return codecs.KindResponse, codecs.Certain
				}
				break
			}
		}
		return codecs.KindResponse, codecs.Likely
	case CodeIgnored, CodeBanned:
		if len(p) == 8 {
			return codecs.KindDenied, codecs.Certain
		}
		if len(p) > 8 {
			return codecs.KindDenied, codecs.Likely
		}
	case CodeSegmented:
		s.r.Reset(p, 0)
		if decodeSegment(s.r); s.r.Err() == nil {
			return codecs.KindResponse, codecs.Certain
		}
	case MasterBanned, MasterIgnored, MasterWrongVersion:
		if len(p) == 4 {
			return codecs.KindMasterDenied, codecs.Likely
		}
	case MasterBeginList, MasterBeginPart:
		s.r.Reset(p, 0)
		if code == MasterBeginList {
			checkLegacyList(s.r)
		} else {
			decodeListPart(s.r, nil, nil, false)
		}
		if s.r.Err() == nil {
			return codecs.KindMasterList, codecs.Certain
		}
	}
	return "", codecs.NotMine
}

// checkLegacyList walks a legacy list without keeping its servers.
func checkLegacyList(r *wire.Reader) {
	r.Skip("response", 4)
	for !r.Failed() {
		if r.Len() == 0 {
			r.Fail("end", codecs.ErrShort)
			return
		}
		switch r.Rest()[0] {
		case MasterServer:
			r.Skip("server", 7)
		case MasterEndList:
			r.Skip("end", 1)
			return
		default:
			r.Fail("end", codecs.ErrBadValue)
		}
	}
}

// CheckQuery accepts a launcher request (at most 4 bytes after its
// fields, as qstat sends, and MaxRequestPayload in all), a master list
// request with version 2, or the legacy 4-byte master request, in a
// datagram of at most MaxQueryLen bytes; anything else is an error.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	s := getScratch()
	defer putScratch(s)
	var err error
	s.buf, err = unwrap(s.buf, b, "wire")
	if err != nil {
		return err
	}
	p := s.buf
	fail := func(field string, off int, err error) error {
		return newError(field, off, "payload", err)
	}
	if len(p) < 4 {
		return fail("challenge", 0, codecs.ErrShort)
	}
	switch binary.LittleEndian.Uint32(p) {
	case ServerChallenge:
		if len(p) == 4 {
			return nil
		}
		s.r.Reset(p, 0)
		q, err := decodeRequest(s.r)
		if err != nil {
			return inLayer(err, "payload")
		}
		if n := len(q.Extra); n > 4 {
			return fail("extra", len(p)-n, wire.Detailf(codecs.ErrTrailing, "%d bytes after the request", int64(n)))
		}
		if len(p) > MaxRequestPayload {
			return fail("extra", MaxRequestPayload, wire.Detailf(codecs.ErrTooLong, "a %d-byte request; a client's is at most %d", int64(len(p)), MaxRequestPayload))
		}
		return nil
	case MasterChallenge:
		switch {
		case len(p) < 6:
			return fail("version", 4, codecs.ErrShort)
		case len(p) > 6:
			return fail("extra", 6, codecs.ErrTrailing)
		case binary.LittleEndian.Uint16(p[4:]) != MasterVersion:
			return fail("version", 4, codecs.Detail(codecs.ErrBadValue, "want 2"))
		}
		return nil
	}
	return fail("challenge", 0, codecs.ErrNotQuery)
}

// Decode decodes one message from its datagrams, telling the kinds apart
// by their first LONG: a launcher request (199, 12 bytes or more), a
// master request (5660028, or 199 alone), a reply or refusal, the
// segments of a reply, or a master's packets. opt.Query, when it is the
// launcher request the reply answers, makes the team-byte rule exact.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol}
	var asked Flag
	if len(opt.Query) > 0 {
		if q, err := DecodeRequest(opt.Query); err == nil {
			asked = q.Flags
		}
	}
	if opt.Spans {
		sk := &sink{}
		err := decodeMessage(m, sk, nil, &sk.buf, datagrams, asked, opt.NoFields)
		m.Layers, m.Spans = sk.layers, sk.spans
		return m, err
	}
	s := getScratch()
	err := decodeMessage(m, nil, s.r, &s.buf, datagrams, asked, opt.NoFields)
	putScratch(s)
	return m, err
}

// decodeMessage is Decode with spans recorded into sk, or, with a nil sk,
// with rd as the cursor; payloads are decoded into *buf. noFields is
// DecodeOptions.NoFields.
func decodeMessage(m *codecs.Message, sk *sink, rd *wire.Reader, buf *[]byte, datagrams [][]byte, asked Flag, noFields bool) error {
	if len(datagrams) == 0 {
		return newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	payloads, layers, legacy, err := unwrapAll(sk, buf, datagrams)
	if legacy {
		m.Warn(codecs.WarnLegacyHuffman)
	}
	if err != nil {
		return err
	}
	n := len(payloads)
	code, ok := uint32(0), false
	for _, p := range payloads {
		if len(p) >= 4 {
			c := binary.LittleEndian.Uint32(p)
			if !ok || c == CodeSegmented || c == MasterBeginPart {
				code, ok = c, true
			}
		}
	}
	if !ok {
		return newError("response", 0, payloadName(0, n), codecs.ErrShort)
	}
	li := layerOf(layers, 0)
	p := payloads[0]

	switch {
	case n == 1 && code == ServerChallenge && len(p) > 4:
		m.Kind = codecs.KindQuery
		q, err := decodeRequest(sk.reader(rd, p, li))
		m.Fields = q.Fields()
		if q.requestTrailing() {
			m.Warn(codecs.WarnTrailing)
		}
		if q.Flags.Unknown() != 0 || q.Flags2.Unknown() != 0 {
			m.Warn(codecs.WarnUnknownFlags)
		}
		return inLayer(err, "payload")

	case n == 1 && (code == ServerChallenge || code == MasterChallenge):
		m.Kind = codecs.KindMasterQuery
		q, extra, err := decodeMasterRequest(sk.reader(rd, p, li))
		m.Fields = q.Fields()
		if extra > 0 {
			m.Warn(codecs.WarnTrailing)
		}
		return inLayer(err, "payload")

	case n == 1 && (code == CodeAccepted || code == CodeIgnored || code == CodeBanned):
		resp, err := decodeResponse(sk.reader(rd, p, li), p, li, sk.spanPtr(), asked)
		responseMessage(m, &resp, nil, noFields)
		return inLayer(err, "payload")

	case code == CodeSegmented:
		res, err := decodeSegmented(sk, rd, payloads, layers, asked)
		responseMessage(m, &res.resp, res.segs, noFields)
		if res.trailing {
			m.Warn(codecs.WarnTrailing)
		}
		return err

	case code == MasterBeginPart || (n == 1 && (code == MasterBeginList || masterDenied(code) != "")):
		// A master's list keeps its fields with NoFields too: it is one
		// message a refresh, and the servers come from them.
		l, err := decodeMasterList(sk, rd, payloads, layers)
		m.Fields = l.Fields()
		if d := l.Denied(); d != "" {
			m.Kind, m.Denied = codecs.KindMasterDenied, d
		} else {
			m.Kind = codecs.KindMasterList
			servers, _ := m.Fields.Get("servers")
			m.Servers, _ = servers.([]string)
		}
		if l.Trailing > 0 {
			m.Warn(codecs.WarnTrailing)
		}
		return err
	}
	layer := payloadName(0, n)
	if n > 1 {
		return newError("response", 0, layer, wire.Detailf(codecs.ErrBadValue, "%d datagrams that are neither reply segments nor list packets", int64(n)))
	}
	return newError("response", 0, layer, codecs.Detail(codecs.ErrUnknownCode, strconv.FormatUint(uint64(code), 10)))
}

// responseMessage fills m from a reply (segs: the segments it came in);
// with noFields, Fields holds only the country.
func responseMessage(m *codecs.Message, resp *Response, segs []Segment, noFields bool) {
	if d := resp.Denied(); d != "" {
		m.Kind, m.Denied = codecs.KindDenied, d
	} else {
		m.Kind = codecs.KindResponse
		m.Info = resp.Info()
	}
	var f codecs.Object
	switch {
	case !noFields:
		f = resp.Fields()
	case resp.Denied() == "" && resp.has(countryBit):
		f = make(codecs.Object, 0, 1).Add("country", resp.Country)
	}
	if segs != nil && !noFields {
		so := make([]codecs.Object, len(segs))
		for i, g := range segs {
			o := make(codecs.Object, 0, 5)
			o.Put("number", g.Number)
			o.Put("total", g.Total)
			o.Put("offset", g.Offset)
			o.Put("size", g.Size)
			o.Put("total_size", g.TotalSize)
			so[i] = o
		}
		f = append(f[:1], append(make(codecs.Object, 0, 1).Add("segments", so), f[1:]...)...)
	}
	m.Fields = f
	if resp.Flags.Unknown() != 0 || resp.Flags2.Unknown() != 0 {
		m.Warn(codecs.WarnUnknownFlags)
	}
	if len(resp.Trailing) > 0 {
		m.Warn(codecs.WarnTrailing)
	}
	if resp.Guessed&GuessTeamByte != 0 {
		m.Warn(WarnTeamByteGuessed)
	}
	if resp.Guessed&GuessPlayerCount != 0 {
		m.Warn(WarnPlayerCountGuessed)
	}
	if resp.Guessed&GuessTeamCount != 0 {
		m.Warn(WarnTeamCountGuessed)
	}
}

// QueryKey implements codecs.QueryKeyer: the plain payload of a launcher or
// master query, with the launcher's time LONG (payload bytes 8-11, echoed
// back for ping) zeroed, so identical questions from different clients
// share one answer. Nil when b is not a query CheckQuery accepts.
func (c *Codec) QueryKey(b []byte) []byte {
	if c.CheckQuery(b) != nil {
		return nil
	}
	p, err := Unwrap(nil, b)
	if err != nil {
		return nil
	}
	if len(p) >= 12 && binary.LittleEndian.Uint32(p) == ServerChallenge {
		clear(p[8:12])
	}
	return p
}

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}
