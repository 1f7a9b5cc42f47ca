package pcapng

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestHostile: every malformed file gives a *FormatError naming the block
// and its offset, never a panic, and the error sticks.
func TestHostile(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	src, dst := mustEndpoint(t, "10.1.1.1:1234"), mustEndpoint(t, "10.1.1.2:27015")
	ip := ipudp(src, dst, []byte("hello"))
	shb, idb := ngSHB(le), ngIDB(le, LinkTypeRaw, 65535, -1)
	head := len(shb) + len(idb)
	epb := ngEPB(le, 0, 0, ip, len(ip))
	set32 := func(b []byte, at int, v uint32) []byte {
		b = bytes.Clone(b)
		le.PutUint32(b[at:], v)
		return b
	}
	// An EPB whose captured length runs past its block.
	longCap := set32(epb, 20, 400)
	// A block whose trailing length differs from the leading one.
	badTail := set32(epb, len(epb)-4, uint32(len(epb)+4))
	pcapHead := pcapFile(le, false, 1, 65535)
	for _, tc := range []struct {
		name   string
		file   []byte
		block  string
		offset int64
		msg    string // a part of the message
	}{
		{"not a capture", []byte("GET / HTTP/1.1\r\n"), "file", 0, "not a pcap or pcapng file"},
		{"empty", nil, "file", 0, "empty"},
		{"short header", []byte{0xd4, 0xc3, 0xb2}, "file", 0, "truncated header"},
		{"pcap short header", pcapHead[:20], "file", 0, "truncated header"},
		{"pcap version", set32(pcapHead, 4, 7), "pcap header", 0, "unsupported version 7"},
		{"pcap huge record", append(bytes.Clone(pcapHead), set32(make([]byte, 16), 8, 1<<30)...), "pcap record", 24, "over the"},
		{"pcap truncated record", append(bytes.Clone(pcapHead), set32(make([]byte, 20), 8, 10)...), "pcap record", 24, "ends after 20 of its 26 bytes"},
		{"shb byte order", set32(shb, 8, 0x12345678), "SHB", 0, "bad byte-order magic"},
		{"shb version", cat(set32(shb, 12, 2)), "SHB", 0, "unsupported version 2"},
		{"shb short", cat(set32(set32(shb, 4, 24), 20, 24)[:24]), "SHB", 0, "under the 28 bytes"},
		{"length not multiple of 4", cat(shb, idb, set32(epb, 4, 61)), "EPB", int64(head), "not a multiple of 4"},
		{"length under the header", cat(shb, idb, set32(epb, 4, 8)), "EPB", int64(head), "under the 32 bytes"},
		{"length huge", cat(shb, idb, set32(epb, 4, 1<<31)), "EPB", int64(head), "over the"},
		{"trailing length", cat(shb, idb, badTail), "EPB", int64(head), "trailing length"},
		{"captured length", cat(shb, idb, longCap), "EPB", int64(head), "captured length 400 overruns"},
		{"unknown interface", cat(shb, idb, set32(epb, 8, 3)), "EPB", int64(head), "interface 3 was not described"},
		{"epb before idb", cat(shb, epb), "EPB", int64(len(shb)), "interface 0 was not described"},
		{"spb before idb", cat(shb, ngSPB(le, ip, len(ip))), "SPB", int64(len(shb)), "no interface"},
		{"idb before shb", cat(idb), "file", 0, "not a pcap or pcapng file"},
		{"idb option overrun", cat(shb, set32(ngIDB(le, LinkTypeRaw, 65535, 6), 16, 0x00ff0009)), "IDB", int64(len(shb)), "option 9 overruns"},
		{"truncated block", cat(shb, idb, epb[:30]), "EPB", int64(head), "ends after 30 of its"},
		{"truncated block header", cat(shb, idb, epb[:6]), "EPB", int64(head), "ends after 6 of its 12"},
		{"unknown block truncated", cat(shb, idb, ngBlock(le, 0x77, make([]byte, 8))[:16]), "block 0x00000077", int64(head), "ends after 16 of its 20"},
		{"second section bad", cat(shb, idb, epb, set32(ngSHB(be), 12, 0)), "SHB", int64(head + len(epb)), "unsupported version 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{1, 0} {
				_, _, err := decodeAll(tc.file, chunk)
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("chunk %d: error %v, want a *FormatError", chunk, err)
				}
				if fe.Block != tc.block || fe.Offset != tc.offset || !strings.Contains(fe.Msg, tc.msg) {
					t.Errorf("chunk %d: %v; want block %s at offset %d: …%s…", chunk, err, tc.block, tc.offset, tc.msg)
				}
				if want := "pcapng: " + tc.block + " at offset "; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("Error() = %q, want prefix %q", err, want)
				}
			}
		})
	}
}

// TestTruncatedPrefixes: every prefix of a good file either decodes a
// prefix of its datagrams and ends with End's *FormatError, or (at a block
// boundary) ends cleanly.
func TestTruncatedPrefixes(t *testing.T) {
	src, dst := mustEndpoint(t, "10.1.1.1:1234"), mustEndpoint(t, "10.1.1.2:27015")
	le := binary.LittleEndian
	ip := ipudp(src, dst, []byte("hello"))
	f := cat(ngSHB(le), ngIDB(le, linkEthernet, 65535, 6), ngEPB(le, 0, 5, frameOf(linkEthernet, ip), 14+len(ip)), ngEPB(le, 0, 6, frameOf(linkEthernet, ip), 14+len(ip)))
	boundaries := map[int]bool{}
	for at := 0; at < len(f); {
		boundaries[at] = true
		at += int(le.Uint32(f[at+4:]))
	}
	boundaries[len(f)] = true
	for i := 0; i <= len(f); i++ {
		got, _, err := decodeAll(f[:i], 0)
		var fe *FormatError
		switch {
		case boundaries[i] && i > 0:
			if err != nil {
				t.Errorf("prefix %d (a block boundary): %v", i, err)
			}
		case !errors.As(err, &fe):
			t.Errorf("prefix %d: %v, want a *FormatError", i, err)
		case fe.Offset > int64(i):
			t.Errorf("prefix %d: error offset %d past the end", i, fe.Offset)
		}
		if len(got) > 2 {
			t.Errorf("prefix %d: %d datagrams", i, len(got))
		}
	}
}
