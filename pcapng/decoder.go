package pcapng

import (
	"errors"
	"io"
	"strconv"
)

// Reading: Decoder is a push parser of a whole capture file, pcapng or the
// older pcap format, fed as its bytes arrive (the page reads a dropped file
// in chunks; the CLI reads a file through Reader). It yields the UDP
// datagrams inside, whatever the link layer, with IPv4 and IPv6 fragments
// put back together, and the turns of its TCP connections (see tcp.go):
// the bytes one side sent, in sequence order, before the other answered.
//
// Framing:
//
//	pcap    header(24: magic, version 2.4, zone, sigfigs, snaplen, linktype)
//	        then records(16: ts_sec, ts_usec|ts_nsec, caplen, origlen; data)
//	        magic a1b2c3d4 (µs) or a1b23c4d (ns), in the writer's byte order
//	pcapng  blocks(type, total length, body, total length again), each a
//	        multiple of 4 bytes; a Section Header Block (0x0a0d0d0a) starts
//	        each section and sets its byte order with the magic 1a2b3c4d
//
// A frame is one packet record or packet block (EPB, SPB, obsolete PB),
// numbered from 1 in file order as tshark numbers them. Blocks the decoder
// does not use (name resolution, statistics, custom, unknown) are skipped
// by their length.
//
// Errors: a framing problem (bad magic, a length that is not a length, a
// block too short for its type, an interface that was never described) is
// a *FormatError naming the block and its file offset, and it is final: Next
// returns it from then on. A packet the decoder cannot use (neither UDP
// nor TCP, an unknown link type, cut by the snap length) is not an error;
// it is counted in Stats.Skipped.

// ErrMore is returned by Decoder.Next when it needs more bytes (Feed them,
// or call End when the file is over).
var ErrMore = errors.New("pcapng: more bytes needed")

// FormatError is a malformed file: what was wrong, in which block, at which
// file offset.
type FormatError struct {
	Block  string // "SHB", "IDB", "EPB", "SPB", "PB", "block 0x…", "pcap header", "pcap record", "file"
	Offset int64  // file offset of the block or record
	Msg    string
}

