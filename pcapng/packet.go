package pcapng

import "math/bits"

// Link types (LINKTYPE_* of the tcpdump.org list) the decoder reads.
const (
	linkNull     = 0   // BSD loopback: 4-byte address family in the writer's byte order
	linkEthernet = 1   // Ethernet II, with 802.1Q/802.1ad VLAN tags
	linkRaw12    = 12  // raw IP where DLT 12 meant DLT_RAW (most systems' libpcap before LINKTYPE_RAW)
	linkRaw14    = 14  // raw IP where DLT 14 meant DLT_RAW (BSD/OS, OpenBSD's DLT_RAW)
	linkLoop     = 108 // OpenBSD loopback: 4-byte address family, big-endian
	linkSLL      = 113 // Linux cooked capture v1: 16-byte header, protocol at 14
	linkIPv4     = 228 // raw IPv4
	linkIPv6     = 229 // raw IPv6
	linkSLL2     = 276 // Linux cooked capture v2: 20-byte header, protocol at 0
)

// EtherTypes.
const (
	etherIPv4  = 0x0800
	etherIPv6  = 0x86dd
	ether8021Q = 0x8100 // VLAN tag: 2 bytes TCI, 2 bytes the next EtherType
	ether8021A = 0x88a8 // 802.1ad service tag, the same layout
	etherQinQ  = 0x9100 // the pre-standard double tag, the same layout
)

// micros converts a pcapng timestamp in the interface's units to
// microseconds since the epoch.
func (ifc *iface) micros(ts uint64) int64 {
	e := uint(ifc.tsres & 0x7f)
	var us uint64
	if ifc.tsres&0x80 == 0 { // 10^-e seconds
		switch {
		case e == 6:
			us = ts
		case e < 6:
			us = ts * pow10[6-e]
		case e-6 < uint(len(pow10)):
			us = ts / pow10[e-6]
		}
	} else if e < 64 { // 2^-e seconds: ts * 10^6 / 2^e, without overflow
		hi, lo := bits.Mul64(ts, 1e6)
		if e == 0 {
			us = lo
		} else {
			us = hi<<(64-e) | lo>>e
		}
	}
	return int64(us) + ifc.tsOffset*1e6
}

var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// verdict is what became of a frame.
type verdict uint8

const (
	gotUDP    verdict = iota // a datagram to return
	skipped                  // no datagram (not UDP, malformed, unknown link)
	truncated                // the snap length cut the datagram
	fragment                 // a fragment taken for reassembly
	completed                // the fragment that completed a datagram
	gotTCP                   // a TCP segment, taken by the reassembly
)

// packet handles one frame: its link layer, IP and UDP or TCP. It counts
// the frame and returns its datagram, if it yields one (the turns a TCP
// segment completes wait in d.conns).
func (d *Decoder) packet(ifc *iface, data []byte, origLen uint32, micros int64, off int64, id int) (Datagram, bool) {
	d.stats.Frames++
	dg := Datagram{Frame: d.stats.Frames, Micros: micros, Offset: off, Interface: id}
	cut := uint64(len(data)) < uint64(origLen)
	var v verdict
	switch ip, ok := linkPayload(ifc.linkType, data); {
	case !ok:
		v = skipped
	default:
		v = d.ip(ip, cut, &dg)
	}
	switch v {
	case gotUDP:
		d.stats.UDP++
		return dg, true
	case completed:
		d.stats.Fragments++
		d.stats.Reassembled++
		d.stats.UDP++
		return dg, true
	case fragment:
		d.stats.Fragments++
	case gotTCP:
		d.stats.Segments++
	case truncated:
		d.stats.Truncated++
		d.stats.Skipped++
	default:
		d.stats.Skipped++
	}
	return Datagram{}, false
}

// linkPayload returns the IP packet inside a frame of the given link type,
// or false when it carries something else or the link type is unknown.
func linkPayload(link uint16, b []byte) ([]byte, bool) {
	var proto int
	switch link {
	case linkRaw12, linkRaw14, LinkTypeRaw, linkIPv4, linkIPv6:
		return b, true
	case linkNull, linkLoop:
		if len(b) < 4 {
			return nil, false
		}
		fam := be32(b)
		if link == linkNull && fam > 0xffff { // written little-endian
			fam = le32(b)
		}
		switch fam {
		case 2: // AF_INET everywhere
			proto = etherIPv4
		case 10, 24, 28, 30: // AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, macOS
			proto = etherIPv6
		}
		b = b[4:]
	case linkEthernet:
		if len(b) < 14 {
			return nil, false
		}
		proto, b = int(b[12])<<8|int(b[13]), b[14:]
		for proto == ether8021Q || proto == ether8021A || proto == etherQinQ {
			if len(b) < 4 {
				return nil, false
			}
			proto, b = int(b[2])<<8|int(b[3]), b[4:]
		}
	case linkSLL:
		if len(b) < 16 {
			return nil, false
		}
		proto, b = int(b[14])<<8|int(b[15]), b[16:]
	case linkSLL2:
		if len(b) < 20 {
			return nil, false
		}
		proto, b = int(b[0])<<8|int(b[1]), b[20:]
	default:
		return nil, false
	}
	if proto != etherIPv4 && proto != etherIPv6 {
		return nil, false
	}
	return b, true
}

