package pcapng

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecoder feeds any bytes in two chunkings (the fuzzer's chunk size and
// the whole file at once) and checks that the decoder never panics, gives
// the same datagrams, TCP turns and error both ways, keeps no more than a
// block's bytes and its reassembly bounds (IP fragments; TCP streams, held
// segments and bytes, open turn bytes, a turn's bytes), and that its
// counts add up.
func FuzzDecoder(f *testing.F) {
	le, be := binary.LittleEndian, binary.BigEndian
	src, dst := Endpoint{V4: true, IP: [16]byte{10, 0, 0, 1}, Port: 27015}, Endpoint{V4: true, IP: [16]byte{10, 0, 0, 2}, Port: 5000}
	src6, dst6 := Endpoint{IP: [16]byte{0xfd, 15: 1}, Port: 27015}, Endpoint{IP: [16]byte{0xfd, 15: 2}, Port: 5000}
	ip4, ip6 := ipudp(src, dst, bytes.Repeat([]byte("q"), 100)), ipudp(src6, dst6, bytes.Repeat([]byte("r"), 100))
	// The writer's own file.
	f.Add(Append(nil, "fuzz", []Packet{{Target: dst, Data: []byte("x")}, {Target: dst6, Direction: Received, Data: []byte("yz")}}), 7)
	// pcap, both byte orders, Ethernet and SLL2, with IPv4 and IPv6 fragments.
	f.Add(pcapFile(le, false, linkEthernet, 65535, append(fragmentsOf(linkEthernet, ip4, 1, 48), fragmentsOf(linkEthernet, ip6, 2, 48)...)...), 5)
	f.Add(pcapFile(be, true, linkSLL2, 65535, frameOf(linkSLL2, ip4), frameOf(linkSLL2, ip6)), 3)
	// pcapng, two sections, every packet block, a short snap length.
	f.Add(cat(ngSHB(le), ngIDB(le, linkNull, 60, 0x83), ngEPB(le, 0, 9, frameOf(linkNull, ip4)[:60], 4+len(ip4)),
		ngSHB(be), ngIDB(be, linkLoop, 0, 9), ngSPB(be, frameOf(linkLoop, ip6), 4+len(ip6)), ngPB(be, 0, 1, frameOf(linkLoop, ip4))), 11)
	// The captures under testdata.
	files, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.pcap"))
	more, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.pcapng"))
	files = append(files, more...)
	// The hand-built TCP captures (tcp_test.go): reordered, duplicated,
	// overlapping and missing segments, RST, interleaved streams, IPv6,
	// evictions, the held-segment bound (not the 540 KB one of a cut turn:
	// it slows the fuzzer down ten times).
	tcpFiles, _ := filepath.Glob(filepath.Join("testdata", "tcp", "*.pcapng"))
	for _, name := range tcpFiles {
		if fi, err := os.Stat(name); err == nil && fi.Size() < 64<<10 {
			files = append(files, name)
		}
	}
	// A short TCP exchange over Ethernet in pcap, segments out of order.
	c, s := Endpoint{V4: true, IP: [16]byte{10, 0, 0, 1}, Port: 40000}, Endpoint{V4: true, IP: [16]byte{10, 0, 0, 2}, Port: 25565}
	f.Add(pcapFile(le, false, linkEthernet, 65535, frameOf(linkEthernet, tcpSeg(c, s, 10, 0, tcpSYN, "")),
		frameOf(linkEthernet, tcpSeg(c, s, 14, 1, tcpACK, "def")), frameOf(linkEthernet, tcpSeg(c, s, 11, 1, tcpACK, "abc")),
		frameOf(linkEthernet, tcpSeg(s, c, 1, 17, tcpACK|tcpFIN, "reply"))), 9)
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, 64)
		}
	}
	f.Fuzz(func(t *testing.T, file []byte, chunk int) {
		chunk = 1 + int(uint(chunk)%97)
		type result struct {
			frame int
			src   Endpoint
			dst   Endpoint
			sum   string
			tcp   bool
			turn  [2]int
			flags [2]bool
		}
		run := func(chunk int) ([]result, Stats, string) {
			d := NewDecoder()
			var out []result
			for i := 0; ; i += chunk {
				if i < len(file) {
					d.Feed(file[i:min(i+chunk, len(file))])
				}
				for {
					dg, err := d.Next()
					if err == ErrMore {
						if n := len(d.buf); n > maxBlock+chunk {
							t.Fatalf("the decoder keeps %d bytes", n)
						}
						break
					}
					if err != nil {
						return out, d.Stats(), err.Error()
					}
					out = append(out, result{dg.Frame, dg.Src, dg.Dst, string(dg.Payload), dg.TCP, [2]int{dg.Stream, dg.Turn}, [2]bool{dg.Cut, dg.Gap}})
					if len(d.frags.list) > maxPending || d.frags.bytes > maxFragBytes {
						t.Fatalf("reassembly holds %d datagrams, %d bytes", len(d.frags.list), d.frags.bytes)
					}
					checkTCPBounds(t, d, dg)
				}
				if i >= len(file) {
					end := ""
					if err := d.End(); err != nil {
						end = err.Error()
					}
					for {
						dg, err := d.Next()
						if err != nil {
							break
						}
						if !dg.TCP {
							t.Fatalf("a UDP datagram after End")
						}
						out = append(out, result{dg.Frame, dg.Src, dg.Dst, string(dg.Payload), dg.TCP, [2]int{dg.Stream, dg.Turn}, [2]bool{dg.Cut, dg.Gap}})
						checkTCPBounds(t, d, dg)
					}
					for _, s := range d.conns.order {
						if s.open || len(s.side[0].held)+len(s.side[1].held) > 0 {
							t.Fatalf("stream %d still holds bytes after End", s.id)
						}
					}
					return out, d.Stats(), end
				}
			}
		}
		a, sa, ea := run(chunk)
		b, sb, eb := run(len(file) + 1)
		if sa != sb || ea != eb || len(a) != len(b) {
			t.Fatalf("chunk %d: %d datagrams %+v %q; whole: %d datagrams %+v %q", chunk, len(a), sa, ea, len(b), sb, eb)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("datagram %d differs: %+v / %+v", i, a[i], b[i])
			}
		}
		if sa.Frames != sa.UDP-sa.Reassembled+sa.Fragments+sa.Segments+sa.Skipped || sa.Truncated > sa.Skipped ||
			sa.Cut > sa.Turns || sa.Gaps > sa.Turns || sa.Evicted > sa.Streams {
			t.Fatalf("counts do not add up: %+v", sa)
		}
		turns := 0
		for _, r := range a {
			if r.tcp {
				turns++
				if r.turn[0] >= sa.Streams || r.turn[1] < 1 {
					t.Fatalf("turn %v of %d streams", r.turn, sa.Streams)
				}
			}
		}
		if turns != sa.Turns {
			t.Fatalf("%d turns returned, Stats says %d", turns, sa.Turns)
		}
	})
}