func (e *FormatError) Error() string {
	return "pcapng: " + e.Block + " at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// Datagram is one UDP datagram of a capture, or one turn of a TCP
// conversation (TCP set): the bytes one side sent, in stream order, before
// the other side sent any or the connection ended.
type Datagram struct {
	// Frame is the 1-based frame number, as tshark numbers frames (all
	// frames, UDP or not); for a reassembled IP datagram, the frame of its
	// last fragment.
	Frame    int
	Micros   int64 // capture time, microseconds since the Unix epoch
	Src, Dst Endpoint
	// Payload is the UDP payload (or the TCP turn's bytes). It aliases
	// the decoder's buffers and is valid until the next call to Next.
	Payload   []byte
	Offset    int64 // file offset of the block (pcapng) or record (pcap) of Frame
	Interface int   // pcapng interface id (0 for pcap)

	// TCP says the Datagram is a turn of a TCP stream. Payload is then the
	// turn's bytes reassembled in sequence order; Frame, Micros, Offset
	// and Interface are its first segment's; Src is the side that sent
	// them. A turn comes out of Next once it is over: when the other side
	// sends data, when its side sends FIN, on RST, or after End (the turns
	// still open when the file ends), so turns of different streams and
	// UDP datagrams come in the order they ended, not by Frame.
	TCP bool
	// Stream numbers the capture's TCP connections from 0 in the order
	// their first segment appears, as tshark's tcp.stream does.
	Stream int
	// Turn numbers the turns of one stream from 1.
	Turn int
	// Cut says the turn was longer than the reader keeps (512 KiB; the
	// rest was dropped). Gap says bytes of this side never appeared in the
	// capture: a turn open when the reader gave up waiting for them stops
	// before the gap (the bytes after it start the side's next turn), and
	// a side's turn that starts right after missing bytes is marked too.
	Cut, Gap bool
}

// Stats counts what the decoder has seen so far. Every frame is counted
// once, so Frames = (UDP - Reassembled) + Fragments + Segments + Skipped.
type Stats struct {
	Frames int // packet blocks or records
	UDP    int // datagrams Next returned, reassembled ones included
	// Skipped counts frames that gave no datagram: neither UDP nor TCP,
	// not IP, an unknown link type, malformed headers, TCP in IP
	// fragments, or cut short by the snap length (those are counted in
	// Truncated too).
	Skipped     int
	Fragments   int // frames holding an IP fragment of a UDP datagram
	Reassembled int // datagrams put back together from fragments
	Truncated   int // frames whose UDP datagram or TCP segment the snap length cut (part of Skipped)

	Segments int // frames holding a TCP segment, with data or not
	Streams  int // TCP connections seen (the next Stream number)
	Evicted  int // connections forgotten to follow newer ones (maxStreams)
	Turns    int // TCP turns Next returned
	Cut      int // of them, with Cut set
	Gaps     int // of them, with Gap set
}

// Limits that keep a hostile file from taking unbounded memory.
const (
	// maxBlock bounds a pcapng block or a pcap record (Wireshark's own
	// limit for a block is 16 MiB too).
	maxBlock = 16 << 20
	// maxInterfaces bounds the IDBs of one section.
	maxInterfaces = 1 << 16
)

type format uint8

const (
	formatUnknown format = iota
	formatPcap
	formatPcapng
)

// iface is what an IDB (or a pcap header) says about a link.
type iface struct {
	linkType uint16
	snapLen  uint32
	// tsres is if_tsresol: bit 7 clear, 10^-n s units; set, 2^-n s.
	tsres    uint8
	tsOffset int64 // if_tsoffset, seconds added to every timestamp
}

// Decoder is a push parser of a pcap or pcapng file: Feed bytes as they
// arrive (any chunking), then call Next until it returns ErrMore; End says
// the file is over. The zero Decoder is not ready: use NewDecoder.
type Decoder struct {
	buf  []byte // unread bytes; buf[pos:] is what the next block starts with
	pos  int
	base int64 // file offset of buf[0]
	err  error // sticky *FormatError

	format format
	big    bool // byte order of the pcap file or the current pcapng section
	nanos  bool // pcap: timestamps in nanoseconds
	ifaces []iface
	// sections counts the SHBs, so an IDB's interface ids restart per section.
	sections int

	stats Stats
	frags reassembler
	conns tcpState
	ended bool // End was called: the open TCP turns are queued
}

// NewDecoder returns a decoder waiting for the first bytes of a file.
func NewDecoder() *Decoder { return &Decoder{} }

// Feed appends the next bytes of the file. The decoder copies them; it keeps
// only the bytes of a block it has not finished (Next drops the rest when
// it runs out). Feed leaves the last Datagram's Payload intact.
func (d *Decoder) Feed(b []byte) {
	d.buf = append(d.buf, b...)
}

// Stats returns the counts so far.
func (d *Decoder) Stats() Stats { return d.stats }

// End tells the decoder the file is over. It returns nil when the last block
// was whole, or a *FormatError for the block it cut (or the error Next
// already returned). The TCP turns still open are over too: Next returns
// them after End (then ErrMore).
func (d *Decoder) End() error {
	if !d.ended {
		d.ended = true
		d.conns.end()
	}
	if d.err != nil {
		return d.err
	}
	rest := len(d.buf) - d.pos
	off := d.base + int64(d.pos)
	switch {
	case d.format == formatUnknown && rest == 0:
		return &FormatError{Block: "file", Offset: 0, Msg: "empty: no pcap or pcapng header"}
	case d.format == formatUnknown:
		return &FormatError{Block: "file", Offset: 0, Msg: "truncated header: " + strconv.Itoa(rest) + " bytes"}
	case rest == 0:
		return nil
	}
	b := d.buf[d.pos:]
	name, want := "pcap record", 16
	if d.format == formatPcapng {
		name, want = "block", 12
		if rest >= 4 {
			name = blockName(d.u32(b))
		}
		if rest >= 8 {
			want = int(d.u32(b[4:]))
		}
	} else if rest >= 16 {
		want = 16 + int(d.u32(b[8:]))
	}
	return &FormatError{Block: name, Offset: off,
		Msg: "truncated: the file ends after " + strconv.Itoa(rest) + " of its " + strconv.Itoa(want) + " bytes"}
}

// Next returns the next UDP datagram or TCP turn, ErrMore when the bytes
// fed so far hold no further whole block, or a *FormatError.
func (d *Decoder) Next() (Datagram, error) {
	for {
		if dg, ok := d.conns.pop(&d.stats); ok {
			return dg, nil
		}
		if d.err != nil {
			return Datagram{}, d.err
		}
		b := d.buf[d.pos:]
		off := d.base + int64(d.pos)
		var dg Datagram
		var ok bool
		var n int
		var err *FormatError
		switch d.format {
		case formatUnknown:
			n, err = d.header(b)
			if err == nil && n == 0 && d.format == formatPcapng {
				continue // the SHB is read as a block
			}
		case formatPcap:
			n, dg, ok, err = d.record(b, off)
		default:
			n, dg, ok, err = d.block(b, off)
		}
		if err != nil {
			d.err = err
			return Datagram{}, err
		}
		if n == 0 {
			d.compact()
			return Datagram{}, ErrMore
		}
		d.pos += n
		if ok {
			return dg, nil
		}
		if d.ended {
			// Frames fed after End have no later End to close their
			// turns: close them now.
			d.conns.end()
		}
	}
}

// compact drops the bytes already read, so the buffer holds only the start
// of the block being waited for.
func (d *Decoder) compact() {
	if d.pos == 0 {
		return
	}
	n := copy(d.buf, d.buf[d.pos:])
	d.base += int64(d.pos)
	d.buf, d.pos = d.buf[:n], 0
}

func (d *Decoder) u16(b []byte) uint16 {
	if d.big {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

func (d *Decoder) u32(b []byte) uint32 {
	if d.big {
		return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	return uint32(b[3])<<24 | uint32(b[2])<<16 | uint32(b[1])<<8 | uint32(b[0])
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func le32(b []byte) uint32 {
	return uint32(b[3])<<24 | uint32(b[2])<<16 | uint32(b[1])<<8 | uint32(b[0])
}

// Magic numbers of the file formats.
const (
	pcapMicro = 0xa1b2c3d4 // pcap, microsecond timestamps
	pcapNano  = 0xa1b23c4d // pcap, nanosecond timestamps
)

// header recognises the format from the first bytes and reads the pcap file
// header; a pcapng file's SHB is read by block like any later one.
func (d *Decoder) header(b []byte) (int, *FormatError) {
	if len(b) < 4 {
		return 0, nil
	}
	if be32(b) == blockSHB {
		d.format = formatPcapng
		return 0, nil
	}
	switch {
	case le32(b) == pcapMicro:
	case le32(b) == pcapNano:
		d.nanos = true
	case be32(b) == pcapMicro:
		d.big = true
	case be32(b) == pcapNano:
		d.big, d.nanos = true, true
	default:
		return 0, &FormatError{Block: "file", Offset: 0, Msg: "not a pcap or pcapng file: magic 0x" + hex32(be32(b))}
	}
	if len(b) < 24 {
		return 0, nil
	}
	if major := d.u16(b[4:]); major != 2 {
		return 0, &FormatError{Block: "pcap header", Offset: 0, Msg: "unsupported version " + strconv.Itoa(int(major))}
	}
	d.format = formatPcap
	// The link-type field's upper bits may carry the FCS length (pcap's
	// LINKTYPE field, bits 16..31); the link type is the low 16 bits.
	d.ifaces = append(d.ifaces[:0], iface{linkType: uint16(d.u32(b[20:])), snapLen: d.u32(b[16:]), tsres: 6})
	if d.nanos {
		d.ifaces[0].tsres = 9
	}
	return 24, nil
}

func hex32(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	for len(s) < 8 {
		s = "0" + s
	}
	return s
}

// record reads one pcap record.
func (d *Decoder) record(b []byte, off int64) (int, Datagram, bool, *FormatError) {
	if len(b) < 16 {
		return 0, Datagram{}, false, nil
	}
	capLen, origLen := d.u32(b[8:]), d.u32(b[12:])
	if capLen > maxBlock {
		return 0, Datagram{}, false, &FormatError{Block: "pcap record", Offset: off,
			Msg: "captured length " + strconv.FormatUint(uint64(capLen), 10) + " is over the " + strconv.Itoa(maxBlock) + "-byte limit"}
	}
	n := 16 + int(capLen)
	if len(b) < n {
		return 0, Datagram{}, false, nil
	}
	sec, frac := uint64(d.u32(b)), uint64(d.u32(b[4:]))
	var micros int64
	if d.nanos {
		micros = int64(sec*1e6 + frac/1000)
	} else {
		micros = int64(sec*1e6 + frac)
	}
	dg, ok := d.packet(&d.ifaces[0], b[16:n], origLen, micros, off, 0)
	return n, dg, ok, nil
}

// Block types the reader knows besides the writer's SHB, IDB and EPB.
const (
	blockPB  = 0x00000002 // obsolete Packet Block
	blockSPB = 0x00000003 // Simple Packet Block
	blockNRB = 0x00000004 // Name Resolution Block
	blockISB = 0x00000005 // Interface Statistics Block
	blockDSB = 0x0000000a // Decryption Secrets Block
)

func blockName(typ uint32) string {
	switch typ {
	case blockSHB:
		return "SHB"
	case blockIDB:
		return "IDB"
	case blockEPB:
		return "EPB"
	case blockSPB:
		return "SPB"
	case blockPB:
		return "PB"
	case blockNRB:
		return "NRB"
	case blockISB:
		return "ISB"
	case blockDSB:
		return "DSB"
	}
	return "block 0x" + hex32(typ)
}

// block reads one pcapng block.
func (d *Decoder) block(b []byte, off int64) (int, Datagram, bool, *FormatError) {
	if len(b) < 12 {
		return 0, Datagram{}, false, nil
	}
	typ := be32(b)
	if typ == blockSHB {
		// The SHB's byte-order magic, after the type and length, says how
		// to read everything in its section, its own length included.
		switch {
		case le32(b[8:]) == byteOrderMagic:
			d.big = false
		case be32(b[8:]) == byteOrderMagic:
			d.big = true
		default:
			return 0, Datagram{}, false, &FormatError{Block: "SHB", Offset: off, Msg: "bad byte-order magic 0x" + hex32(be32(b[8:]))}
		}
	} else {
		typ = d.u32(b)
	}
	name := blockName(typ)
	total := d.u32(b[4:])
	least := uint32(12)
	switch typ {
	case blockSHB:
		least = 28
	case blockIDB:
		least = 20
	case blockEPB, blockPB:
		least = 32
	case blockSPB:
		least = 16
	}
	switch {
	case total%4 != 0:
		return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "length " + strconv.FormatUint(uint64(total), 10) + " is not a multiple of 4"}
	case total < least:
		return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "length " + strconv.FormatUint(uint64(total), 10) + " is under the " + strconv.Itoa(int(least)) + " bytes of its fields"}
	case total > maxBlock:
		return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "length " + strconv.FormatUint(uint64(total), 10) + " is over the " + strconv.Itoa(maxBlock) + "-byte limit"}
	}
	n := int(total)
	if len(b) < n {
		return 0, Datagram{}, false, nil
	}
	if tail := d.u32(b[n-4:]); tail != total {
		return 0, Datagram{}, false, &FormatError{Block: name, Offset: off,
			Msg: "trailing length " + strconv.FormatUint(uint64(tail), 10) + " differs from the leading " + strconv.FormatUint(uint64(total), 10)}
	}
	body := b[8 : n-4]
	switch typ {
	case blockSHB:
		if major := d.u16(body[4:]); major != 1 {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "unsupported version " + strconv.Itoa(int(major))}
		}
		d.sections++
		d.ifaces = d.ifaces[:0]
	case blockIDB:
		if d.sections == 0 {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "before any SHB"}
		}
		if len(d.ifaces) >= maxInterfaces {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "more than " + strconv.Itoa(maxInterfaces) + " interfaces in one section"}
		}
		ifc := iface{linkType: d.u16(body), snapLen: d.u32(body[4:]), tsres: 6}
		if msg := d.idbOptions(&ifc, body[8:]); msg != "" {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: msg}
		}
		d.ifaces = append(d.ifaces, ifc)
	case blockEPB, blockPB:
		var id int
		if typ == blockEPB {
			id = int(d.u32(body))
		} else {
			id = int(d.u16(body)) // PB: interface id (16 bits), drops count (16 bits)
		}
		if id >= len(d.ifaces) {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off,
				Msg: "interface " + strconv.Itoa(id) + " was not described (the section has " + strconv.Itoa(len(d.ifaces)) + ")"}
		}
		ts := uint64(d.u32(body[4:]))<<32 | uint64(d.u32(body[8:]))
		capLen, origLen := d.u32(body[12:]), d.u32(body[16:])
		if uint64(capLen) > uint64(len(body)-20) {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off,
				Msg: "captured length " + strconv.FormatUint(uint64(capLen), 10) + " overruns the block's " + strconv.Itoa(len(body)-20) + " bytes of data"}
		}
		ifc := &d.ifaces[id]
		dg, ok := d.packet(ifc, body[20:20+capLen], origLen, ifc.micros(ts), off, id)
		return n, dg, ok, nil
	case blockSPB:
		if len(d.ifaces) == 0 {
			return 0, Datagram{}, false, &FormatError{Block: name, Offset: off, Msg: "no interface was described (an SPB belongs to interface 0)"}
		}
		// An SPB's captured length is the original length cut to the
		// interface's snap length and to the block.
		ifc := &d.ifaces[0]
		origLen := d.u32(body)
		capLen := uint64(origLen)
		if ifc.snapLen != 0 && uint64(ifc.snapLen) < capLen {
			capLen = uint64(ifc.snapLen)
		}
		if capLen > uint64(len(body)-4) {
			capLen = uint64(len(body) - 4)
		}
		dg, ok := d.packet(ifc, body[4:4+capLen], origLen, 0, off, 0)
		return n, dg, ok, nil
	}
	return n, Datagram{}, false, nil
}

