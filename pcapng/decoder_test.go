package pcapng

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
)

// decodeAll feeds f to a Decoder in chunks of the given size (0: all at
// once) and returns the datagrams (payloads copied), the stats and End's
// error or the first error of Next.
func decodeAll(f []byte, chunk int) ([]Datagram, Stats, error) {
	d := NewDecoder()
	var out []Datagram
	if chunk <= 0 {
		chunk = len(f) + 1
	}
	for i := 0; ; i += chunk {
		if i < len(f) {
			d.Feed(f[i:min(i+chunk, len(f))])
		}
		for {
			dg, err := d.Next()
			if err == ErrMore {
				break
			}
			if err != nil {
				return out, d.Stats(), err
			}
			dg.Payload = bytes.Clone(dg.Payload)
			out = append(out, dg)
		}
		if i >= len(f) {
			err := d.End()
			for {
				dg, err := d.Next()
				if err != nil {
					break
				}
				dg.Payload = bytes.Clone(dg.Payload)
				out = append(out, dg)
			}
			return out, d.Stats(), err
		}
	}
}

func mustEndpoint(t testing.TB, s string) Endpoint {
	t.Helper()
	e, ok := ParseEndpoint(s)
	if !ok {
		t.Fatalf("bad endpoint %q", s)
	}
	return e
}

