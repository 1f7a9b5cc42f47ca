package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/pcapng"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// a2sQuery and a2sInfo are codecs/a2s/testdata's info_request and
// info_source_plain.
var (
	a2sQuery = mustHex("ffffffff54536f7572636520456e67696e6520517565727900")
	a2sInfo  = mustHex("ffffffff4911c39c6ec3af636f64652053657276657220c2b72032666f7274006374665f32666f7274007466005465616d20466f72747265737300b801141802646c01013935343333363500")
)

// row is one decoded row of the layout in the package comment.
type row struct {
	micros, off                    float64
	frame, src, dst, length, group uint32
	query                          int32
	proto, kind, flags             uint8
	conv                           uint32
}

func parseRows(b []byte) []row {
	le := binary.LittleEndian
	var out []row
	for ; len(b) >= RowSize; b = b[RowSize:] {
		out = append(out, row{
			micros: math.Float64frombits(le.Uint64(b)), off: math.Float64frombits(le.Uint64(b[8:])),
			frame: le.Uint32(b[16:]), src: le.Uint32(b[20:]), dst: le.Uint32(b[24:]), length: le.Uint32(b[28:]),
			query: int32(le.Uint32(b[32:])), group: le.Uint32(b[36:]), proto: b[40], kind: b[41], flags: b[42], conv: le.Uint32(b[44:]),
		})
	}
	return out
}

// run feeds file to a session in chunks of size and returns its rows,
// endpoints and kinds, and End's error.
func run(t testing.TB, file []byte, size, max int) (*Session, []row, []string, []string, error) {
	s := New()
	var out []byte
	var eps, kinds []string
	for at := 0; at < len(file) || at == 0; at += size {
		end := min(at+size, len(file))
		s.Feed(bytes.Clone(file[at:end]))
		for {
			var err error
			out, err = s.Next(out, max)
			eps = append(eps, s.Endpoints()...)
			kinds = append(kinds, s.Kinds()...)
			if errors.Is(err, ErrMore) {
				break
			}
			if err != nil {
				return s, parseRows(out), eps, kinds, err
			}
		}
		if end == len(file) {
			break
		}
	}
	err := s.End()
	// The rows of the TCP turns still open come after End.
	out, _ = s.Next(out, 1<<30)
	eps = append(eps, s.Endpoints()...)
	kinds = append(kinds, s.Kinds()...)
	return s, parseRows(out), eps, kinds, err
}

