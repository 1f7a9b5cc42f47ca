package pcapng

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// block is one block as a reader sees it.
type readBlock struct {
	typ  uint32
	body []byte // between the leading length and the trailing length
}

// readBlocks walks a little-endian pcapng file the way a reader does,
// checking that every block's two length fields agree.
func readBlocks(t *testing.T, f []byte) []readBlock {
	t.Helper()
	var out []readBlock
	for len(f) > 0 {
		if len(f) < 12 {
			t.Fatalf("%d stray bytes at the end", len(f))
		}
		typ := binary.LittleEndian.Uint32(f)
		n := int(binary.LittleEndian.Uint32(f[4:]))
		if n%4 != 0 || n < 12 || n > len(f) {
			t.Fatalf("block %#x: bad total length %d (have %d)", typ, n, len(f))
		}
		if tail := int(binary.LittleEndian.Uint32(f[n-4:])); tail != n {
			t.Fatalf("block %#x: trailing length %d, leading %d", typ, tail, n)
		}
		out = append(out, readBlock{typ, f[8 : n-4]})
		f = f[n:]
	}
	return out
}

func options(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	m := map[uint16][]byte{}
	for len(b) >= 4 {
		code, n := binary.LittleEndian.Uint16(b), int(binary.LittleEndian.Uint16(b[2:]))
		if code == optEnd {
			return m
		}
		if 4+n > len(b) {
			t.Fatalf("option %d overruns its block", code)
		}
		m[code] = b[4 : 4+n]
		b = b[4+(n+3)/4*4:]
	}
	if len(b) != 0 {
		t.Fatalf("options end with %d stray bytes", len(b))
	}
	return m
}

func TestAppend(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
	target, _ := ParseEndpoint("127.0.0.1:10666")
	v6, _ := ParseEndpoint("[::1]:27900")
	pkts := []Packet{
		{Micros: t0.UnixMicro(), Direction: Sent, Target: target, Data: []byte{0xc7, 0, 0, 0, 1}},
		{Micros: t0.Add(1500 * time.Microsecond).UnixMicro(), Direction: Received, Target: target, Data: []byte("reply!"), Comment: "zandronum response"},
		{Micros: t0.Add(2 * time.Second).UnixMicro(), Direction: Sent, Target: v6, Data: []byte{0xfe, 0xfd, 0}},
	}
	f := Append(nil, "querylens test", pkts)
	blocks := readBlocks(t, f)
	if len(blocks) != 2+len(pkts) {
		t.Fatalf("got %d blocks, want %d", len(blocks), 2+len(pkts))
	}
	shb := blocks[0]
	if shb.typ != blockSHB || binary.LittleEndian.Uint32(shb.body) != byteOrderMagic ||
		binary.LittleEndian.Uint16(shb.body[4:]) != 1 || binary.LittleEndian.Uint16(shb.body[6:]) != 0 {
		t.Fatalf("bad section header % x", shb.body[:8])
	}
	if got := string(options(t, shb.body[16:])[optUserAppl]); got != "querylens test" {
		t.Errorf("shb_userappl = %q", got)
	}
	idb := blocks[1]
	if idb.typ != blockIDB || binary.LittleEndian.Uint16(idb.body) != LinkTypeRaw {
		t.Fatalf("bad interface block % x", idb.body)
	}
	if got := options(t, idb.body[8:])[optIfTsresol]; !bytes.Equal(got, []byte{6}) {
		t.Errorf("if_tsresol = %v, want [6]", got)
	}
	for i, p := range pkts {
		epb := blocks[2+i]
		if epb.typ != blockEPB {
			t.Fatalf("packet %d: block type %#x", i, epb.typ)
		}
		b := epb.body
		ts := uint64(binary.LittleEndian.Uint32(b[4:]))<<32 | uint64(binary.LittleEndian.Uint32(b[8:]))
		if want := uint64(p.Micros); ts != want {
			t.Errorf("packet %d: timestamp %d, want %d", i, ts, want)
		}
		capLen, origLen := int(binary.LittleEndian.Uint32(b[12:])), int(binary.LittleEndian.Uint32(b[16:]))
		if capLen != origLen {
			t.Errorf("packet %d: captured %d != original %d", i, capLen, origLen)
		}
		pkt := b[20 : 20+capLen]
		checkIPUDP(t, i, pkt, p)
		opts := options(t, b[20+(capLen+3)/4*4:])
		if got := string(opts[optComment]); got != p.Comment {
			t.Errorf("packet %d: comment %q, want %q", i, got, p.Comment)
		}
	}
}

