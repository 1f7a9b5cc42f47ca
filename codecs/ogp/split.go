package ogp

import (
	"bytes"
	"errors"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

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

// inLayer sets the layer of a *codecs.Error.
func inLayer(err error, layer string) error {
	if e, ok := errors.AsType[*codecs.Error](err); ok && e.Layer == "" {
		e.Layer = layer
	}
	return err
}

// isTrailing is errors.Is(err, codecs.ErrTrailing).
func isTrailing(err error) bool {
	for err != nil {
		if err == codecs.ErrTrailing {
			return true
		}
		if x, ok := err.(interface{ Is(error) bool }); ok && x.Is(codecs.ErrTrailing) {
			return true
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, err := range x.Unwrap() {
				if isTrailing(err) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// splitSet is the parts of one split answer, by packet number.
type splitSet struct {
	first Header
	count int
	have  int
	part  [256]int // index into the datagrams + 1; 0: not received
	body  [256]int // where each part's body starts
}

// add files datagram i; it must be an answer part agreeing with the others.
func (s *splitSet) add(datagrams [][]byte, i int, a asked) error {
	b := datagrams[i]
	h, off, err := decodeHeader(b, a)
	if err != nil {
		return inLayer(err, wireLayer(i, len(datagrams)))
	}
	text := ""
	no := int(h.SplitNo)
	switch {
	case !h.Answer:
		text = "a query among the parts of an answer"
	case !h.Split:
		text = "not part of a split answer"
	case s.count == 0:
		s.first, s.count = h, int(h.SplitCount)
	case h.Version != s.first.Version || h.Type != s.first.Type || int(h.SplitCount) != s.count ||
		h.HasRequestID != s.first.HasRequestID || h.RequestID != s.first.RequestID:
		text = "part of another answer"
	}
	if j := s.part[no]; text == "" && j != 0 {
		if bytes.Equal(datagrams[j-1], b) {
			return nil // the same datagram twice
		}
		text = wire.Msg("packet %d received twice with different bytes", int64(no))
	}
	if text != "" {
		return newError("header", 0, wireLayer(i, len(datagrams)), codecs.Detail(codecs.ErrBadValue, text))
	}
	s.part[no], s.body[no] = i+1, off
	s.have++
	return nil
}

// missing describes the parts not received.
func (s *splitSet) missing() string {
	text := wire.Msg("have %d of %d packets; missing", int64(s.have), int64(s.count))
	shown := 0
	for no := 0; no < s.count; no++ {
		if s.part[no] != 0 {
			continue
		}
		if shown == 8 {
			return text + " …"
		}
		text += wire.Msg(" %d", int64(no))
		shown++
	}
	return text
}

// join appends packet 0 whole, then the body of every later packet in
// order, stopping at the first one missing.
func (s *splitSet) join(dst []byte, datagrams [][]byte) []byte {
	for no := 0; no < s.count && s.part[no] != 0; no++ {
		b := datagrams[s.part[no]-1]
		if no > 0 {
			b = b[s.body[no]:]
		}
		dst = append(dst, b...)
	}
	return dst
}

// Reassemble joins the datagrams of a split answer, given in any order,
// into one buffer that DecodeResponse reads: packet 0 whole (its header still
// says bSplit), then every later packet's bytes after its header, as the
// official client does. A single datagram that is not split is returned as
// it is. Duplicates are ignored. When parts are missing it returns what
// joins up from packet 0 and an error wrapping codecs.ErrIncomplete.
func Reassemble(dst []byte, datagrams [][]byte) ([]byte, error) {
	return reassemble(dst, datagrams, asked{})
}

func reassemble(dst []byte, datagrams [][]byte, a asked) ([]byte, error) {
	if len(datagrams) == 0 {
		return dst, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagrams"))
	}
	if len(datagrams) == 1 {
		if h, _, err := decodeHeader(datagrams[0], a); err == nil && !h.Split {
			return append(dst, datagrams[0]...), nil
		}
	}
	var s splitSet
	for i := range datagrams {
		if err := s.add(datagrams, i, a); err != nil {
			return dst, err
		}
	}
	dst = s.join(dst, datagrams)
	if s.have < s.count {
		return dst, newError("header.split_packet_no", 0, "", codecs.Detail(codecs.ErrIncomplete, s.missing()))
	}
	return dst, nil
}

// SplitResponse encodes a for a client that asked for at most maxBytes per
// datagram. An answer that fits is one datagram without bSplit; a larger
// one is cut into up to 255 parts, each with the same header carrying
// SplitPacketCount and SplitPacketNo.
func SplitResponse(a Response, maxBytes int) ([][]byte, error) {
	a.Split, a.SplitCount, a.SplitNo = false, 0, 0
	whole, err := AppendResponse(nil, a)
	if err != nil || len(whole) <= maxBytes {
		return [][]byte{whole}, err
	}
	h := a.Header
	h.Split, h.SplitCount = true, 1
	e := encoder{v: a.Version}
	e.header(&h, true)
	headLen := len(e.b)
	e.body(&a)
	body := e.b[headLen:]
	room := maxBytes - headLen
	if room < 1 {
		return nil, newError("max_bytes_per_packet", 0, "", wire.Detailf(codecs.ErrTooLong, "the header alone is %d bytes", int64(headLen)))
	}
	n := (len(body) + room - 1) / room
	if n > 0xff {
		return nil, newError("max_bytes_per_packet", 0, "", wire.Detailf(codecs.ErrTooLong, "the answer needs %d packets", int64(n)))
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		h.SplitCount, h.SplitNo = uint8(n), uint8(i)
		p := encoder{b: make([]byte, 0, maxBytes), v: a.Version}
		p.header(&h, true)
		out = append(out, append(p.b, body[i*room:min(len(body), (i+1)*room)]...))
	}
	return out, nil
}
