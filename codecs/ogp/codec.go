package ogp

import (
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Codec is the codecs.Codec of the Open Game Protocol. Importing the
// package registers it.
type Codec struct{}

func (*Codec) Name() string { return Protocol }

func (*Codec) Title() string { return "Open Game Protocol" }

// DefaultPort is 0: OGP runs on a port each game chooses.
func (*Codec) DefaultPort() int { return 0 }

// Detect needs the full magic FF FF FF FF "OGP\0": Zandronum's raw
// (unencoded) Huffman form also starts with FF. With a valid header of
// either version it is certain and says what the datagram is.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return "", codecs.NotMine
	}
	if _, ok := detect(b); !ok {
		return codecs.KindResponse, codecs.Likely
	}
	h, off, err := DecodeHeader(b)
	if err != nil {
		return codecs.KindResponse, codecs.Likely
	}
	return kindOf(&h, b[off:]), codecs.Certain
}

// kindOf says what a datagram is from its header and the first body byte.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func kindOf(h *Header, body []byte) codecs.Kind {
	switch {
	case !h.Answer:
		return codecs.KindQuery
	case h.Type == TypeBanned, h.Type == TypeError && len(body) > 0 && body[0] == byte(ErrorBanned):
		return codecs.KindDenied
	case h.Type == TypeError && h.HasChallenge, h.Type == TypePing && h.Version == V004 && h.HasChallenge:
		return codecs.KindChallenge
	}
	return codecs.KindResponse
}

// MaxQueryLen is the longest query CheckQuery accepts: a 1.0x Default
// query v1 asking for every field this package knows, with a challenge
// number, a RequestID and MaxBytesPerPacket (34 bytes; v0.04's is 29).
const MaxQueryLen = 34

// CheckQuery accepts a complete, well-formed ping or Default query v1 of
// either version, of at most MaxQueryLen bytes, encoded as a client
// encodes it: VarBitArrays without trailing zero bytes (docs/protocols/ogp.md 5.2), so
// that continuation bytes cannot pad a query, and a ping without a body.
// Rcon queries are refused: their body is not specified.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := clientQuery(b)
	return err
}

// clientQuery decodes query b as a client sends it, in the version
// detected or else in the other one: a v0.04 query can also read as a 1.0x
// one that no client would send (DecodeRequestAs).
func clientQuery(b []byte) (Request, error) {
	q, err := DecodeRequest(b)
	if err != nil {
		return q, err
	}
	if err := checkRequest(b, q); err != nil {
		other := V004
		if q.Version == V004 {
			other = V1
		}
		if q2, err2 := DecodeRequestAs(b, other); err2 == nil && checkRequest(b, q2) == nil {
			return q2, nil
		}
		return q, err
	}
	return q, nil
}

// checkRequest says whether q, decoded from b, is a query a client sends
// that the relay forwards: a Default query or a bare ping, encoded as a
// client encodes it.
func checkRequest(b []byte, q Request) error {
	switch {
	case q.Type != TypeDefault && q.Type != TypePing:
		return newError("header.type", 0, "", codecs.Detail(codecs.ErrBadValue, q.Type.String()+" queries are not forwarded"))
	case q.Type == TypePing && len(q.Raw) > 0:
		return newError("body", len(b)-len(q.Raw), "", wire.Detailf(codecs.ErrTrailing, "%d bytes after a ping query's header", int64(len(q.Raw))))
	}
	var tmp [MaxQueryLen]byte
	c, err := AppendRequest(tmp[:0], q)
	if err != nil {
		return err
	}
	at := 0
	for at < len(c) && at < len(b) && c[at] == b[at] {
		at++
	}
	if at != len(b) || len(c) != len(b) {
		return newError("datagram", at, "", wire.Detailf(codecs.ErrBadValue, "%d bytes where a client sends %d (padded bit arrays)", int64(len(b)), int64(len(c))))
	}
	return nil
}

// Decode decodes one query, one answer, or the datagrams of one split
// answer in any order. Layers (with spans): one "wire" layer per datagram,
// and for a split answer a "reassembled" layer holding the joined answer.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	return decodeMessage(datagrams, opt, asked{})
}

