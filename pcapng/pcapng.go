// Package pcapng writes the inspector's packet sessions as pcapng files that
// Wireshark and tcpdump open, and reads the UDP datagrams and the TCP turns
// of pcap and pcapng captures (Decoder, Reader; see decoder.go and tcp.go). It is pure Go with no fmt, so
// the browser module (wasm/) links it without growing.
//
// The file Append writes is one section: a Section Header Block, one Interface Description
// Block with link type LINKTYPE_RAW (each packet starts with its IP header,
// version 4 or 6), and one Enhanced Packet Block per datagram. The browser
// cannot see IP headers, so each packet gets a synthesized IPv4 (or IPv6)
// and UDP header carrying the real target address and port; the local end is
// the relay's socket, which the page does not know, so it is written as the
// unspecified address with port LocalPort. Timestamps are microseconds since
// the Unix epoch (the format's default resolution, also stated in the IDB).
//
// Packets with TCP set are bytes of a connection instead: the packets with
// the same Stream are one connection between the unspecified address, on a
// port of its own (LocalPort+1, +2, … in the order the streams first
// appear, so tshark tells them apart), and the first packet's Target. Its
// handshake (SYN, SYN-ACK, ACK) is written before its first packet, each
// packet's Data as segments of at most tcpMSS bytes in the packet's
// Direction (the last one with PSH), and its close (FIN-ACK from the local
// end, FIN-ACK from the target, ACK) right after its last packet, all at
// the packet's time. The sequence numbers start from fixed ISNs.
//
// Layout reference: the pcapng specification (IETF draft-ietf-opsawg-pcapng),
// sections 4.1 (SHB), 4.2 (IDB) and 4.3 (EPB). All blocks are written
// little-endian; readers learn that from the SHB's byte-order magic.
package pcapng

import (
	"encoding/binary"
)

// Block types and constants of the format.
const (
	blockSHB = 0x0a0d0d0a // Section Header Block
	blockIDB = 0x00000001 // Interface Description Block
	blockEPB = 0x00000006 // Enhanced Packet Block

	byteOrderMagic = 0x1a2b3c4d

	// LinkTypeRaw is LINKTYPE_RAW: packets begin with an IPv4 or IPv6 header.
	LinkTypeRaw = 101

	optEnd       = 0 // opt_endofopt
	optComment   = 1 // opt_comment, UTF-8
	optUserAppl  = 4 // shb_userappl
	optIfName    = 2 // if_name
	optIfTsresol = 9 // if_tsresol: one byte, 6 = 10^-6 s

	// LocalPort is the UDP port written for the relay's end of each packet.
	LocalPort = 49152

	snapLen = 65535

	// tcpMSS bounds the data of a TCP segment Append writes (Ethernet's
	// 1500-byte MTU less the IPv4 and TCP headers).
	tcpMSS = 1460
)

// Direction says which way a datagram went.
type Direction uint8

const (
	Sent     Direction = iota // from the relay to the target
	Received                  // from the target to the relay
)

// Packet is one UDP datagram of a session, or bytes of one of its TCP
// connections.
type Packet struct {
	Micros    int64 // capture time, microseconds since the Unix epoch
	Direction Direction
	// Target is the game server or master. The zero Endpoint (a host name
	// the page could not resolve) is written as 0.0.0.0 port 0.
	Target  Endpoint
	Data    []byte
	Comment string // optional, shown by Wireshark as a packet comment
	// TCP writes Data as bytes of a TCP connection with Target instead of
	// a UDP datagram. The packets with TCP set and the same Stream are one
	// connection: Append writes its handshake before the first, Data as
	// segments in sequence, and its close after the last.
	TCP    bool
	Stream int
}

