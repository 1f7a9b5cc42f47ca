package pcapng

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tcpSeg is an IP packet holding one TCP segment (checksums right).
func tcpSeg(src, dst Endpoint, seq, ack uint32, flags byte, data string) []byte {
	c := &tcpConn{ends: [2]Endpoint{src, dst}, next: [2]uint32{seq, ack}}
	return c.segment(nil, 0, flags, []byte(data))
}

// rawFile is a pcapng file (LINKTYPE_RAW) of IP packets, one a millisecond.
func rawFile(pkts ...[]byte) []byte {
	le := binary.LittleEndian
	f := cat(ngSHB(le), ngIDB(le, LinkTypeRaw, 65535, 6))
	for i, p := range pkts {
		f = append(f, ngEPB(le, 0, uint64(1_700_000_000_000_000+i*1000), p, len(p))...)
	}
	return f
}

// turnLine is a turn as the goldens and the tshark test list it.
func turnLine(dg Datagram) string {
	s := "stream " + strconv.Itoa(dg.Stream) + " turn " + strconv.Itoa(dg.Turn) + " frame " + strconv.Itoa(dg.Frame) + " " +
		dg.Src.String() + " > " + dg.Dst.String() + " " + strconv.Itoa(len(dg.Payload))
	if dg.Cut {
		s += " cut"
	}
	if dg.Gap {
		s += " gap"
	}
	head := dg.Payload[:min(len(dg.Payload), 24)]
	return s + " " + hex.EncodeToString(head)
}

// tcpCase is a hand-built capture of TCP.
type tcpCase struct {
	name string
	file []byte
	// tshark says whether tshark's "Follow TCP Stream" must agree with
	// the turns (well-formed captures, and the overlap whose winner we
	// take from it).
	tshark bool
}

