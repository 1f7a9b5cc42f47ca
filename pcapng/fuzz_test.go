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
// the same datagrams and error both ways, keeps no more than a block's
// bytes and its reassembly bounds, and that its counts add up.
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
					out = append(out, result{dg.Frame, dg.Src, dg.Dst, string(dg.Payload)})
					if len(d.frags.list) > maxPending || d.frags.bytes > maxFragBytes {
						t.Fatalf("reassembly holds %d datagrams, %d bytes", len(d.frags.list), d.frags.bytes)
					}
				}
				if i >= len(file) {
					end := ""
					if err := d.End(); err != nil {
						end = err.Error()
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
		if sa.Frames != sa.UDP-sa.Reassembled+sa.Fragments+sa.Skipped || sa.Truncated > sa.Skipped {
			t.Fatalf("counts do not add up: %+v", sa)
		}
	})
}

// fragmentsOf is fragments, each wrapped in the link layer.
func fragmentsOf(link uint32, ip []byte, id uint32, cuts ...int) [][]byte {
	var out [][]byte
	for _, p := range fragments(ip, id, cuts...) {
		out = append(out, frameOf(link, p))
	}
	return out
}