// Append appends a complete pcapng file holding pkts to dst. app names the
// writing application (shb_userappl).
func Append(dst []byte, app string, pkts []Packet) []byte {
	dst = appendSHB(dst, app)
	dst = appendIDB(dst)
	var (
		conns map[int]*tcpConn
		last  map[int]int // a stream's last packet
		ip    []byte
	)
	for i, p := range pkts {
		if p.TCP {
			if last == nil {
				last, conns = map[int]int{}, map[int]*tcpConn{}
			}
			last[p.Stream] = i
		}
	}
	for i, p := range pkts {
		if !p.TCP {
			ip = appendIPUDP(ip[:0], p)
			dst = appendEPB(dst, p.Micros, p.Comment, ip)
			continue
		}
		c := conns[p.Stream]
		if c == nil {
			c = newTCPConn(p.Target, uint16(LocalPort+1+len(conns)%(0xffff-LocalPort)), uint32(len(conns)))
			conns[p.Stream] = c
			for _, seg := range [...]struct {
				x     int
				flags byte
			}{{0, tcpSYN}, {1, tcpSYN | tcpACK}, {0, tcpACK}} {
				ip = c.segment(ip[:0], seg.x, seg.flags, nil)
				dst = appendEPB(dst, p.Micros, "", ip)
			}
		}
		x := 0
		if p.Direction == Received {
			x = 1
		}
		comment := p.Comment
		for data := p.Data; len(data) > 0; {
			n := min(len(data), tcpMSS)
			flags := byte(tcpACK)
			if n == len(data) {
				flags |= tcpPSH
			}
			ip = c.segment(ip[:0], x, flags, data[:n])
			dst = appendEPB(dst, p.Micros, comment, ip)
			data, comment = data[n:], ""
		}
		if comment != "" { // no data: the comment goes on an ACK
			ip = c.segment(ip[:0], x, tcpACK, nil)
			dst = appendEPB(dst, p.Micros, comment, ip)
		}
		if last[p.Stream] == i {
			for _, seg := range [...]struct {
				x     int
				flags byte
			}{{0, tcpFIN | tcpACK}, {1, tcpFIN | tcpACK}, {0, tcpACK}} {
				ip = c.segment(ip[:0], seg.x, seg.flags, nil)
				dst = appendEPB(dst, p.Micros, "", ip)
			}
		}
	}
	return dst
}

// tcpConn is a connection Append writes: ends[0] is the local end.
type tcpConn struct {
	ends [2]Endpoint
	next [2]uint32 // each end's next sequence number
}

// newTCPConn starts a connection from the unspecified address's port to
// target; k numbers it, for its ISNs.
func newTCPConn(target Endpoint, port uint16, k uint32) *tcpConn {
	v6 := !target.V4 && target.IP != [16]byte{}
	if !v6 {
		target.V4 = true
	}
	return &tcpConn{ends: [2]Endpoint{{V4: !v6, Port: port}, target}, next: [2]uint32{0x10000000 + k<<16, 0x60000000 + k<<16}}
}

// segment appends an IP packet holding a TCP segment from end x with the
// flags and data, and advances x's sequence number.
func (c *tcpConn) segment(b []byte, x int, flags byte, data []byte) []byte {
	src, dst := c.ends[x], c.ends[1-x]
	seq, ack := c.next[x], c.next[1-x]
	if flags&tcpACK == 0 {
		ack = 0
	}
	tcpLen := 20 + len(data)
	b = appendIPHeader(b, src, dst, protoTCP, tcpLen)
	t := len(b)
	b = binary.BigEndian.AppendUint16(b, src.Port)
	b = binary.BigEndian.AppendUint16(b, dst.Port)
	b = binary.BigEndian.AppendUint32(b, seq)
	b = binary.BigEndian.AppendUint32(b, ack)
	b = append(b, 5<<4, flags) // data offset 5 words, flags
	b = append(b, 0xff, 0xff)  // window
	b = append(b, 0, 0, 0, 0)  // checksum (below), urgent pointer
	b = append(b, data...)
	binary.BigEndian.PutUint16(b[t+16:], ^fold(pseudoSum(src.addr(), dst.addr(), protoTCP, b[t:])))
	seq += uint32(len(data))
	if flags&(tcpSYN|tcpFIN) != 0 {
		seq++
	}
	c.next[x] = seq
	return b
}

// block appends a block of type typ whose body is written by body, filling
// in both copies of the total length afterwards.
func block(dst []byte, typ uint32, body func([]byte) []byte) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, typ)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // total length, patched below
	dst = body(dst)
	total := uint32(len(dst) - start + 4)
	binary.LittleEndian.PutUint32(dst[start+4:], total)
	return binary.LittleEndian.AppendUint32(dst, total)
}

// option appends one option, its value padded to 32 bits.
func option(dst []byte, code uint16, v []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, code)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(v)))
	dst = append(dst, v...)
	return pad4(dst, len(v))
}

func endOfOptions(dst []byte) []byte { return append(dst, optEnd, 0, 0, 0) }

func pad4(dst []byte, n int) []byte {
	for ; n%4 != 0; n++ {
		dst = append(dst, 0)
	}
	return dst
}

func appendSHB(dst []byte, app string) []byte {
	return block(dst, blockSHB, func(b []byte) []byte {
		b = binary.LittleEndian.AppendUint32(b, byteOrderMagic)
		b = binary.LittleEndian.AppendUint16(b, 1) // major version
		b = binary.LittleEndian.AppendUint16(b, 0) // minor version
		b = binary.LittleEndian.AppendUint64(b, ^uint64(0))
		if app != "" {
			b = option(b, optUserAppl, []byte(app))
			b = endOfOptions(b)
		}
		return b
	})
}