// TestWriterRoundTrip reads back what Append writes, in every chunking
// from one byte at a time to the whole file, and through Reader.
func TestWriterRoundTrip(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
	target := mustEndpoint(t, "127.0.0.1:10666")
	v6 := mustEndpoint(t, "[2001:db8::1]:27900")
	pkts := []Packet{
		{Micros: t0.UnixMicro(), Direction: Sent, Target: target, Data: []byte{0xc7, 0, 0, 0, 1}},
		{Micros: t0.Add(1500 * time.Microsecond).UnixMicro(), Direction: Received, Target: target, Data: []byte("reply!"), Comment: "a comment"},
		{Micros: t0.Add(2 * time.Second).UnixMicro(), Direction: Sent, Target: v6, Data: []byte{0xfe, 0xfd, 0}},
		{Micros: t0.Add(3 * time.Second).UnixMicro(), Direction: Received, Target: v6, Data: nil},
	}
	f := Append(nil, "querylens test", pkts)
	check := func(t *testing.T, got []Datagram, st Stats) {
		t.Helper()
		if len(got) != len(pkts) {
			t.Fatalf("got %d datagrams, want %d", len(got), len(pkts))
		}
		for i, p := range pkts {
			g := got[i]
			local := Endpoint{V4: p.Target.V4, Port: LocalPort}
			src, dst := local, p.Target
			if p.Direction == Received {
				src, dst = dst, src
			}
			if g.Frame != i+1 || g.Micros != p.Micros || g.Src != src || g.Dst != dst || !bytes.Equal(g.Payload, p.Data) || g.Interface != 0 {
				t.Errorf("datagram %d = %+v, want frame %d at %d, %v → %v, % x", i, g, i+1, p.Micros, src, dst, p.Data)
			}
		}
		if want := (Stats{Frames: 4, UDP: 4}); st != want {
			t.Errorf("stats %+v, want %+v", st, want)
		}
	}
	for _, chunk := range []int{1, 2, 3, 5, 7, 13, 64, 0} {
		got, st, err := decodeAll(f, chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		check(t, got, st)
	}
	r := NewReader(bytes.NewReader(f))
	var got []Datagram
	for {
		dg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dg.Payload = bytes.Clone(dg.Payload)
		got = append(got, dg)
	}
	check(t, got, r.Stats())
}

// pcapFile builds a classic pcap file.
func pcapFile(order binary.AppendByteOrder, nanos bool, link uint32, snap uint32, recs ...[]byte) []byte {
	var b []byte
	magic := uint32(pcapMicro)
	if nanos {
		magic = pcapNano
	}
	b = order.AppendUint32(b, magic)
	b = order.AppendUint16(b, 2)
	b = order.AppendUint16(b, 4)
	b = order.AppendUint32(b, 0)
	b = order.AppendUint32(b, 0)
	b = order.AppendUint32(b, snap)
	b = order.AppendUint32(b, link)
	for i, r := range recs {
		b = order.AppendUint32(b, uint32(1700000000+i))
		if nanos {
			b = order.AppendUint32(b, 123456789)
		} else {
			b = order.AppendUint32(b, 123456)
		}
		b = order.AppendUint32(b, uint32(len(r)))
		b = order.AppendUint32(b, uint32(len(r)))
		b = append(b, r...)
	}
	return b
}

// ipudp returns an IPv4 or IPv6 packet with a UDP datagram, from the
// writer's synthesis.
func ipudp(src, dst Endpoint, payload []byte) []byte {
	p := Packet{Target: dst, Data: payload, Direction: Sent}
	b := appendIPUDP(nil, p)
	// appendIPUDP writes the relay's end as the source: put src there.
	if dst.V4 {
		copy(b[12:16], src.IP[:4])
		binary.BigEndian.PutUint16(b[20:], src.Port)
	} else {
		copy(b[8:24], src.IP[:])
		binary.BigEndian.PutUint16(b[40:], src.Port)
	}
	return b
}

func TestPcapByteOrders(t *testing.T) {
	src, dst := mustEndpoint(t, "10.0.0.1:5000"), mustEndpoint(t, "10.0.0.2:27015")
	eth := append([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00}, ipudp(src, dst, []byte("hello"))...)
	for _, tc := range []struct {
		name  string
		order binary.AppendByteOrder
		nanos bool
	}{
		{"little-endian µs", binary.LittleEndian, false},
		{"big-endian µs", binary.BigEndian, false},
		{"little-endian ns", binary.LittleEndian, true},
		{"big-endian ns", binary.BigEndian, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := pcapFile(tc.order, tc.nanos, 1, 65535, eth, eth)
			got, st, err := decodeAll(f, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || st.Frames != 2 {
				t.Fatalf("got %d datagrams, stats %+v", len(got), st)
			}
			g := got[1]
			want := int64(1700000001)*1e6 + 123456
			if g.Frame != 2 || g.Micros != want || g.Src != src || g.Dst != dst || string(g.Payload) != "hello" || g.Offset != 24+16+int64(len(eth)) {
				t.Errorf("got %+v (src %v dst %v), want frame 2 at %d", g, g.Src, g.Dst, want)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	_, _, err := decodeAll(nil, 0)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 0 {
		t.Fatalf("empty file: %v", err)
	}
}

// frameOf wraps an IP packet in the link layer of the given type.
func frameOf(link uint32, ip []byte) []byte {
	v6 := ip[0]>>4 == 6
	et := []byte{0x08, 0x00}
	if v6 {
		et = []byte{0x86, 0xdd}
	}
	var h []byte
	switch link {
	case linkEthernet:
		h = append([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, et...)
	case linkSLL:
		h = append([]byte{0, 0, 3, 4, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0}, et...)
	case linkSLL2:
		h = append(append([]byte(nil), et...), 0, 0, 0, 0, 0, 1, 3, 4, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0)
	case linkNull:
		h = []byte{2, 0, 0, 0}
		if v6 {
			h = []byte{30, 0, 0, 0}
		}
	case linkLoop:
		h = []byte{0, 0, 0, 2}
		if v6 {
			h = []byte{0, 0, 0, 24}
		}
	}
	return append(h, ip...)
}

func TestLinkTypes(t *testing.T) {
	src4, dst4 := mustEndpoint(t, "192.0.2.1:40000"), mustEndpoint(t, "198.51.100.7:27960")
	src6, dst6 := mustEndpoint(t, "[2001:db8::1]:40000"), mustEndpoint(t, "[2001:db8::2]:27960")
	ip4, ip6 := ipudp(src4, dst4, []byte("\xff\xff\xff\xffgetstatus")), ipudp(src6, dst6, []byte("\xff\xff\xff\xffgetinfo"))
	vlan := append(append([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x88, 0xa8, 0, 5, 0x81, 0x00, 0, 7, 0x08, 0x00}, ip4...), 0, 0, 0, 0) // two tags, Ethernet padding
	bigNull := append([]byte{0, 0, 0, 2}, ip4...)                                                                                            // a big-endian writer's AF_INET
	for _, tc := range []struct {
		name    string
		link    uint32
		frames  [][]byte
		wantUDP int
	}{
		{"ethernet", linkEthernet, [][]byte{frameOf(linkEthernet, ip4), frameOf(linkEthernet, ip6)}, 2},
		{"ethernet vlan", linkEthernet, [][]byte{vlan}, 1},
		{"sll", linkSLL, [][]byte{frameOf(linkSLL, ip4), frameOf(linkSLL, ip6)}, 2},
		{"sll2", linkSLL2, [][]byte{frameOf(linkSLL2, ip4), frameOf(linkSLL2, ip6)}, 2},
		{"null", linkNull, [][]byte{frameOf(linkNull, ip4), frameOf(linkNull, ip6), bigNull}, 3},
		{"loop", linkLoop, [][]byte{frameOf(linkLoop, ip4), frameOf(linkLoop, ip6)}, 2},
		{"raw 101", LinkTypeRaw, [][]byte{ip4, ip6}, 2},
		{"raw 12", linkRaw12, [][]byte{ip4, ip6}, 2},
		{"raw 14", linkRaw14, [][]byte{ip4, ip6}, 2},
		{"ipv4 228", linkIPv4, [][]byte{ip4}, 1},
		{"unknown link 147", 147, [][]byte{ip4}, 0},
		{"ethernet arp", linkEthernet, [][]byte{append([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x06}, make([]byte, 28)...)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := decodeAll(pcapFile(binary.LittleEndian, false, tc.link, 65535, tc.frames...), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.wantUDP || st.Frames != len(tc.frames) || st.Skipped != len(tc.frames)-tc.wantUDP {
				t.Fatalf("got %d datagrams, stats %+v; want %d", len(got), st, tc.wantUDP)
			}
			for _, g := range got {
				if g.Src != src4 && g.Src != src6 || g.Dst != dst4 && g.Dst != dst6 || !bytes.HasPrefix(g.Payload, []byte("\xff\xff\xff\xffget")) {
					t.Errorf("got %v → %v % x", g.Src, g.Dst, g.Payload)
				}
			}
			if tc.name == "ethernet vlan" && string(got[0].Payload) != "\xff\xff\xff\xffgetstatus" {
				t.Errorf("padding kept: %q", got[0].Payload)
			}
		})
	}
}

// ngBlock builds a pcapng block in the given byte order.
func ngBlock(order binary.AppendByteOrder, typ uint32, body []byte) []byte {
	b := order.AppendUint32(nil, typ)
	b = order.AppendUint32(b, uint32(12+len(body)))
	b = append(b, body...)
	return order.AppendUint32(b, uint32(12+len(body)))
}

func ngSHB(order binary.AppendByteOrder) []byte {
	body := order.AppendUint32(nil, byteOrderMagic)
	body = order.AppendUint16(body, 1)
	body = order.AppendUint16(body, 0)
	body = order.AppendUint64(body, ^uint64(0))
	return ngBlock(order, blockSHB, body)
}

func ngIDB(order binary.AppendByteOrder, link uint16, snap uint32, tsresol int) []byte {
	body := order.AppendUint16(nil, link)
	body = order.AppendUint16(body, 0)
	body = order.AppendUint32(body, snap)
	if tsresol >= 0 {
		body = order.AppendUint16(body, optIfTsresol)
		body = order.AppendUint16(body, 1)
		body = append(body, byte(tsresol), 0, 0, 0)
		body = order.AppendUint32(body, 0)
	}
	return ngBlock(order, blockIDB, body)
}

func ngEPB(order binary.AppendByteOrder, id uint32, ts uint64, data []byte, origLen int) []byte {
	body := order.AppendUint32(nil, id)
	body = order.AppendUint32(body, uint32(ts>>32))
	body = order.AppendUint32(body, uint32(ts))
	body = order.AppendUint32(body, uint32(len(data)))
	body = order.AppendUint32(body, uint32(origLen))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	return ngBlock(order, blockEPB, body)
}

func ngSPB(order binary.AppendByteOrder, data []byte, origLen int) []byte {
	body := order.AppendUint32(nil, uint32(origLen))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	return ngBlock(order, blockSPB, body)
}

func ngPB(order binary.AppendByteOrder, id uint16, ts uint64, data []byte) []byte {
	body := order.AppendUint16(nil, id)
	body = order.AppendUint16(body, 0) // drops
	body = order.AppendUint32(body, uint32(ts>>32))
	body = order.AppendUint32(body, uint32(ts))
	body = order.AppendUint32(body, uint32(len(data)))
	body = order.AppendUint32(body, uint32(len(data)))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	return ngBlock(order, blockPB, body)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestPcapngBlocks reads files of several sections in both byte orders,
// with every packet block type, unknown blocks and timestamp resolutions.
func TestPcapngBlocks(t *testing.T) {
	src, dst := mustEndpoint(t, "10.1.1.1:1234"), mustEndpoint(t, "10.1.1.2:27015")
	ip := ipudp(src, dst, []byte("\xff\xff\xff\xffTSource Engine Query\x00"))
	eth := frameOf(linkEthernet, ip)
	le, be := binary.LittleEndian, binary.BigEndian
	f := cat(
		ngSHB(le),
		ngIDB(le, LinkTypeRaw, 65535, 9), // nanoseconds
		ngIDB(le, linkEthernet, 65535, -1),
		ngBlock(le, blockNRB, []byte{0, 0, 0, 0}),         // name resolution: skipped
		ngBlock(le, 0x40000bad, []byte("custom\x00\x00")), // custom: skipped
		ngEPB(le, 0, 1_700_000_000_123_456_789, ip, len(ip)),
		ngEPB(le, 1, 1_700_000_001_000_001, eth, len(eth)),
		ngSHB(be),                               // a second section, big-endian, its own interfaces
		ngIDB(be, linkEthernet, 65535, 0x80|20), // 2^-20 s
		ngSPB(be, eth, len(eth)),
		ngPB(be, 0, 3<<20, eth),
		ngBlock(be, blockISB, make([]byte, 12)),
	)
	want := []struct {
		frame, iface int
		micros       int64
		off          int64
	}{
		{1, 0, 1_700_000_000_123_456, -1},
		{2, 1, 1_700_000_001_000_001, -1},
		{3, 0, 0, -1},
		{4, 0, 3_000_000, -1},
	}
	for _, chunk := range []int{1, 3, 0} {
		got, st, err := decodeAll(f, chunk)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || st != (Stats{Frames: 4, UDP: 4}) {
			t.Fatalf("got %d datagrams, %+v", len(got), st)
		}
		for i, w := range want {
			g := got[i]
			if g.Frame != w.frame || g.Interface != w.iface || g.Micros != w.micros || g.Src != src || g.Dst != dst {
				t.Errorf("datagram %d: %+v, want %+v", i, g, w)
			}
			if int(g.Offset) >= len(f) || g.Offset%4 != 0 {
				t.Errorf("datagram %d: offset %d", i, g.Offset)
			}
		}
	}
}

// TestSnapLength: a datagram the snap length cut is skipped and counted;
// one whose cut fell in the link layer's trailer is kept.
func TestSnapLength(t *testing.T) {
	src, dst := mustEndpoint(t, "10.1.1.1:1234"), mustEndpoint(t, "10.1.1.2:27015")
	ip := ipudp(src, dst, []byte("0123456789abcdef"))
	le := binary.LittleEndian
	padded := append(frameOf(linkEthernet, ip), make([]byte, 8)...)
	f := cat(ngSHB(le), ngIDB(le, linkEthernet, 40, -1),
		ngEPB(le, 0, 0, frameOf(linkEthernet, ip)[:40], 14+len(ip)),
		ngEPB(le, 0, 0, padded[:14+len(ip)], len(padded)),
		ngSPB(le, frameOf(linkEthernet, ip), 14+len(ip)), // the SPB is cut to the IDB's snap length
	)
	got, st, err := decodeAll(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Frame != 2 || st != (Stats{Frames: 3, UDP: 1, Skipped: 2, Truncated: 2}) {
		t.Fatalf("got %d datagrams, %+v", len(got), st)
	}
}

// fragments splits an IP packet of ipudp into fragments of the IP payload
// at the given offsets (multiples of 8), IPv4 or IPv6.
func fragments(ip []byte, id uint32, cuts ...int) [][]byte {
	var out [][]byte
	v6 := ip[0]>>4 == 6
	hl := 20
	if v6 {
		hl = 40
	}
	payload := ip[hl:]
	cuts = append(append([]int{0}, cuts...), len(payload))
	for i := 0; i+1 < len(cuts); i++ {
		part := payload[cuts[i]:cuts[i+1]]
		more := i+2 < len(cuts)
		h := bytes.Clone(ip[:hl])
		if v6 {
			fh := []byte{protoUDP, 0, 0, 0, 0, 0, 0, 0}
			binary.BigEndian.PutUint16(fh[2:], uint16(cuts[i]))
			if more {
				fh[3] |= 1
			}
			binary.BigEndian.PutUint32(fh[4:], id)
			h[6] = protoFragment
			binary.BigEndian.PutUint16(h[4:], uint16(8+len(part)))
			out = append(out, cat(h, fh, part))
		} else {
			fo := uint16(cuts[i] / 8)
			if more {
				fo |= 0x2000
			}
			binary.BigEndian.PutUint16(h[2:], uint16(hl+len(part)))
			binary.BigEndian.PutUint16(h[4:], uint16(id))
			binary.BigEndian.PutUint16(h[6:], fo)
			out = append(out, cat(h, part))
		}
	}
	return out
}

func TestReassembly(t *testing.T) {
	src, dst := mustEndpoint(t, "10.1.1.1:27015"), mustEndpoint(t, "10.1.1.2:5000")
	src6, dst6 := mustEndpoint(t, "[fd00::1]:27015"), mustEndpoint(t, "[fd00::2]:5000")
	payload := bytes.Repeat([]byte("0123456789"), 300)
	ip4, ip6 := ipudp(src, dst, payload), ipudp(src6, dst6, payload)
	f4, f6 := fragments(ip4, 7, 1480, 2960), fragments(ip6, 9, 1448)
	other := fragments(ipudp(src, dst, payload), 8, 1480)
	single := ipudp(src, dst, []byte("x"))
	for _, tc := range []struct {
		name   string
		frames [][]byte
		want   []int // frame numbers of the datagrams
		stats  Stats
	}{
		{"ipv4 in order", f4, []int{3}, Stats{Frames: 3, UDP: 1, Fragments: 3, Reassembled: 1}},
		{"ipv4 reversed", [][]byte{f4[2], f4[1], f4[0]}, []int{3}, Stats{Frames: 3, UDP: 1, Fragments: 3, Reassembled: 1}},
		{"ipv4 interleaved", [][]byte{f4[0], other[0], single, f4[2], other[1], f4[1]}, []int{3, 5, 6}, Stats{Frames: 6, UDP: 3, Fragments: 5, Reassembled: 2}},
		{"ipv4 duplicate", [][]byte{f4[0], f4[0], f4[1], f4[2]}, []int{4}, Stats{Frames: 4, UDP: 1, Fragments: 4, Reassembled: 1}},
		{"ipv4 missing part", [][]byte{f4[0], f4[2]}, nil, Stats{Frames: 2, Fragments: 2}},
		{"ipv6", f6, []int{2}, Stats{Frames: 2, UDP: 1, Fragments: 2, Reassembled: 1}},
		{"ipv6 reversed", [][]byte{f6[1], f6[0]}, []int{2}, Stats{Frames: 2, UDP: 1, Fragments: 2, Reassembled: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := decodeAll(pcapFile(binary.LittleEndian, false, LinkTypeRaw, 65535, tc.frames...), 0)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
			var frames []int
			for _, g := range got {
				frames = append(frames, g.Frame)
				if len(g.Payload) > 1 && !bytes.Equal(g.Payload, payload) {
					t.Errorf("frame %d: payload of %d bytes differs", g.Frame, len(g.Payload))
				}
			}
			if !slicesEqual(frames, tc.want) {
				t.Errorf("frames %v, want %v", frames, tc.want)
			}
		})
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReassemblyBounded: a flood of datagrams that never complete keeps at
// most maxPending of them and maxFragBytes bytes.
func TestReassemblyBounded(t *testing.T) {
	src, dst := mustEndpoint(t, "10.1.1.1:27015"), mustEndpoint(t, "10.1.1.2:5000")
	d := NewDecoder()
	d.Feed(pcapFile(binary.LittleEndian, false, LinkTypeRaw, 65535))
	ip := ipudp(src, dst, make([]byte, 60000))
	for id := 0; id < 3*maxPending; id++ {
		first := fragments(ip, uint32(id), 59000)[0]
		var rec []byte
		rec = binary.LittleEndian.AppendUint32(rec, 0)
		rec = binary.LittleEndian.AppendUint32(rec, 0)
		rec = binary.LittleEndian.AppendUint32(rec, uint32(len(first)))
		rec = binary.LittleEndian.AppendUint32(rec, uint32(len(first)))
		d.Feed(append(rec, first...))
		if _, err := d.Next(); err != ErrMore {
			t.Fatal(err)
		}
		if len(d.frags.list) > maxPending || d.frags.bytes > maxFragBytes {
			t.Fatalf("after %d: %d pending, %d bytes", id, len(d.frags.list), d.frags.bytes)
		}
	}
	if len(d.buf) > 1<<16 {
		t.Errorf("decoder keeps %d bytes", len(d.buf))
	}
}

func TestEndpointString(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1:10666", "0.0.0.0:0", "[::1]:5", "[::]:1", "[1::]:1", "[2001:db8::8:800:200c:417a]:27900",
		"[1:2:3:4:5:6:7:8]:9", "[fe80::1:2]:10", "[1:0:0:2::3]:4", "[1::2:0:0:3]:4", "[0:1::]:1",
	} {
		if got := mustEndpoint(t, s).String(); got != s {
			t.Errorf("String() = %q, want %q", got, s)
		}
	}
}

// TestPayloadSurvivesFeed: a datagram's payload stays valid until the next
// call to Next, whatever is fed meanwhile.
func TestPayloadSurvivesFeed(t *testing.T) {
	target := mustEndpoint(t, "127.0.0.1:10666")
	f := Append(nil, "t", []Packet{{Target: target, Data: []byte("first")}, {Target: target, Data: []byte("second")}})
	d := NewDecoder()
	d.Feed(f[:len(f)-20])
	dg, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	d.Feed(f[len(f)-20:])
	d.Feed(bytes.Repeat([]byte{0xee}, 100)) // garbage after the file
	if string(dg.Payload) != "first" {
		t.Errorf("payload %q after Feed", dg.Payload)
	}
	if dg, err = d.Next(); err != nil || string(dg.Payload) != "second" {
		t.Errorf("second datagram %q, %v", dg.Payload, err)
	}
}