// IDB options.
const (
	optIfTsoffset = 14 // if_tsoffset: int64 seconds
)

// idbOptions reads the options of an IDB the decoder uses (if_tsresol,
// if_tsoffset); it returns a message when they overrun the block.
func (d *Decoder) idbOptions(ifc *iface, b []byte) string {
	for len(b) >= 4 {
		code, n := d.u16(b), int(d.u16(b[2:]))
		if code == optEnd {
			return ""
		}
		if 4+n > len(b) {
			return "option " + strconv.Itoa(int(code)) + " overruns the block"
		}
		v := b[4 : 4+n]
		switch {
		case code == optIfTsresol && n == 1:
			ifc.tsres = v[0]
		case code == optIfTsoffset && n == 8:
			hi, lo := uint64(d.u32(v)), uint64(d.u32(v[4:]))
			if d.big {
				ifc.tsOffset = int64(hi<<32 | lo)
			} else {
				ifc.tsOffset = int64(lo<<32 | hi)
			}
		}
		adv := 4 + (n+3)&^3 // the value is padded to 32 bits
		b = b[min(adv, len(b)):]
	}
	return ""
}

// Reader reads the datagrams and TCP turns of a capture from an io.Reader.
type Reader struct {
	r      io.Reader
	d      *Decoder
	eof    bool
	ended  bool
	endErr error
}