func appendIDB(dst []byte) []byte {
	return block(dst, blockIDB, func(b []byte) []byte {
		b = binary.LittleEndian.AppendUint16(b, LinkTypeRaw)
		b = binary.LittleEndian.AppendUint16(b, 0) // reserved
		b = binary.LittleEndian.AppendUint32(b, snapLen)
		b = option(b, optIfName, []byte("relay"))
		b = option(b, optIfTsresol, []byte{6})
		return endOfOptions(b)
	})
}

// appendEPB appends an EPB holding the IP packet ip.
func appendEPB(dst []byte, micros int64, comment string, ip []byte) []byte {
	return block(dst, blockEPB, func(b []byte) []byte {
		us := uint64(micros)
		b = binary.LittleEndian.AppendUint32(b, 0) // interface 0
		b = binary.LittleEndian.AppendUint32(b, uint32(us>>32))
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
		n := uint32(len(ip))
		b = binary.LittleEndian.AppendUint32(b, n) // captured length
		b = binary.LittleEndian.AppendUint32(b, n) // original length
		b = append(b, ip...)
		b = pad4(b, int(n))
		if comment != "" {
			b = option(b, optComment, []byte(comment))
			b = endOfOptions(b)
		}
		return b
	})
}

// appendIPUDP appends the synthesized IP and UDP headers and the payload.
func appendIPUDP(b []byte, p Packet) []byte {
	remote := p.Target
	v6 := !remote.V4 && remote.IP != [16]byte{}
	if !v6 {
		remote.V4 = true // the zero Endpoint is 0.0.0.0
	}
	local := Endpoint{V4: !v6, Port: LocalPort}
	src, dst := local, remote
	if p.Direction == Received {
		src, dst = dst, src
	}
	udpLen := 8 + len(p.Data)
	b = appendIPHeader(b, src, dst, protoUDP, udpLen)
	u := len(b)
	b = binary.BigEndian.AppendUint16(b, src.Port)
	b = binary.BigEndian.AppendUint16(b, dst.Port)
	b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
	b = append(b, 0, 0) // checksum (below)
	b = append(b, p.Data...)
	binary.BigEndian.PutUint16(b[u+6:], udpChecksum(src.addr(), dst.addr(), b[u:]))
	return b
}

// appendIPHeader appends an IPv6 header (src not V4) or an IPv4 one with
// its checksum, for n bytes of protocol proto.
func appendIPHeader(b []byte, src, dst Endpoint, proto byte, n int) []byte {
	if !src.V4 {
		b = append(b, 0x60, 0, 0, 0) // version 6, traffic class 0, flow label 0
		b = binary.BigEndian.AppendUint16(b, uint16(n))
		b = append(b, proto, 64) // next header, hop limit
		b = append(b, src.IP[:]...)
		return append(b, dst.IP[:]...)
	}
	h := len(b)
	b = append(b, 0x45, 0) // version 4, IHL 5 words; TOS 0
	b = binary.BigEndian.AppendUint16(b, uint16(20+n))
	b = append(b, 0, 0, 0x40, 0)   // identification 0; flags DF, fragment offset 0
	b = append(b, 64, proto, 0, 0) // TTL, protocol, checksum (below)
	b = append(b, src.addr()...)
	b = append(b, dst.addr()...)
	binary.BigEndian.PutUint16(b[h+10:], ^fold(sum(0, b[h:h+20])))
	return b
}

// pseudoSum is the sum over the pseudo-header of RFC 768 and RFC 9293
// (addresses, protocol, length) and the segment seg, not yet folded and
// complemented.
func pseudoSum(src, dst []byte, proto byte, seg []byte) uint32 {
	s := sum(0, src)
	s = sum(s, dst)
	s += uint32(proto) + uint32(len(seg))
	return sum(s, seg)
}

// udpChecksum is RFC 768's checksum over the pseudo-header and the UDP
// header and payload. A computed zero is sent as 0xffff, because zero
// means "no checksum" in IPv4 and is invalid in IPv6.
func udpChecksum(src, dst []byte, udp []byte) uint16 {
	c := ^fold(pseudoSum(src, dst, protoUDP, udp))
	if c == 0 {
		c = 0xffff
	}
	return c
}

// sum adds b to s as big-endian 16-bit words (an odd last byte is the high
// half of a word), without folding the carries.
func sum(s uint32, b []byte) uint32 {
	for ; len(b) >= 2; b = b[2:] {
		s += uint32(b[0])<<8 | uint32(b[1])
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// fold adds the carries back into the low 16 bits (ones' complement sum).
func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}