// tcpCases are the captures under testdata/tcp, built here.
func tcpCases(t testing.TB) []tcpCase {
	c4, s4 := mustEndpoint(t, "10.0.0.1:40000"), mustEndpoint(t, "10.0.0.2:25565")
	c6, s6 := mustEndpoint(t, "[2001:db8::1]:40001"), mustEndpoint(t, "[2001:db8::2]:28900")
	const ci, si = 1000, 50000
	hs := func(c, s Endpoint) [][]byte {
		return [][]byte{tcpSeg(c, s, ci, 0, tcpSYN, ""), tcpSeg(s, c, si, ci+1, tcpSYN|tcpACK, ""), tcpSeg(c, s, ci+1, si+1, tcpACK, "")}
	}
	// closeAt is the FIN exchange after cn client and sn server bytes.
	closeAt := func(c, s Endpoint, cn, sn uint32) [][]byte {
		return [][]byte{tcpSeg(c, s, ci+1+cn, si+1+sn, tcpFIN|tcpACK, ""), tcpSeg(s, c, si+1+sn, ci+2+cn, tcpFIN|tcpACK, ""),
			tcpSeg(c, s, ci+2+cn, si+2+sn, tcpACK, "")}
	}
	all := func(parts ...[][]byte) []byte {
		var p [][]byte
		for _, x := range parts {
			p = append(p, x...)
		}
		return rawFile(p...)
	}
	d := func(c, s Endpoint, cn, sn uint32, data string) []byte { // client data at offset cn
		return tcpSeg(c, s, ci+1+cn, si+1+sn, tcpACK|tcpPSH, data)
	}
	r := func(c, s Endpoint, sn, cn uint32, data string) []byte { // server data at offset sn
		return tcpSeg(s, c, si+1+sn, ci+1+cn, tcpACK|tcpPSH, data)
	}
	var evict [][]byte
	for i := 0; i < maxStreams+8; i++ {
		c := c4
		c.Port = uint16(20000 + i)
		evict = append(evict, tcpSeg(c, s4, ci+1, si+1, tcpACK, "q"+strconv.Itoa(i)))
	}
	evict = append(evict, tcpSeg(s4, mustEndpoint(t, "10.0.0.1:20000"), si+1, ci+3, tcpACK, "late reply"))
	var manyHeld [][]byte
	manyHeld = append(manyHeld, hs(c4, s4)...)
	for i := maxHeldSegments + 4; i >= 1; i-- { // all ahead of byte 0, which never comes
		manyHeld = append(manyHeld, d(c4, s4, uint32(i*2), 0, "x"+string(rune('a'+i%26))))
	}
	big := strings.Repeat("0123456789abcdef", (maxTurn+3000)/16)
	var bigSegs [][]byte
	for off := 0; off < len(big); off += 1400 {
		bigSegs = append(bigSegs, r(c4, s4, uint32(off), 5, big[off:min(off+1400, len(big))]))
	}
	return []tcpCase{
		{"writer", Append(nil, "test", writerPackets(t)), true},
		{"reordered", all(hs(c4, s4), [][]byte{d(c4, s4, 5, 0, "world"), d(c4, s4, 0, 0, "hello"),
			r(c4, s4, 6, 10, "second"), r(c4, s4, 0, 10, "first-")}, closeAt(c4, s4, 10, 12)), true},
		{"duplicated", all(hs(c4, s4), [][]byte{d(c4, s4, 0, 0, "hello"), d(c4, s4, 0, 0, "hello"), d(c4, s4, 5, 0, "world"),
			r(c4, s4, 0, 10, "reply"), d(c4, s4, 5, 0, "world"), r(c4, s4, 0, 10, "reply")}, closeAt(c4, s4, 10, 5)), true},
		// Overlaps with other bytes: the bytes taken first win.
		{"overlapping", all(hs(c4, s4), [][]byte{d(c4, s4, 0, 0, "abcdef"), d(c4, s4, 3, 0, "XYZghi"), d(c4, s4, 12, 0, "mno"),
			d(c4, s4, 9, 0, "JKLMN"), r(c4, s4, 0, 15, "ok")}, closeAt(c4, s4, 15, 2)), true},
		{"missing", all(hs(c4, s4), [][]byte{d(c4, s4, 0, 0, "hello"), d(c4, s4, 10, 0, "again"), r(c4, s4, 0, 15, "reply"),
			r(c4, s4, 9, 15, "tail")}, closeAt(c4, s4, 15, 13)), false},
		{"rst", all(hs(c4, s4), [][]byte{d(c4, s4, 0, 0, "query"), r(c4, s4, 0, 5, "partial reply"),
			tcpSeg(s4, c4, si+1+13, ci+6, tcpRST|tcpACK, ""), r(c4, s4, 13, 5, "after the reset")}), false},
		{"interleaved", all(hs(c4, s4), hs(c6, s6), [][]byte{d(c4, s4, 0, 0, "v4 query"), d(c6, s6, 0, 0, "v6 query"),
			r(c6, s6, 0, 8, "v6 reply"), r(c4, s4, 0, 8, "v4 reply"), d(c4, s4, 8, 8, "v4 again")}, closeAt(c6, s6, 8, 8), closeAt(c4, s4, 16, 8)), true},
		{"ipv6-reordered", all(hs(c6, s6), [][]byte{d(c6, s6, 0, 0, `\gamename\x\final\`), r(c6, s6, 7, 18, `\list\`),
			r(c6, s6, 0, 18, `\basic\`)}, closeAt(c6, s6, 18, 13)), true},
		// The capture starts after the handshake.
		{"no-syn", all([][]byte{d(c4, s4, 100, 200, "mid"), r(c4, s4, 200, 103, "stream")}, closeAt(c4, s4, 103, 206)), true},
		// The port is used again after a close: a new stream.
		{"port-reuse", all(hs(c4, s4), [][]byte{d(c4, s4, 0, 0, "one")}, closeAt(c4, s4, 3, 0),
			[][]byte{tcpSeg(c4, s4, 9000, 0, tcpSYN, ""), tcpSeg(s4, c4, 7000, 9001, tcpSYN|tcpACK, ""),
				tcpSeg(c4, s4, 9001, 7001, tcpACK|tcpPSH, "two"), tcpSeg(s4, c4, 7001, 9004, tcpACK|tcpPSH, "2")}), true},
		{"cut", all(hs(c4, s4), [][]byte{d(c4, s4, 0, 0, "query")}, bigSegs, [][]byte{d(c4, s4, 5, uint32(len(big)), "next")}), false},
		{"evict", rawFile(evict...), false},
		{"held-bound", all(manyHeld), false},
	}
}

// writerPackets are two interleaved connections, IPv4 and IPv6, with
// turns longer than a segment and consecutive packets of one side.
func writerPackets(t testing.TB) []Packet {
	v4, v6 := mustEndpoint(t, "192.0.2.10:25565"), mustEndpoint(t, "[2001:db8::5]:28900")
	long := bytes.Repeat([]byte("0123456789"), 500)
	t0 := int64(1_740_000_000_000_000)
	return []Packet{
		{Micros: t0, TCP: true, Stream: 7, Target: v4, Data: []byte("\x10\x00\xfd\x05\x09localhost\x63\xdd\x01")},
		{Micros: t0 + 10, TCP: true, Stream: 7, Target: v4, Data: []byte("\x01\x00"), Comment: "status request"},
		{Micros: t0 + 20, TCP: true, Stream: 3, Target: v6, Direction: Received, Data: []byte(`\basic\\secure\ABCDEF`)},
		{Micros: t0 + 30, TCP: true, Stream: 7, Target: v4, Direction: Received, Data: long},
		{Micros: t0 + 40, Target: v4, Data: []byte("a UDP datagram between")},
		{Micros: t0 + 50, TCP: true, Stream: 3, Target: v6, Data: []byte(`\gamename\x\validate\y\final\`)},
		{Micros: t0 + 60, TCP: true, Stream: 3, Target: v6, Data: []byte(`\list\\gamename\x\final\`)},
		{Micros: t0 + 70, TCP: true, Stream: 3, Target: v6, Direction: Received, Data: long[:3000]},
		{Micros: t0 + 80, TCP: true, Stream: 7, Target: v4, Data: []byte("\x09\x01\x00\x00\x00\x00\x00\x00\x00\x2a")},
		{Micros: t0 + 90, TCP: true, Stream: 7, Target: v4, Direction: Received, Data: []byte("\x09\x01\x00\x00\x00\x00\x00\x00\x00\x2a")},
		{Micros: t0 + 100, TCP: true, Stream: 3, Target: v6, Direction: Received, Data: []byte(`\final\`)},
	}
}

// TestTCPGoldens: the turns of each hand-built capture, listed against
// testdata/tcp/NAME.golden; the captures themselves are kept as
// testdata/tcp/NAME.pcapng (fuzz seeds, and files to open in Wireshark).
// Both are rewritten by -update.
func TestTCPGoldens(t *testing.T) {
	for _, tc := range tcpCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			capFile := filepath.Join("testdata", "tcp", tc.name+".pcapng")
			golden := filepath.Join("testdata", "tcp", tc.name+".golden")
			var b strings.Builder
			b.WriteString("# the TCP turns of tcp/" + tc.name + ".pcapng, built by tcp_test.go (stream, turn, first frame, source > destination, bytes, flags, first 24 in hex)\n")
			for _, chunk := range []int{0, 1, 100} {
				got, st, err := decodeAll(tc.file, chunk)
				if err != nil {
					t.Fatal(err)
				}
				var s strings.Builder
				for _, dg := range got {
					if dg.TCP {
						s.WriteString(turnLine(dg) + "\n")
					}
				}
				s.WriteString("# " + statsLine(st) + "\n")
				if chunk == 0 {
					b.WriteString(s.String())
				} else if !strings.HasSuffix(b.String(), s.String()) {
					t.Fatalf("chunk %d gives other turns:\n%s", chunk, s.String())
				}
				if st.Frames != st.UDP-st.Reassembled+st.Fragments+st.Segments+st.Skipped {
					t.Errorf("counts do not add up: %+v", st)
				}
			}
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(capFile, tc.file, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if f, err := os.ReadFile(capFile); err != nil || !bytes.Equal(f, tc.file) {
				t.Errorf("%s is not what the test builds (run go test ./pcapng -update): %v", capFile, err)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pcapng -update)", err)
			}
			if string(want) != b.String() {
				t.Errorf("%s differs (run go test ./pcapng -update if the change is intended); got:\n%s", golden, b.String())
			}
		})
	}
}

func statsLine(st Stats) string {
	return "frames " + itoa(st.Frames) + ", udp " + itoa(st.UDP) + ", skipped " + itoa(st.Skipped) + ", segments " + itoa(st.Segments) +
		", streams " + itoa(st.Streams) + ", evicted " + itoa(st.Evicted) + ", turns " + itoa(st.Turns) + ", cut " + itoa(st.Cut) + ", gaps " + itoa(st.Gaps)
}

// TestTCPWriterRoundTrip: the reader's turns of the writer's file are the
// packets' bytes, consecutive packets of one side joined, per connection.
func TestTCPWriterRoundTrip(t *testing.T) {
	pkts := writerPackets(t)
	type key struct{ stream, dir int }
	var want []string
	streamNo := map[int]int{}
	last := map[int]Direction{}
	open := map[int]int{}
	turns := map[int][]*[]byte{}
	var order []*[]byte
	var owner []string
	for _, p := range pkts {
		if !p.TCP {
			continue
		}
		if _, ok := streamNo[p.Stream]; !ok {
			streamNo[p.Stream] = len(streamNo)
			last[p.Stream] = 255
		}
		if last[p.Stream] != p.Direction || open[p.Stream] == 0 {
			b := new([]byte)
			turns[p.Stream] = append(turns[p.Stream], b)
			order = append(order, b)
			owner = append(owner, "stream "+itoa(streamNo[p.Stream])+" turn "+itoa(len(turns[p.Stream]))+" dir "+itoa(int(p.Direction)))
			open[p.Stream] = 1
		}
		last[p.Stream] = p.Direction
		cur := turns[p.Stream][len(turns[p.Stream])-1]
		*cur = append(*cur, p.Data...)
	}
	for i, b := range order {
		want = append(want, owner[i]+" "+hex.EncodeToString(*b))
	}
	got, st, err := decodeAll(Append(nil, "test", pkts), 7)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, dg := range got {
		if !dg.TCP {
			continue
		}
		dir := 0
		if dg.Src.Port != LocalPort+1 && dg.Src.Port != LocalPort+2 {
			dir = 1
		}
		if dg.Cut || dg.Gap {
			t.Errorf("turn %s: cut %v gap %v", turnLine(dg), dg.Cut, dg.Gap)
		}
		lines = append(lines, "stream "+itoa(dg.Stream)+" turn "+itoa(dg.Turn)+" dir "+itoa(dir)+" "+hex.EncodeToString(dg.Payload))
	}
	// Turns come out as they end, not as they begin: compare as sets.
	if len(lines) != len(want) {
		t.Fatalf("got %d turns, want %d:\n%s\nwant:\n%s", len(lines), len(want), strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("missing turn %.120s", w)
		}
	}
	if st.Streams != 2 || st.UDP != 1 || st.Turns != len(want) || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTCPBounds: each bound of the reassembly holds against the capture
// made to reach it.
func TestTCPBounds(t *testing.T) {
	cases := map[string]tcpCase{}
	for _, tc := range tcpCases(t) {
		cases[tc.name] = tc
	}
	t.Run("streams", func(t *testing.T) {
		d := NewDecoder()
		d.Feed(cases["evict"].file)
		n := 0
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			n++
			if len(d.conns.streams) > maxStreams || len(d.conns.order) > maxStreams {
				t.Fatalf("%d streams followed", len(d.conns.streams))
			}
		}
		d.End()
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			n++
		}
		st := d.Stats()
		// One stream per client port, the late reply to an evicted one is a new stream.
		if st.Evicted != 9 || st.Streams != maxStreams+9 || n != maxStreams+9 {
			t.Errorf("%d turns, stats %+v", n, st)
		}
	})
	t.Run("turn bytes", func(t *testing.T) {
		got, st, _ := decodeAll(cases["cut"].file, 0)
		var cut []Datagram
		for _, dg := range got {
			if len(dg.Payload) > maxTurn {
				t.Errorf("a turn of %d bytes", len(dg.Payload))
			}
			if dg.Cut {
				cut = append(cut, dg)
			}
		}
		if len(cut) != 1 || len(cut[0].Payload) != maxTurn || st.Cut != 1 {
			t.Errorf("cut turns %d, stats %+v", len(cut), st)
		}
		if last := got[len(got)-1]; string(last.Payload) != "next" || last.Turn != 3 {
			t.Errorf("the turn after the cut one: %s", turnLine(last))
		}
	})
	t.Run("held segments", func(t *testing.T) {
		d := NewDecoder()
		d.Feed(cases["held-bound"].file)
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			for _, s := range d.conns.order {
				for _, sd := range s.side {
					if len(sd.held) > maxHeldSegments {
						t.Fatalf("%d segments held", len(sd.held))
					}
				}
			}
		}
		got, st, _ := decodeAll(cases["held-bound"].file, 0)
		if st.Gaps == 0 || len(got) == 0 || !got[0].Gap {
			t.Errorf("no gap: %+v", st)
		}
	})
	t.Run("held bytes", func(t *testing.T) {
		// 50 streams, each holding 200 KiB past a missing first segment.
		var pkts [][]byte
		s := mustEndpoint(t, "10.0.0.2:25565")
		chunk := strings.Repeat("z", 50<<10)
		for i := 0; i < 50; i++ {
			c := mustEndpoint(t, "10.0.0.1:"+itoa(30000+i))
			pkts = append(pkts, tcpSeg(c, s, 100, 1, tcpSYN, ""))
			for k := 4; k >= 1; k-- {
				pkts = append(pkts, tcpSeg(c, s, 101+uint32(k*len(chunk)), 1, tcpACK, chunk))
			}
		}
		d := NewDecoder()
		d.Feed(rawFile(pkts...))
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			if d.conns.heldBytes > maxHeldBytes {
				t.Fatalf("%d bytes held", d.conns.heldBytes)
			}
		}
		if d.conns.heldBytes > maxHeldBytes || d.Stats().Segments != 250 {
			t.Errorf("%d bytes held, stats %+v", d.conns.heldBytes, d.Stats())
		}
	})
	t.Run("open bytes", func(t *testing.T) {
		var pkts [][]byte
		s := mustEndpoint(t, "10.0.0.2:25565")
		chunk := strings.Repeat("o", 60000)
		for i := 0; i < 80; i++ {
			c := mustEndpoint(t, "10.0.0.1:"+itoa(30000+i))
			for k := 0; k < 8; k++ {
				pkts = append(pkts, tcpSeg(c, s, 1+uint32(k*len(chunk)), 1, tcpACK, chunk))
			}
		}
		d := NewDecoder()
		d.Feed(rawFile(pkts...))
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			if d.conns.openBytes > maxOpenBytes {
				t.Fatalf("%d bytes in open turns", d.conns.openBytes)
			}
		}
	})
}