// NewReader returns a Reader of the pcap or pcapng file r holds.
func NewReader(r io.Reader) *Reader { return &Reader{r: r, d: NewDecoder()} }

// readChunk is how much Reader asks its io.Reader for at a time.
const readChunk = 256 << 10

// Next returns the next UDP datagram or TCP turn, io.EOF after the last
// one, or an error: a *FormatError, or the io.Reader's own. The TCP turns
// still open at the end of the file come before a *FormatError for a cut
// last block.
func (r *Reader) Next() (Datagram, error) {
	for {
		dg, err := r.d.Next()
		if err != ErrMore {
			return dg, err
		}
		if r.ended {
			if r.endErr != nil {
				return Datagram{}, r.endErr
			}
			return Datagram{}, io.EOF
		}
		if r.eof {
			r.ended, r.endErr = true, r.d.End()
			continue
		}
		// Read straight into the decoder's buffer (Next left only the
		// start of a partial block in it).
		d := r.d
		d.compact()
		if cap(d.buf)-len(d.buf) < readChunk/2 {
			nb := make([]byte, len(d.buf), len(d.buf)+readChunk)
			copy(nb, d.buf)
			d.buf = nb
		}
		n, err := r.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+n]
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			return Datagram{}, err
		}
	}
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats { return r.d.Stats() }