func TestSession(t *testing.T) {
	server, _ := pcapng.ParseEndpoint("127.0.0.1:27015")
	other, _ := pcapng.ParseEndpoint("[::1]:27016")
	file := pcapng.Append(nil, "test", []pcapng.Packet{
		{Micros: 1_000_000, Direction: pcapng.Sent, Target: server, Data: a2sQuery},
		{Micros: 1_000_500, Direction: pcapng.Received, Target: server, Data: a2sInfo},
		{Micros: 1_000_600, Direction: pcapng.Received, Target: server, Data: a2sInfo}, // a second datagram of the answer
		{Micros: 2_000_000, Direction: pcapng.Sent, Target: other, Data: a2sQuery},
		{Micros: 2_000_100, Direction: pcapng.Sent, Target: other, Data: []byte("??")}, // no codec's
	})
	a2s := uint8(255)
	for i, c := range codecs.Protocols() {
		if c.Name() == "a2s" {
			a2s = uint8(i)
		}
	}
	for _, tc := range []struct {
		name      string
		size, max int
	}{{"whole", len(file), 1000}, {"one byte", 1, 1000}, {"7 bytes, one row a call", 7, 1}, {"100 bytes", 100, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			_, rows, eps, kinds, err := run(t, file, tc.size, tc.max)
			if err != nil {
				t.Fatalf("end: %v", err)
			}
			if len(rows) != 5 {
				t.Fatalf("%d rows, want 5", len(rows))
			}
			data := [][]byte{a2sQuery, a2sInfo, a2sInfo, a2sQuery, []byte("??")}
			for i, r := range rows {
				if r.frame != uint32(i+1) {
					t.Errorf("row %d: frame %d", i, r.frame)
				}
				if r.flags != 0 || r.off < 0 || !bytes.Equal(file[int(r.off):int(r.off)+int(r.length)], data[i]) {
					t.Errorf("row %d: payload at %v (%d bytes, flags %d) is not the datagram", i, r.off, r.length, r.flags)
				}
			}
			if rows[0].micros != 1_000_000 || rows[4].micros != 2_000_100 {
				t.Errorf("times %v, %v", rows[0].micros, rows[4].micros)
			}
			for i, want := range []uint8{a2s, a2s, a2s, a2s, Unknown} {
				if rows[i].proto != want {
					t.Errorf("row %d: protocol %d, want %d", i, rows[i].proto, want)
				}
			}
			kind := func(r row) string {
				if int(r.kind) < len(kinds) {
					return kinds[r.kind]
				}
				return "?"
			}
			if kind(rows[0]) != "query" || kind(rows[1]) != "response" || kind(rows[4]) != "?" {
				t.Errorf("kinds %s %s %s", kind(rows[0]), kind(rows[1]), kind(rows[4]))
			}
			// The answer's two datagrams point at the query and share its group.
			if rows[1].query != 0 || rows[2].query != 0 || rows[0].query != -1 {
				t.Errorf("queries %d %d %d, want -1 0 0", rows[0].query, rows[1].query, rows[2].query)
			}
			if rows[1].group != rows[0].group || rows[2].group != rows[0].group || rows[3].group == rows[0].group {
				t.Errorf("groups %d %d %d %d", rows[0].group, rows[1].group, rows[2].group, rows[3].group)
			}
			if rows[0].conv != rows[2].conv || rows[3].conv == rows[0].conv {
				t.Errorf("conversations %d %d %d", rows[0].conv, rows[2].conv, rows[3].conv)
			}
			if got := eps[rows[0].dst]; got != "127.0.0.1:27015" {
				t.Errorf("endpoint %q", got)
			}
			if got := eps[rows[3].dst]; got != "[::1]:27016" {
				t.Errorf("endpoint %q", got)
			}
		})
	}
}

// TestSessionErrors: a file that is not a capture, or one cut short, gives
// the decoder's error naming the block and offset, never a panic.
func TestSessionErrors(t *testing.T) {
	server, _ := pcapng.ParseEndpoint("127.0.0.1:27015")
	file := pcapng.Append(nil, "test", []pcapng.Packet{{Target: server, Data: a2sQuery}})
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"not a capture", "pcapng: file at offset 0", []byte("hello, this is not a capture file at all")},
		{"cut", "truncated", file[:len(file)-3]},
		{"empty", "empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, _, err := run(t, tc.file, 16, 100)
			var fe *pcapng.FormatError
			if !errors.As(err, &fe) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Errorf("error %v, want a *pcapng.FormatError saying %q", err, tc.want)
			}
		})
	}
}

// FuzzSession checks that every row's payload, read back from the file at
// its offset or from Payload, is the datagram the decoder gave, whatever
// the chunking.
func FuzzSession(f *testing.F) {
	server, _ := pcapng.ParseEndpoint("10.0.0.1:10666")
	f.Add(pcapng.Append(nil, "seed", []pcapng.Packet{{Target: server, Data: a2sQuery}, {Direction: pcapng.Received, Target: server, Data: a2sInfo}}), uint16(5))
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1}, uint16(1))
	f.Add(pcapng.Append(nil, "seed", tcpPackets(f)), uint16(64))
	f.Fuzz(func(t *testing.T, file []byte, size uint16) {
		s, rows, _, _, _ := run(t, file, int(size%4096)+1, 3)
		d := pcapng.NewDecoder()
		d.Feed(file)
		for i, r := range rows {
			dg, err := d.Next()
			if err == pcapng.ErrMore {
				d.End() // the rest are the turns still open at the end
				dg, err = d.Next()
			}
			if err != nil {
				t.Fatalf("row %d: the decoder alone says %v", i, err)
			}
			if dg.TCP != (r.flags&FlagTCP != 0) || dg.Cut != (r.flags&FlagCut != 0) || dg.Gap != (r.flags&FlagGap != 0) {
				t.Fatalf("row %d: flags %#x for %+v", i, r.flags, dg)
			}
			var got []byte
			switch {
			case r.flags&FlagStored != 0:
				got, _ = s.Payload(i)
			case r.flags&FlagLost != 0:
				continue
			default:
				if r.off < 0 || int(r.off)+int(r.length) > len(file) {
					t.Fatalf("row %d: offset %v outside the file", i, r.off)
				}
				got = file[int(r.off) : int(r.off)+int(r.length)]
			}
			if !bytes.Equal(got, dg.Payload) {
				t.Fatalf("row %d: payload %x, want %x", i, got, dg.Payload)
			}
		}
	})
}

