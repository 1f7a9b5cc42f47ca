package zandronum

import (
	"encoding/binary"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Segmented replies (docs/protocols/zandronum.md 2.7): the server writes the reply
// without its first LONG into one buffer of S bytes, cuts it into chunks of
// at most sv_maxpacketsize-12 bytes and sends each chunk behind a 12-byte
// header as its own datagram.
const (
	segmentHeader = 12
	// DefaultMaxPacketSize is sv_maxpacketsize's default: segments carry at
	// most DefaultMaxPacketSize-12 bytes of the reply.
	DefaultMaxPacketSize = 1024
)

// Segment is one datagram of a segmented reply.
type Segment struct {
	Number    uint8  // 0-based
	Total     uint8  // number of segments
	Offset    uint16 // of Data in the reassembled reply
	Size      uint16 // len(Data)
	TotalSize uint16 // size of the reassembled reply
	Data      []byte // aliases the payload it was decoded from
}

// DecodeSegmentPayload decodes the header of one segment's plain payload
// and checks it on its own: Number < Total and Offset+Size <= TotalSize.
// Data aliases p.
func DecodeSegmentPayload(p []byte) (Segment, error) {
	s, _, _ := scratchFor(p, false)
	g, _ := decodeSegment(s.r)
	return g, done(s, s.r.Err(), false)
}

// decodeSegment reads one segment; it returns the bytes left after the
// chunk.
func decodeSegment(r *wire.Reader) (Segment, int) {
	var g Segment
	expect32(r, "response", CodeSegmented)
	r.Enter("segment", -1)
	numStart := r.Offset()
	g.Number = r.U8("number")
	totStart := r.Offset()
	g.Total = r.U8("total")
	offStart := r.Offset()
	g.Offset = r.U16LE("offset")
	g.Size = r.U16LE("size")
	g.TotalSize = r.U16LE("total_size")
	n := 0
	switch {
	case r.Failed():
	case g.Total == 0:
		r.FailAt("total", totStart, codecs.Detail(codecs.ErrBadValue, "a reply of 0 segments"))
	case g.Number >= g.Total:
		r.FailAt("number", numStart, wire.Detailf(codecs.ErrBadValue, "segment %d of %d", int64(g.Number), int64(g.Total)))
	case int(g.Offset)+int(g.Size) > int(g.TotalSize):
		r.FailAt("offset", offStart, wire.Detailf(codecs.ErrBadValue, "bytes %d-%d past the total size %d",
			int64(g.Offset), int64(g.Offset)+int64(g.Size), int64(g.TotalSize)))
	}
	if !r.Failed() {
		start := r.Offset()
		g.Data = r.Skip("data", int(g.Size))
		if r.Recording() {
			r.Mark("data", "bytes", start, wire.Msg("%d bytes of the reply at offset %d", int64(g.Size), int64(g.Offset)))
		}
		n = r.Len()
		if n > 0 && !r.Failed() {
			start := r.Offset()
			r.Skip("trailing", n)
			if r.Recording() {
				r.Mark("trailing", "bytes", start, wire.Msg("%d bytes after the chunk", int64(n)))
			}
		}
	}
	r.Leave()
	return g, n
}

// DecodeSegmented reassembles and decodes a segmented reply from its
// datagrams (Huffman layer included), given in any order. Segments must
// agree on the totals, be numbered below the total, each appear once and
// cover the reply exactly; otherwise the error names the segment's layer
// ("payload 2" for the third datagram) and field. With segments missing it
// returns ErrIncomplete and the fields of the part received from offset 0.
func DecodeSegmented(datagrams [][]byte) (Response, error) {
	s := getScratch()
	res, err := decodeSegmentedWire(nil, s, datagrams, 0)
	putScratch(s)
	return res.resp, err
}

// DecodeSegmentedPayloads is DecodeSegmented for plain payloads.
func DecodeSegmentedPayloads(payloads [][]byte) (Response, error) {
	s := getScratch()
	res, err := decodeSegmented(nil, s.r, payloads, nil, 0)
	putScratch(s)
	return res.resp, err
}

// segmented is a decoded segmented reply with its segments by number.
type segmented struct {
	resp     Response
	segs     []Segment
	trailing bool // bytes after a chunk
}

// unwrapAll decodes every datagram's Huffman layer into *buf and returns
// the payloads and their layer indices (with a sink).
func unwrapAll(sk *sink, buf *[]byte, datagrams [][]byte) (payloads [][]byte, layers []int, legacy bool, err error) {
	payloads = make([][]byte, len(datagrams))
	if sk != nil {
		layers = make([]int, len(datagrams))
	}
	// Decode everything into one buffer first, then cut it: appending may
	// move the buffer, so the payloads are sliced out only at the end.
	var endsBuf [8]int
	ends := endsBuf[:0]
	for i, d := range datagrams {
		legacy = legacy || isLegacy(d)
		*buf, err = unwrap(*buf, d, "")
		ends = append(ends, len(*buf))
		if err != nil {
			wn, _ := layerNames(i, len(datagrams))
			err = inLayer(err, wn)
			if sk != nil {
				wl := sk.addLayer(wn, d, -1)
				sk.wireSpans(wl, d, 0)
			}
			return nil, nil, legacy, err
		}
	}
	start := 0
	for i, end := range ends {
		payloads[i] = (*buf)[start:end:end]
		start = end
		if sk != nil {
			wn, pn := layerNames(i, len(datagrams))
			wl := sk.addLayer(wn, datagrams[i], -1)
			sk.wireSpans(wl, datagrams[i], len(payloads[i]))
			layers[i] = sk.addLayer(pn, payloads[i], wl)
		}
	}
	return payloads, layers, legacy, nil
}

func decodeSegmentedWire(sk *sink, s *scratch, datagrams [][]byte, asked Flag) (segmented, error) {
	payloads, layers, _, err := unwrapAll(sk, &s.buf, datagrams)
	if err != nil {
		return segmented{resp: Response{Code: CodeSegmented}}, err
	}
	return decodeSegmented(sk, s.r, payloads, layers, asked)
}

// decodeSegmented decodes the segments' headers, checks them against each
// other, reassembles the reply and decodes it; rd is a cursor to reuse
// when sk is nil.
func decodeSegmented(sk *sink, rd *wire.Reader, payloads [][]byte, layers []int, asked Flag) (segmented, error) {
	res := segmented{resp: Response{Code: CodeSegmented}}
	n := len(payloads)
	if n == 0 {
		return res, newError("segments", 0, "", codecs.Detail(codecs.ErrIncomplete, "no segment"))
	}
	segs := make([]Segment, n)
	for i, p := range payloads {
		r := sk.reader(rd, p, layerOf(layers, i))
		var left int
		segs[i], left = decodeSegment(r)
		res.trailing = res.trailing || left > 0
		if err := r.Err(); err != nil {
			return res, inLayer(err, payloadName(i, n))
		}
	}
	// Check the set: same totals, each number once.
	first := segs[0]
	var seen [256]bool
	for i := range segs {
		g := &segs[i]
		var field, msg string
		var off int
		switch {
		case g.Total != first.Total:
			field, off, msg = "total", 5, wire.Msg("total %d, the first segment said %d", int64(g.Total), int64(first.Total))
		case g.TotalSize != first.TotalSize:
			field, off, msg = "total_size", 10, wire.Msg("total size %d, the first segment said %d", int64(g.TotalSize), int64(first.TotalSize))
		case seen[g.Number]:
			field, off, msg = "number", 4, wire.Msg("segment %d received twice", int64(g.Number))
		}
		if msg != "" {
			return res, newError("segment."+field, off, payloadName(i, n), codecs.Detail(codecs.ErrBadValue, msg))
		}
		seen[g.Number] = true
	}
	if n < int(first.Total) {
		missing := 0
		for seen[missing] {
			missing++
		}
		sortByNumber(segs)
		res.segs = segs
		res.resp = partialSegmented(segs, asked)
		return res, newError("segments", 0, "", wire.Detailf(codecs.ErrIncomplete, "segment %d of %d missing", int64(missing), int64(first.Total)))
	}

	// With every number present the chunks must tile [0, TotalSize)
	// exactly; walk them by offset.
	var orderBuf [16]int
	byOffset := orderBuf[:0]
	for i := range n {
		byOffset = append(byOffset, i)
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && segs[byOffset[j]].Offset < segs[byOffset[j-1]].Offset; j-- {
			byOffset[j], byOffset[j-1] = byOffset[j-1], byOffset[j]
		}
	}
	pos := 0
	for _, k := range byOffset {
		g := &segs[k]
		var msg string
		switch {
		case int(g.Offset) > pos:
			msg = wire.Msg("bytes %d-%d are in no segment", int64(pos), int64(g.Offset))
		case int(g.Offset) < pos:
			msg = wire.Msg("overlaps the segment before it, which ends at %d", int64(pos))
		}
		if msg != "" {
			return res, newError("segment.offset", 6, payloadName(k, n), codecs.Detail(codecs.ErrBadValue, wire.Msg("segment %d: ", int64(g.Number))+msg))
		}
		pos += int(g.Size)
	}
	if pos != int(first.TotalSize) {
		k := byOffset[n-1]
		return res, newError("segment.total_size", 10, payloadName(k, n), wire.Detailf(codecs.ErrIncomplete, "bytes %d-%d are in no segment", int64(pos), int64(first.TotalSize)))
	}

	// pos is the sum of the chunk sizes, so bounded by the input.
	whole := make([]byte, pos)
	for i := range segs {
		copy(whole[segs[i].Offset:], segs[i].Data)
	}
	sortByNumber(segs)
	res.segs = segs
	li := sk.addLayer("reassembled", whole, -1)
	rr := sk.reader(rd, whole, li)
	err := decodeBody(rr, whole, li, sk.spanPtr(), &res.resp, asked)
	return res, inLayer(err, "reassembled")
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func payloadName(i, n int) string {
	_, pn := layerNames(i, n)
	return pn
}

// partialSegmented decodes the part of an incomplete reply that the
// segments held cover from offset 0 on, for a partial result.
func partialSegmented(segs []Segment, asked Flag) Response {
	resp := Response{Code: CodeSegmented}
	pos := 0
	for {
		next := -1
		for i := range segs {
			if int(segs[i].Offset) == pos && segs[i].Size > 0 {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		pos += int(segs[next].Size)
	}
	if pos == 0 {
		return resp
	}
	buf := make([]byte, 0, pos)
	for len(buf) < pos {
		for i := range segs {
			if int(segs[i].Offset) == len(buf) && segs[i].Size > 0 {
				buf = append(buf, segs[i].Data...)
				break
			}
		}
	}
	r := wire.NewReader(Protocol, buf, 0, nil)
	decodeBody(r, buf, 0, nil, &resp, asked)
	return resp
}

// sortByNumber sorts segments by number; there are at most 256, so
// insertion sort does.
func sortByNumber(segs []Segment) {
	for i := 1; i < len(segs); i++ {
		for j := i; j > 0 && segs[j].Number < segs[j-1].Number; j-- {
			segs[j], segs[j-1] = segs[j-1], segs[j]
		}
	}
}

// AppendSegmented appends the datagrams (Huffman layer included) of reply
// resp sent segmented to dst. See AppendSegmentedPayloads.
func AppendSegmented(dst [][]byte, resp Response, maxPacket int) ([][]byte, error) {
	n := len(dst)
	dst, err := AppendSegmentedPayloads(dst, resp, maxPacket)
	if err != nil {
		return dst, err
	}
	for i := n; i < len(dst); i++ {
		dst[i] = wrap(nil, dst[i])
	}
	return dst, nil
}

// AppendSegmentedPayloads appends the plain payloads of reply resp sent
// segmented, as a server with sv_maxpacketsize maxPacket cuts it: the reply
// from the time on (resp.Code is not sent), in chunks of at most
// maxPacket-12 bytes, in order.
func AppendSegmentedPayloads(dst [][]byte, resp Response, maxPacket int) ([][]byte, error) {
	if maxPacket <= segmentHeader {
		return dst, newError("segment.size", 0, "", wire.Detailf(codecs.ErrBadValue, "packet size %d leaves no room after the 12-byte header", int64(maxPacket)))
	}
	e := encoder{}
	e.body(&resp)
	if e.err != nil {
		return dst, e.err
	}
	whole := e.b
	chunk := maxPacket - segmentHeader
	total := (len(whole) + chunk - 1) / chunk
	switch {
	case len(whole) > 0xffff:
		return dst, newError("segment.total_size", 0, "", wire.Detailf(codecs.ErrTooLong, "%d bytes, at most 65535", int64(len(whole))))
	case total > 255:
		return dst, newError("segment.total", 0, "", wire.Detailf(codecs.ErrTooLong, "%d segments, at most 255", int64(total)))
	}
	for i := range total {
		off := i * chunk
		size := min(chunk, len(whole)-off)
		p := make([]byte, 0, segmentHeader+size)
		p = binary.LittleEndian.AppendUint32(p, CodeSegmented)
		p = append(p, byte(i), byte(total))
		p = binary.LittleEndian.AppendUint16(p, uint16(off))
		p = binary.LittleEndian.AppendUint16(p, uint16(size))
		p = binary.LittleEndian.AppendUint16(p, uint16(len(whole)))
		p = append(p, whole[off:off+size]...)
		dst = append(dst, p)
	}
	return dst, nil
}