// checkTCPBounds fails when the TCP reassembly is past one of its bounds.
func checkTCPBounds(t *testing.T, d *Decoder, dg Datagram) {
	c := &d.conns
	if len(c.streams) > maxStreams || len(c.order) != len(c.streams) || c.heldBytes > maxHeldBytes || c.openBytes > maxOpenBytes ||
		c.heldBytes < 0 || c.openBytes < 0 {
		t.Fatalf("tcp: %d streams (%d in order), %d bytes held, %d in open turns", len(c.streams), len(c.order), c.heldBytes, c.openBytes)
	}
	for _, s := range c.order {
		for _, sd := range s.side {
			if len(sd.held) > maxHeldSegments {
				t.Fatalf("tcp: %d segments held", len(sd.held))
			}
		}
	}
	if dg.TCP && len(dg.Payload) > maxTurn || !dg.TCP && (dg.Cut || dg.Gap || dg.Turn != 0) {
		t.Fatalf("datagram %+v", dg)
	}
}

// fragmentsOf is fragments, each wrapped in the link layer.
func fragmentsOf(link uint32, ip []byte, id uint32, cuts ...int) [][]byte {
	var out [][]byte
	for _, p := range fragments(ip, id, cuts...) {
		out = append(out, frameOf(link, p))
	}
	return out
}