// IP protocol numbers and IPv6 extension headers.
const (
	protoHopByHop = 0
	protoTCP      = 6
	protoUDP      = 17
	protoRouting  = 43
	protoFragment = 44
	protoAH       = 51
	protoDstOpts  = 60
	protoMobility = 135
	protoHIP      = 139
	protoShim6    = 140
)

// ip reads an IPv4 or IPv6 packet. cut says the snap length shortened the
// frame, so a datagram running past the data is truncated, not malformed.
func (d *Decoder) ip(b []byte, cut bool, dg *Datagram) verdict {
	short := skipped
	if cut {
		short = truncated
	}
	if len(b) < 1 {
		return short
	}
	switch b[0] >> 4 {
	case 4:
		if len(b) < 20 {
			return short
		}
		hl := int(b[0]&0x0f) * 4
		total := int(b[2])<<8 | int(b[3])
		if hl < 20 || total < hl {
			return skipped
		}
		if total > len(b) {
			if !cut {
				return skipped
			}
			return truncated
		}
		b = b[:total] // drop the link layer's padding
		dg.Src = Endpoint{V4: true}
		dg.Dst = Endpoint{V4: true}
		copy(dg.Src.IP[:4], b[12:16])
		copy(dg.Dst.IP[:4], b[16:20])
		flags := int(b[6])<<8 | int(b[7])
		if b[9] == protoTCP && flags&0x3fff == 0 {
			return d.tcp(b[hl:], dg)
		}
		if b[9] != protoUDP {
			return skipped // TCP in fragments is not read
		}
		if flags&0x3fff != 0 { // more fragments, or a fragment offset
			key := fragKey{v4: true, id: uint32(b[4])<<8 | uint32(b[5]), proto: protoUDP}
			key.src, key.dst = dg.Src.IP, dg.Dst.IP
			whole, v := d.frags.add(key, (flags&0x1fff)*8, flags&0x2000 != 0, b[hl:])
			if v != completed {
				return v
			}
			return udp(whole, false, true, dg)
		}
		return udp(b[hl:], cut, false, dg)
	case 6:
		if len(b) < 40 {
			return short
		}
		plen := int(b[4])<<8 | int(b[5])
		if plen == 0 { // a jumbogram (hop-by-hop option): not for game queries
			return skipped
		}
		if 40+plen > len(b) {
			if !cut {
				return skipped
			}
			return truncated
		}
		b = b[:40+plen]
		copy(dg.Src.IP[:], b[8:24])
		copy(dg.Dst.IP[:], b[24:40])
		next, rest := b[6], b[40:]
		for {
			switch next {
			case protoUDP:
				return udp(rest, cut, false, dg)
			case protoTCP:
				return d.tcp(rest, dg)
			case protoHopByHop, protoRouting, protoDstOpts, protoMobility, protoHIP, protoShim6:
				if len(rest) < 8 {
					return short
				}
				n := (int(rest[1]) + 1) * 8
				if n > len(rest) {
					return short
				}
				next, rest = rest[0], rest[n:]
			case protoAH:
				if len(rest) < 8 {
					return short
				}
				n := (int(rest[1]) + 2) * 4
				if n > len(rest) {
					return short
				}
				next, rest = rest[0], rest[n:]
			case protoFragment:
				if len(rest) < 8 {
					return short
				}
				offMore := int(rest[2])<<8 | int(rest[3])
				key := fragKey{id: be32(rest[4:]), proto: rest[0]}
				key.src, key.dst = dg.Src.IP, dg.Dst.IP
				if !fragmentable(rest[0]) {
					return skipped
				}
				whole, v := d.frags.add(key, offMore&^7, offMore&1 != 0, rest[8:])
				if v != completed {
					return v
				}
				return d.afterFragment(rest[0], whole, dg)
			default: // ESP, ICMPv6, no next header, …
				return skipped
			}
		}
	}
	return skipped
}

// fragmentable says whether the fragments of an IPv6 packet whose
// fragmentable part starts with next may hold a UDP datagram.
func fragmentable(next byte) bool {
	switch next {
	case protoUDP, protoDstOpts, protoRouting:
		return true
	}
	return false
}

// afterFragment reads a reassembled IPv6 payload: the extension headers
// after the fragment header, if any, then UDP.
func (d *Decoder) afterFragment(next byte, b []byte, dg *Datagram) verdict {
	for next != protoUDP {
		if next != protoDstOpts && next != protoRouting || len(b) < 8 {
			return skipped
		}
		n := (int(b[1]) + 1) * 8
		if n > len(b) {
			return skipped
		}
		next, b = b[0], b[n:]
	}
	return udp(b, false, true, dg)
}

// udp reads a UDP header and sets the datagram's ports and payload.
func udp(b []byte, cut, reassembled bool, dg *Datagram) verdict {
	short := skipped
	if cut {
		short = truncated
	}
	if len(b) < 8 {
		return short
	}
	n := int(b[4])<<8 | int(b[5])
	if n == 0 && !dg.Src.V4 { // IPv6 jumbo UDP: the length is the packet's
		n = len(b)
	}
	if n < 8 {
		return skipped
	}
	if n > len(b) {
		return short
	}
	dg.Src.Port = uint16(b[0])<<8 | uint16(b[1])
	dg.Dst.Port = uint16(b[2])<<8 | uint16(b[3])
	dg.Payload = b[8:n]
	if reassembled {
		return completed
	}
	return gotUDP
}