// pcapRaw is a little-endian pcap file of LINKTYPE_RAW (101) records.
func pcapRaw(recs ...[]byte) []byte {
	le := binary.LittleEndian
	f := le.AppendUint32(nil, 0xa1b2c3d4)
	f = le.AppendUint16(f, 2)
	f = le.AppendUint16(f, 4)
	f = le.AppendUint32(f, 0)
	f = le.AppendUint32(f, 0)
	f = le.AppendUint32(f, 65535)
	f = le.AppendUint32(f, 101)
	for i, r := range recs {
		f = le.AppendUint32(f, uint32(1000+i))
		f = le.AppendUint32(f, 0)
		f = le.AppendUint32(f, uint32(len(r)))
		f = le.AppendUint32(f, uint32(len(r)))
		f = append(f, r...)
	}
	return f
}

// ipv4Fragments is a UDP datagram from 10.0.0.1:27015 to 10.0.0.2:5000
// cut into IPv4 fragments of the UDP bytes at cut (a multiple of 8).
func ipv4Fragments(payload []byte, cut int) [][]byte {
	be := binary.BigEndian
	udp := be.AppendUint16(nil, 27015)
	udp = be.AppendUint16(udp, 5000)
	udp = be.AppendUint16(udp, uint16(8+len(payload)))
	udp = be.AppendUint16(udp, 0)
	udp = append(udp, payload...)
	var out [][]byte
	for _, part := range []struct {
		from, to int
		more     bool
	}{{0, cut, true}, {cut, len(udp), false}} {
		h := []byte{0x45, 0}
		h = be.AppendUint16(h, uint16(20+part.to-part.from))
		h = be.AppendUint16(h, 0x1234)
		fo := uint16(part.from / 8)
		if part.more {
			fo |= 0x2000
		}
		h = be.AppendUint16(h, fo)
		h = append(h, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2)
		out = append(out, append(h, udp[part.from:part.to]...))
	}
	return out
}

// TestSessionReassembled: a datagram put back together from IP fragments
// is not one run of the file's bytes, so its payload is kept (FlagStored)
// and Payload returns it; its row is the last fragment's frame.
func TestSessionReassembled(t *testing.T) {
	payload := bytes.Repeat(a2sInfo, 40) // 3,040 bytes
	frags := ipv4Fragments(payload, 1480)
	file := pcapRaw(frags[0], frags[1])
	s, rows, eps, _, err := run(t, file, 512, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].frame != 2 || rows[0].flags != FlagStored || rows[0].off != -1 || rows[0].length != uint32(len(payload)) {
		t.Fatalf("rows %+v, want one stored row of frame 2", rows)
	}
	if got, ok := s.Payload(0); !ok || !bytes.Equal(got, payload) {
		t.Errorf("Payload(0) = %d bytes, %v", len(got), ok)
	}
	if eps[rows[0].src] != "10.0.0.1:27015" || eps[rows[0].dst] != "10.0.0.2:5000" {
		t.Errorf("endpoints %q", eps)
	}
	if st := s.Stats(); st.Reassembled != 1 || st.Fragments != 2 {
		t.Errorf("stats %+v", st)
	}
}