// checkIPUDP verifies the synthesized headers as a network stack would:
// lengths, addresses, ports and both checksums.
func checkIPUDP(t *testing.T, i int, pkt []byte, p Packet) {
	t.Helper()
	var src, dst netip.Addr
	var udp []byte
	switch pkt[0] >> 4 {
	case 4:
		if fold(sum(0, pkt[:20])) != 0xffff {
			t.Errorf("packet %d: IPv4 header checksum does not verify", i)
		}
		if int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) || pkt[9] != 17 {
			t.Errorf("packet %d: IPv4 total length or protocol wrong", i)
		}
		src, dst = netip.AddrFrom4([4]byte(pkt[12:16])), netip.AddrFrom4([4]byte(pkt[16:20]))
		udp = pkt[20:]
	case 6:
		if int(binary.BigEndian.Uint16(pkt[4:]))+40 != len(pkt) || pkt[6] != 17 {
			t.Errorf("packet %d: IPv6 payload length or next header wrong", i)
		}
		src, dst = netip.AddrFrom16([16]byte(pkt[8:24])), netip.AddrFrom16([16]byte(pkt[24:40]))
		udp = pkt[40:]
	default:
		t.Fatalf("packet %d: IP version %d", i, pkt[0]>>4)
	}
	sp, dp := binary.BigEndian.Uint16(udp), binary.BigEndian.Uint16(udp[2:])
	remote, rport := dst, dp
	if p.Direction == Received {
		remote, rport = src, sp
	}
	want := netip.AddrFrom16(p.Target.IP)
	if p.Target.V4 {
		want = netip.AddrFrom4([4]byte(p.Target.IP[:4]))
	}
	if remote != want || rport != p.Target.Port {
		t.Errorf("packet %d: remote end %v:%d, want %v:%d", i, remote, rport, want, p.Target.Port)
	}
	if int(binary.BigEndian.Uint16(udp[4:])) != len(udp) {
		t.Errorf("packet %d: UDP length %d, have %d", i, binary.BigEndian.Uint16(udp[4:]), len(udp))
	}
	s := sum(sum(sum(0, src.AsSlice()), dst.AsSlice()), udp) + 17 + uint32(len(udp))
	if fold(s) != 0xffff {
		t.Errorf("packet %d: UDP checksum does not verify", i)
	}
	if !bytes.Equal(udp[8:], p.Data) {
		t.Errorf("packet %d: payload % x, want % x", i, udp[8:], p.Data)
	}
}

// TestParseEndpoint compares ParseEndpoint with net/netip on good and bad
// input.
func TestParseEndpoint(t *testing.T) {
	for _, in := range []string{
		"127.0.0.1:10666", "0.0.0.0:0", "255.255.255.255:65535", "[::1]:5", "[::]:1", "[1::]:1",
		"[2001:db8::8:800:200c:417a]:27900", "[::ffff:10.1.2.3]:7", "[1:2:3:4:5:6:7:8]:9",
		"[1:2:3:4:5:6:1.2.3.4]:9", "[fe80::1:2]:10", "[A:B:c:d::]:1",
		"master.example:15300", "nonsense", "1.2.3:4", "1.2.3.4.5:6", "01.2.3.4:5", "256.1.1.1:1",
		"1.2.3.4:70000", "[1:2:3:4:5:6:7:8:9]:1", "[1::2::3]:1", "[:1]:1", "[1:]:1",
		"[12345::]:1", "[1:2:3:4:5:6:7::8]:1", "[::1.2.3.4.5]:1", "[]:1", "1.2.3.4:", "[g::]:1",
	} {
		got, ok := ParseEndpoint(in)
		ap, err := netip.ParseAddrPort(in)
		if ok != (err == nil) {
			t.Errorf("ParseEndpoint(%q) ok=%v, netip err=%v", in, ok, err)
			continue
		}
		if !ok {
			if got.IP != [16]byte{} || !got.V4 {
				t.Errorf("ParseEndpoint(%q) = %+v, want 0.0.0.0", in, got)
			}
			continue
		}
		a := ap.Addr().Unmap()
		if got.Port != ap.Port() || got.V4 != a.Is4() || netip.AddrFrom16(got.IP).Unmap() != a && !got.V4 {
			t.Errorf("ParseEndpoint(%q) = %+v, want %v", in, got, ap)
		}
		if got.V4 && [4]byte(got.IP[:4]) != a.As4() {
			t.Errorf("ParseEndpoint(%q) = %v, want %v", in, got.IP[:4], a)
		}
		if !got.V4 && got.IP != a.As16() {
			t.Errorf("ParseEndpoint(%q) = %v, want %v", in, got.IP, a)
		}
	}
	if e, ok := ParseEndpoint("master.example:15300"); ok || e.Port != 15300 {
		t.Errorf("host name: got %+v, %v; want port 15300 and false", e, ok)
	}
}
