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
			return out, d.Stats(), d.End()
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
