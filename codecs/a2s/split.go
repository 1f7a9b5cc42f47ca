package a2s

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// SplitForm is the layout of a split part's header. The three forms share
// the -2 header and the id; which one a message uses is read from its
// packet 0 (see formOf), never from the app id.
type SplitForm uint8

const (
	// SplitSource: -2, id s32, total u8, number u8, size u16le; packet 0 of
	// a compressed message (id's top bit) then has decompressed size u32le
	// and CRC32 u32le.
	SplitSource SplitForm = iota
	// SplitSourceNoSize: the older Source form without the size field.
	SplitSourceNoSize
	// SplitGoldSrc: -2, id s32, one byte: number in the upper nibble,
	// total in the lower.
	SplitGoldSrc
)

var splitFormNames = [...]string{"source", "source-no-size", "goldsrc"}

func (f SplitForm) String() string {
	if int(f) < len(splitFormNames) {
		return splitFormNames[f]
	}
	return strconv.Itoa(int(f))
}

// compressedBit is the top bit of a Source split id: the message is bzip2
// compressed.
const compressedBit = 0x80000000

// splitPart is the header of one split datagram.
type splitPart struct {
	_          [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	id         uint32
	total      int
	number     int
	size       uint16 // SplitSource
	compressed bool   // Source forms, from the id
	rawSize    uint32 // packet 0 of a compressed message
	crc        uint32
	body       int // offset of the part's payload bytes
}

// hasMagic reports whether b has FF FF FF FF at off.
func hasMagic(b []byte, off int) bool {
	return len(b) >= off+4 && binary.LittleEndian.Uint32(b[off:]) == headerSingle
}

// hasBzip2 reports whether b has a bzip2 stream's "BZh" at off.
func hasBzip2(b []byte, off int) bool {
	return len(b) >= off+3 && string(b[off:off+3]) == "BZh"
}

// formOf finds the form of a split message from its packet 0: the form
// under which b is packet 0 and its payload starts where the form says
// (with FF FF FF FF, or with "BZh" when compressed). ok is false when b is
// not a packet 0 of any form.
func formOf(b []byte) (SplitForm, bool) {
	if len(b) < 9 || binary.LittleEndian.Uint32(b) != headerSplit {
		return 0, false
	}
	compressed := binary.LittleEndian.Uint32(b[4:])&compressedBit != 0
	source := len(b) >= 10 && b[8] >= 1 && b[9] == 0
	switch {
	case source && !compressed && hasMagic(b, 12), source && compressed && hasBzip2(b, 20):
		return SplitSource, true
	case source && !compressed && hasMagic(b, 10), source && compressed && hasBzip2(b, 18):
		return SplitSourceNoSize, true
	case b[8]>>4 == 0 && b[8]&0x0f >= 1 && hasMagic(b, 9):
		return SplitGoldSrc, true
	}
	return 0, false
}

// readSplit reads a split part's header in form f, recording spans.
func readSplit(r *wire.Reader, f SplitForm) splitPart {
	var p splitPart
	start := r.Offset()
	if b := r.Skip("header", 4); len(b) == 4 {
		if binary.LittleEndian.Uint32(b) != headerSplit {
			r.FailAt("header", start, codecs.Detail(codecs.ErrBadMagic, "want -2 (FE FF FF FF)"))
			return p
		}
		if r.Recording() {
			r.Mark("header", "s32le", start, "-2 split message, form "+f.String())
		}
	}
	start = r.Offset()
	if b := r.Skip("id", 4); len(b) == 4 {
		p.id = binary.LittleEndian.Uint32(b)
		p.compressed = f != SplitGoldSrc && p.id&compressedBit != 0
		if r.Recording() {
			v := strconv.FormatUint(uint64(p.id), 10)
			if p.compressed {
				v += " bzip2 compressed"
			}
			r.Mark("id", "u32le", start, v)
		}
	}
	if f == SplitGoldSrc {
		start = r.Offset()
		if b := r.Skip("packet", 1); len(b) == 1 {
			p.number, p.total = int(b[0]>>4), int(b[0]&0x0f)
			if r.Recording() {
				r.Mark("packet", "u8", start, wire.Msg("number %d of %d", int64(p.number), int64(p.total)))
			}
		}
	} else {
		p.total = int(r.U8("total"))
		p.number = int(r.U8("number"))
		if f == SplitSource {
			p.size = r.U16LE("size")
		}
	}
	if r.Failed() {
		return p
	}
	switch {
	case p.total == 0:
		r.FailAt("total", r.Offset()-1, codecs.Detail(codecs.ErrBadValue, "a message of no packets"))
	case p.number >= p.total:
		r.FailAt("number", r.Offset()-1, wire.Detailf(codecs.ErrBadValue, "packet %d of %d", int64(p.number), int64(p.total)))
	}
	if p.compressed && p.number == 0 {
		p.rawSize = r.U32LE("decompressed_size")
		p.crc = r.U32LE("crc32")
	}
	p.body = r.Offset()
	if !r.Failed() && r.Len() > 0 {
		start, n := r.Offset(), r.Len()
		r.Skip("fragment", n)
		if r.Recording() {
			r.Mark("fragment", "bytes", start, wire.Msg("%d bytes of the split message", int64(n)))
		}
	}
	return p
}

// splitSet is the parts of one split message, by packet number.
type splitSet struct {
	id     uint32
	form   SplitForm
	known  bool // packet 0 seen: form and total known
	first  splitPart
	member []int    // indexes into the datagrams, in arrival order
	part   [256]int // 1 + index of the datagram holding each number
	have   int
	dups   int
}

// missing describes the parts not received.
func (s *splitSet) missing() string {
	if !s.known {
		return wire.Msg("packet 0 missing (%d other packets received)", int64(len(s.member)))
	}
	text := wire.Msg("have %d of %d packets; missing", int64(s.have), int64(s.first.total))
	shown := 0
	for no := 0; no < s.first.total; no++ {
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

// join appends the payload of packet 0, then of every later packet in
// order, stopping at the first one missing.
func (s *splitSet) join(dst []byte, datagrams [][]byte, body []int) []byte {
	for no := 0; no < s.first.total && s.part[no] != 0; no++ {
		i := s.part[no] - 1
		dst = append(dst, datagrams[i][body[i]:]...)
	}
	return dst
}

// decompress checks and inflates a compressed message: the size is
// bounded before anything is allocated, and both the size and the CRC32
// must match what packet 0 announced. sizeAt is the offset of the
// decompressed size in packet 0 (the CRC32 follows it); errors about
// either name that field at that offset, since a stream that holds more
// or less than announced makes the announced length the field at fault.
func decompress(joined []byte, rawSize, crc uint32, sizeAt int) ([]byte, error) {
	if rawSize > MaxDecompressed {
		return nil, newDetailf("decompressed_size", sizeAt, "", codecs.ErrTooLong, "%d bytes announced, at most %d", int64(rawSize), MaxDecompressed)
	}
	out, err := bunzip2(make([]byte, 0, rawSize), joined, int(rawSize))
	if e, ok := err.(*codecs.Error); ok && e.Field == "bzip2.output" {
		return out, newDetailf("decompressed_size", sizeAt, "", codecs.ErrTooLong, "%d bytes announced, the stream decompresses to more", int64(rawSize))
	}
	if err != nil {
		return out, err
	}
	if len(out) != int(rawSize) {
		return out, newDetailf("decompressed_size", sizeAt, "", codecs.ErrBadValue, "%d bytes announced, the stream decompresses to %d", int64(rawSize), int64(len(out)))
	}
	if got := crc32IEEE(out); got != crc {
		return out, newDetailf("crc32", sizeAt+4, "", codecs.ErrBadValue, "the decompressed bytes have CRC32 %d, %d announced", int64(got), int64(crc))
	}
	return out, nil
}

// Reassemble joins the datagrams of one split message, given in any order
// with duplicates ignored, into the whole message (decompressed when it
// was compressed), which DecodeResponse reads. A single unsplit datagram
// is returned as it is. Missing parts give what joins up from packet 0
// (nothing when compressed) and an error wrapping codecs.ErrIncomplete.
func Reassemble(dst []byte, datagrams [][]byte) ([]byte, error) {
	if len(datagrams) == 0 {
		return dst, newDetail("datagrams", 0, "", codecs.ErrIncomplete, "no datagrams")
	}
	if len(datagrams) == 1 && hasMagic(datagrams[0], 0) {
		return append(dst, datagrams[0]...), nil
	}
	var d decoder
	d.init(datagrams, nil)
	for i := range datagrams {
		if err := d.file(i); err != nil {
			return dst, err
		}
	}
	if len(d.sets) != 1 {
		return dst, newDetailf("id", 4, "", codecs.ErrBadValue, "parts of %d messages", int64(len(d.sets)))
	}
	p, err := d.reassemble(&d.sets[0])
	return append(dst, p.b...), err
}

// SplitResponse cuts a whole message (starting FF FF FF FF) into the parts
// a server sends when it exceeds maxBody bytes of payload per datagram
// (Source servers use 1248; the Source size field carries it). A message
// that fits is returned as one datagram. id's top bit is cleared in the
// Source forms (it means compressed); GoldSrc allows at most 15 parts and
// Source 255.
func SplitResponse(msg []byte, id uint32, f SplitForm, maxBody int) ([][]byte, error) {
	if len(msg) <= maxBody {
		return [][]byte{msg}, nil
	}
	if f != SplitGoldSrc {
		id &^= compressedBit
	}
	return split(msg, id, f, maxBody, 0, 0)
}

// SplitCompressed sends msg (starting FF FF FF FF) compressed: compressed
// is msg's bzip2 stream (made by the caller; this package only
// decompresses). The parts carry msg's size and CRC32 in packet 0, and id
// with its top bit set. Always split, even into one part: a compressed
// message is only sent as a split one.
func SplitCompressed(msg, compressed []byte, id uint32, f SplitForm, maxBody int) ([][]byte, error) {
	if f == SplitGoldSrc {
		return nil, newDetail("form", 0, "", codecs.ErrBadValue, "GoldSrc has no compressed form")
	}
	return split(compressed, id|compressedBit, f, maxBody, uint32(len(msg)), crc32IEEE(msg))
}

func split(body []byte, id uint32, f SplitForm, maxBody int, rawSize, crc uint32) ([][]byte, error) {
	if maxBody < 1 {
		return nil, newDetail("max_body", 0, "", codecs.ErrBadValue, "no room for a payload")
	}
	n := max(1, (len(body)+maxBody-1)/maxBody)
	limit := 255
	if f == SplitGoldSrc {
		limit = 15
	}
	if n > limit {
		return nil, newDetailf("total", 0, "", codecs.ErrTooLong, "%d parts, at most %d", int64(n), int64(limit))
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		p := make([]byte, 0, 20+maxBody)
		p = binary.LittleEndian.AppendUint32(p, headerSplit)
		p = binary.LittleEndian.AppendUint32(p, id)
		if f == SplitGoldSrc {
			p = append(p, byte(i<<4|n))
		} else {
			p = append(p, byte(n), byte(i))
			if f == SplitSource {
				p = binary.LittleEndian.AppendUint16(p, uint16(maxBody))
			}
			if id&compressedBit != 0 && i == 0 {
				p = binary.LittleEndian.AppendUint32(p, rawSize)
				p = binary.LittleEndian.AppendUint32(p, crc)
			}
		}
		out = append(out, append(p, body[i*maxBody:min(len(body), (i+1)*maxBody)]...))
	}
	return out, nil
}

// crcIEEETable is the table of the IEEE CRC-32 (reflected, polynomial
// 0xedb88320), made at init: hash/crc32 would bring its slicing-by-8
// tables into the browser module for the few bytes of a rules reply.
var crcIEEETable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xedb88320
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return
}()

// crc32IEEE is crc32.ChecksumIEEE(b): the CRC32 a compressed Source
// message carries of its decompressed bytes.
func crc32IEEE(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c = crcIEEETable[byte(c)^x] ^ c>>8
	}
	return ^c
}
