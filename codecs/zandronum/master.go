package zandronum

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// maxListPacket is the largest plain list packet a master sends
// (ulMaxPacketSize 1024 minus 1).
const maxListPacket = 1023

// DecodeMasterList decodes a master's answer from its datagrams (Huffman
// layer included) in any order: the packets of a list (LONG 6), the legacy
// single-packet list (LONG 0), or one refusal (LONG 3, 4 or 5). Servers
// come in packet-number order. The list is Complete when packets 0..k are
// held and packet k ended the list; otherwise the error is ErrIncomplete
// and the servers of the packets held are returned.
func DecodeMasterList(datagrams [][]byte) (MasterList, error) {
	s := getScratch()
	payloads, _, _, err := unwrapAll(nil, &s.buf, datagrams)
	l := MasterList{}
	if err == nil {
		l, err = decodeMasterList(nil, s.r, payloads, nil)
	}
	putScratch(s)
	return l, err
}

// DecodeMasterListPayloads is DecodeMasterList for plain payloads.
func DecodeMasterListPayloads(payloads [][]byte) (MasterList, error) {
	s := getScratch()
	l, err := decodeMasterList(nil, s.r, payloads, nil)
	putScratch(s)
	return l, err
}

// layerOf is the index of payload i's layer (0 without a sink).
func layerOf(layers []int, i int) int {
	if layers == nil {
		return 0
	}
	return layers[i]
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func masterFail(i, n int, field string, off int, err error) error {
	return newError(field, off, payloadName(i, n), err)
}

// decodeMasterList decodes the packets; rd is a cursor to reuse when sk
// is nil.
func decodeMasterList(sk *sink, rd *wire.Reader, payloads [][]byte, layers []int) (MasterList, error) {
	var l MasterList
	n := len(payloads)
	if n == 0 {
		return l, newError("packets", 0, "", codecs.Detail(codecs.ErrIncomplete, "no packet"))
	}
	// Look at every packet's code and number first, to order them.
	var seen [256]int // 1 + index of the payload holding that packet number
	for i, p := range payloads {
		if len(p) < 4 {
			return l, masterFail(i, n, "response", 0, codecs.ErrShort)
		}
		code := binary.LittleEndian.Uint32(p)
		switch {
		case code == MasterBeginPart:
		case n == 1 && (code == MasterBeginList || masterDenied(code) != ""):
		case n > 1 && (code == MasterBeginList || masterDenied(code) != ""):
			return l, masterFail(i, n, "response", 0, wire.Detailf(codecs.ErrBadValue, "a single-packet reply (%d) among list packets", int64(code)))
		default:
			return l, masterFail(i, n, "response", 0, codecs.Detail(codecs.ErrUnknownCode, strconv.FormatUint(uint64(code), 10)))
		}
		l.Code = code
		if code != MasterBeginPart {
			break
		}
		if len(p) < 5 {
			return l, masterFail(i, n, "packet_number", 4, codecs.ErrShort)
		}
		if seen[p[4]] != 0 {
			return l, masterFail(i, n, "packet_number", 4, wire.Detailf(codecs.ErrBadValue, "packet %d received twice", int64(p[4])))
		}
		seen[p[4]] = i + 1
	}

	switch l.Code {
	case MasterBanned, MasterIgnored, MasterWrongVersion:
		r := sk.reader(rd, payloads[0], layerOf(layers, 0))
		enum8x4(r, "response", masterCodeName)
		l.Trailing = r.Len()
		trailing(r)
		return l, inLayer(r.Err(), payloadName(0, 1))
	case MasterBeginList:
		r := sk.reader(rd, payloads[0], layerOf(layers, 0))
		l.Servers = make([]Addr, 0, countLegacy(payloads[0]))
		l.Servers = decodeLegacyList(r, l.Servers)
		l.Packets = append(make([]MasterPacket, 0, 1), MasterPacket{Number: 0, Final: !r.Failed(), Servers: len(l.Servers)})
		l.Complete = !r.Failed()
		l.Trailing = r.Len()
		trailing(r)
		return l, inLayer(r.Err(), payloadName(0, 1))
	}

	total := 0
	for _, p := range payloads {
		total += countBlocks(p)
	}
	l.Servers = make([]Addr, 0, total)
	l.Packets = make([]MasterPacket, 0, n)
	final := -1
	for num := range seen {
		i := seen[num] - 1
		if i < 0 {
			continue
		}
		r := sk.reader(rd, payloads[i], layerOf(layers, i))
		before := len(l.Servers)
		var end uint8
		l.Servers, end = decodeListPart(r, sk.spanPtr(), l.Servers, true)
		l.Packets = append(l.Packets, MasterPacket{Number: uint8(num), Final: end == MasterEndList, Servers: len(l.Servers) - before})
		if err := r.Err(); err != nil {
			return l, inLayer(err, payloadName(i, n))
		}
		l.Trailing += r.Len()
		trailing(r)
		if end == MasterEndList {
			if final >= 0 {
				return l, masterFail(i, n, "end", r.Offset()-1, wire.Detailf(codecs.ErrBadValue, "packets %d and %d both end the list", int64(final), int64(num)))
			}
			final = num
		}
	}
	// Packets 0..final must all be there, and none after final.
	if final >= 0 {
		last := l.Packets[len(l.Packets)-1].Number
		if int(last) > final {
			i := seen[last] - 1
			return l, masterFail(i, n, "packet_number", 4, wire.Detailf(codecs.ErrBadValue, "packet %d comes after packet %d, which ended the list", int64(last), int64(final)))
		}
	}
	for k, pk := range l.Packets {
		if int(pk.Number) != k {
			return l, newError("packets", 0, "", wire.Detailf(codecs.ErrIncomplete, "packet %d missing", int64(k)))
		}
	}
	if final < 0 {
		return l, newError("packets", 0, "", wire.Detailf(codecs.ErrIncomplete, "packet %d or a later one, which ends the list, missing", int64(len(l.Packets))))
	}
	l.Complete = true
	return l, nil
}

// decodeListPart reads one list packet, appending its servers to dst
// unless keep is false (a check only). It returns the end byte
// (MasterEndList or MasterEndPart).
func decodeListPart(r *wire.Reader, spans *[]codecs.Span, dst []Addr, keep bool) ([]Addr, uint8) {
	enum8x4(r, "response", masterCodeName)
	r.U8("packet_number")
	start := r.Offset()
	if v := enum8(r, "server_block", nil, "server blocks follow"); !r.Failed() && v != MasterServerBlock {
		r.FailAt("server_block", start, wire.Detailf(codecs.ErrBadValue, "got %d, want 8", int64(v)))
	}
	for i := 0; !r.Failed(); i++ {
		r.Enter("blocks", i)
		start, at := r.Offset(), spanCount(spans)
		n := enum8(r, "count", blockCount, "")
		if n == 0 || r.Failed() {
			r.Leave()
			break
		}
		var a Addr
		a.IP = ipv4(r)
		for j := range int(n) {
			// The path only names a span or an error; a port with its
			// two bytes there cannot fail.
			if r.Recording() || r.Len() < 2 {
				r.Enter("ports", j)
				a.Port = r.U16LE("")
				r.Leave()
			} else {
				a.Port = r.U16LE("")
			}
			if r.Failed() {
				break
			}
			if keep {
				dst = append(dst, a)
			}
		}
		if r.Recording() {
			markGroup(r, spans, at, "", "group", start, ipString(a.IP)+": "+strconv.Itoa(int(n))+" servers")
		}
		r.Leave()
	}
	start = r.Offset()
	end := enum8(r, "end", masterEndName, "")
	if !r.Failed() && end != MasterEndList && end != MasterEndPart {
		r.FailAt("end", start, wire.Detailf(codecs.ErrBadValue, "got %d, want 2 (end of list) or 7 (more packets)", int64(end)))
	}
	return dst, end
}

// decodeLegacyList reads the legacy one-packet list.
func decodeLegacyList(r *wire.Reader, dst []Addr) []Addr {
	enum8x4(r, "response", masterCodeName)
	for i := 0; !r.Failed(); i++ {
		if r.Len() == 0 {
			r.Fail("end", codecs.ErrShort)
			break
		}
		start := r.Offset()
		if r.Rest()[0] != MasterServer {
			end := enum8(r, "end", masterEndName, "")
			if end != MasterEndList {
				r.FailAt("end", start, wire.Detailf(codecs.ErrBadValue, "got %d, want 1 (server) or 2 (end of list)", int64(end)))
			}
			break
		}
		r.Enter("servers", i)
		enum8(r, "marker", nil, "server")
		var a Addr
		a.IP = ipv4(r)
		a.Port = r.U16LE("port")
		r.Leave()
		if !r.Failed() {
			dst = append(dst, a)
		}
	}
	return dst
}

func blockCount(v uint8) string {
	if v == 0 {
		return "= end of blocks"
	}
	return "servers on this IP"
}

func ipv4(r *wire.Reader) [4]byte {
	var ip [4]byte
	start := r.Offset()
	b := r.Skip("ip", 4)
	if len(b) == 4 {
		copy(ip[:], b)
		if r.Recording() {
			r.Mark("ip", "ipv4", start, ipString(ip))
		}
	}
	return ip
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func ipString(ip [4]byte) string {
	b := Addr{IP: ip}.AppendTo(nil)
	return string(b[:len(b)-2]) // without ":0"
}

// enum8x4 reads a LONG and records it as "value meaning".
func enum8x4(r *wire.Reader, field string, meaning func(uint32) string) uint32 {
	start := r.Offset()
	b := r.Skip(field, 4)
	if len(b) < 4 {
		return 0
	}
	v := binary.LittleEndian.Uint32(b)
	if r.Recording() {
		r.Mark(field, "u32le", start, wire.Msg("%d ", int64(v))+meaning(v))
	}
	return v
}

func masterCodeName(v uint32) string {
	switch v {
	case MasterBeginList:
		return "legacy server list"
	case MasterBanned:
		return "your IP is banned"
	case MasterIgnored:
		return "asked too soon"
	case MasterWrongVersion:
		return "wrong version"
	case MasterBeginPart:
		return "server list packet"
	}
	return ""
}

func masterEndName(v uint8) string {
	switch v {
	case MasterEndList:
		return "end of list"
	case MasterEndPart:
		return "more packets follow"
	}
	return ""
}

// countBlocks counts the servers of a list packet without checking it,
// to size the result once.
func countBlocks(p []byte) int {
	n, i := 0, 6
	for i < len(p) && p[i] != 0 {
		k := int(p[i])
		n += k
		i += 5 + 2*k
	}
	return min(n, len(p)/2)
}

// countLegacy counts the entries of a legacy list the same way.
func countLegacy(p []byte) int {
	n := 0
	for i := 4; i < len(p) && p[i] == MasterServer; i += 7 {
		n++
	}
	return n
}

// AppendMasterList appends the datagrams (Huffman layer included) of a
// master's list of servers to dst. See AppendMasterListPayloads.
func AppendMasterList(dst [][]byte, servers []Addr) [][]byte {
	n := len(dst)
	dst = AppendMasterListPayloads(dst, servers)
	for i := n; i < len(dst); i++ {
		dst[i] = wrap(nil, dst[i])
	}
	return dst
}

// AppendMasterListPayloads appends the plain list packets a master sends
// for servers (docs/protocols/zandronum.md 3.2): consecutive servers on one IP share a
// block (at most 255 ports), a block never spans packets, and a packet
// takes blocks while it stays within 1023 bytes. A master keeps its
// servers sorted, so that equal IPs are adjacent; this builder keeps the
// caller's order. An empty list is one packet with no block.
func AppendMasterListPayloads(dst [][]byte, servers []Addr) [][]byte {
	num := 0
	p := listHeader(num)
	for i := 0; i < len(servers); {
		j := i + 1
		for j < len(servers) && j-i < 255 && servers[j].IP == servers[i].IP {
			j++
		}
		block := 5 + 2*(j-i)
		// The packet must keep room for the block terminator and end byte.
		if len(p)+block+2 > maxListPacket {
			dst = append(dst, append(p, 0, MasterEndPart))
			num++
			p = listHeader(num)
		}
		p = append(p, byte(j-i))
		p = append(p, servers[i].IP[:]...)
		for _, s := range servers[i:j] {
			p = binary.LittleEndian.AppendUint16(p, s.Port)
		}
		i = j
	}
	return append(dst, append(p, 0, MasterEndList))
}

func listHeader(num int) []byte {
	p := make([]byte, 0, maxListPacket)
	p = binary.LittleEndian.AppendUint32(p, MasterBeginPart)
	return append(p, byte(num), MasterServerBlock)
}

// AppendLegacyMasterList appends the datagram of the legacy one-packet
// list (the answer to LONG 199), Huffman layer included.
func AppendLegacyMasterList(dst []byte, servers []Addr) []byte {
	return wrap(dst, AppendLegacyMasterListPayload(nil, servers))
}

// AppendLegacyMasterListPayload appends the plain legacy list: LONG 0,
// then per server BYTE 1, the IP and a SHORT port, then BYTE 2.
func AppendLegacyMasterListPayload(dst []byte, servers []Addr) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, MasterBeginList)
	for _, s := range servers {
		dst = append(dst, MasterServer)
		dst = append(dst, s.IP[:]...)
		dst = binary.LittleEndian.AppendUint16(dst, s.Port)
	}
	return append(dst, MasterEndList)
}

// AppendMasterDenied appends a master's refusal datagram: code is
// MasterBanned, MasterIgnored or MasterWrongVersion, alone.
func AppendMasterDenied(dst []byte, code uint32) []byte {
	var tmp [4]byte
	return wrap(dst, AppendMasterDeniedPayload(tmp[:0], code))
}

// AppendMasterDeniedPayload appends the plain refusal: LONG code.
func AppendMasterDeniedPayload(dst []byte, code uint32) []byte {
	return binary.LittleEndian.AppendUint32(dst, code)
}