// decodeMessage is Decode, in the version a conversation asked in when a
// says it.
func decodeMessage(datagrams [][]byte, opt codecs.DecodeOptions, a asked) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagrams"))
	}
	var spans *[]codecs.Span
	if opt.Spans {
		spans = &m.Spans
		m.Spans = []codecs.Span{}
		for i, b := range datagrams {
			m.Layers = append(m.Layers, codecs.Layer{Name: wireLayer(i, len(datagrams)), Bytes: b, Parent: -1})
		}
	}
	if len(datagrams) == 1 {
		b := datagrams[0]
		if h, _, err := decodeHeader(b, a); err == nil && !h.Answer {
			return m, decodeQuery(m, b, spans, a)
		} else if err != nil || !h.Split || h.SplitCount == 1 {
			return m, decodeAnswer(m, b, 0, spans, "", opt.NoFields, a)
		}
	}
	return m, decodeSplit(m, datagrams, spans, opt.NoFields, a)
}

// finish turns an error into the message's warnings where it does not stop
// decoding (trailing bytes), and notes flags that had to be ignored.
func finish(m *codecs.Message, d *decoder, layer string) error {
	if d.unknown {
		m.Warn(codecs.WarnUnknownFlags)
	}
	err := d.err()
	if isTrailing(err) {
		m.Warn(codecs.WarnTrailing)
		return nil
	}
	if err != nil && layer != "" {
		err = inLayer(err, layer)
	}
	return err
}

// run decodes b (layer number layer) with decode. When that fails without
// spans, it decodes again recording them, so that the error names its
// field path and the view shows only the fields decoded before it.
func run(b []byte, layer int, spans *[]codecs.Span, a asked, decode func(*decoder)) (decoder, *view) {
	d := newDecoder(b, layer, spans)
	a.apply(&d)
	decode(&d)
	w := &view{v: d.v, utf8: d.utf8}
	if err := d.err(); err == nil || isTrailing(err) {
		return d, w
	}
	if spans == nil {
		var own []codecs.Span
		d = newDecoder(b, layer, &own)
		a.apply(&d)
		decode(&d)
		w.seen = seenPaths(own, layer)
	} else {
		w.seen = seenPaths(*spans, layer)
	}
	return d, w
}

func decodeQuery(m *codecs.Message, b []byte, spans *[]codecs.Span, a asked) error {
	m.Kind = codecs.KindQuery
	var q Request
	d, w := run(b, 0, spans, a, func(d *decoder) { d.request(&q) })
	m.Fields = w.requestFields(&q)
	return finish(m, &d, "")
}

// decodeAnswer decodes answer b, which is layer number layer; noFields is
// DecodeOptions.NoFields.
func decodeAnswer(m *codecs.Message, b []byte, layer int, spans *[]codecs.Span, layerName string, noFields bool, in asked) error {
	var a Response
	d, w := run(b, layer, spans, in, func(d *decoder) { d.answer(&a) })
	w.answerMessage(m, &a, noFields)
	return finish(m, &d, layerName)
}

// decodeSplit reassembles and decodes the parts of a split answer. With
// spans, each part's header is annotated in its own layer and the joined
// answer in the last one.
func decodeSplit(m *codecs.Message, datagrams [][]byte, spans *[]codecs.Span, noFields bool, a asked) error {
	if spans != nil {
		for i, b := range datagrams {
			d := newDecoder(b, i, spans)
			a.apply(&d)
			d.header(&Header{})
			if d.err() == nil && d.r.Len() > 0 {
				at := d.r.Offset()
				d.r.Skip("fragment", d.r.Len())
				d.r.Mark("fragment", "bytes", at, wire.Msg("%d bytes of the split answer", int64(len(b)-at)))
			}
		}
	}
	joined, err := reassemble(nil, datagrams, a)
	if len(joined) == 0 {
		return err
	}
	layer := len(datagrams)
	if spans != nil {
		m.Layers = append(m.Layers, codecs.Layer{Name: "reassembled", Bytes: joined, Parent: -1})
	}
	derr := decodeAnswer(m, joined, layer, spans, "reassembled", noFields, a)
	if err != nil {
		m.Warn(codecs.WarnTruncated)
		return err
	}
	return derr
}

// QueryKey implements codecs.QueryKeyer: the query re-encoded with its
// RequestID (echoed to the asker) set to 0, so identical questions from
// different clients share one answer. The challenge number stays: servers
// hand it out per client address, and every user of a relay shares one.
// Nil when b is not a query CheckQuery accepts.
func (c *Codec) QueryKey(b []byte) []byte {
	if codecs.CheckQueryLen(Protocol, b, MaxQueryLen) != nil {
		return nil
	}
	q, err := clientQuery(b)
	if err != nil {
		return nil
	}
	if !q.Header.HasRequestID {
		return b
	}
	q.Header.RequestID = 0
	k, err := AppendRequest(nil, q)
	if err != nil {
		return nil
	}
	return k
}

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}
