package pcapng

import (
	"testing"
)

// benchFile is a pcapng of n query/reply datagrams of 40 to 120 bytes
// between 100 targets, as the writer makes it.
func benchFile(n int) []byte {
	var pkts []Packet
	for i := 0; i < n; i++ {
		target := Endpoint{V4: true, IP: [16]byte{127, 0, 0, byte(1 + i%100)}, Port: 27015}
		p := Packet{Micros: int64(1_700_000_000_000_000 + i*100), Target: target, Data: make([]byte, 40+i%81)}
		if i%2 == 1 {
			p.Direction = Received
		}
		pkts = append(pkts, p)
	}
	return Append(nil, "bench", pkts)
}

// BenchmarkDecoder measures the decoder's throughput on a file fed in 64 KB
// chunks, as the page and Reader feed it:
//
//	go test -run '^$' -bench BenchmarkDecoder -benchtime 2s ./pcapng
func BenchmarkDecoder(b *testing.B) {
	f := benchFile(20000)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := countAll(f); err != nil || n != 20000 {
			b.Fatalf("%d datagrams, %v", n, err)
		}
	}
}

// countAll feeds f to a decoder in 64 KB chunks, as the page and Reader
// feed it, and counts what Next returns, the turns it gives after End
// (those still open when the file ends) included. The tests' decodeAll
// does the same and copies each payload, which a benchmark of the
// decoder must not measure.
func countAll(f []byte) (int, error) {
	d := NewDecoder()
	n := 0
	next := func() error {
		for {
			if _, err := d.Next(); err != nil {
				return err
			}
			n++
		}
	}
	for i := 0; i < len(f); i += 64 << 10 {
		d.Feed(f[i:min(i+64<<10, len(f))])
		if err := next(); err != ErrMore {
			return n, err
		}
	}
	if err := d.End(); err != nil {
		return n, err
	}
	if err := next(); err != ErrMore {
		return n, err
	}
	return n, nil
}

// benchTCPFile is a pcapng of n query/reply exchanges over TCP, as the
// writer makes them: 100 connections at once, each a query of 40 to 120
// bytes and a reply of 200 to 3,200 bytes (one to three segments), and it
// returns the number of turns in it.
func benchTCPFile(n int) ([]byte, int) {
	var pkts []Packet
	for i := 0; i < n; i++ {
		target := Endpoint{V4: true, IP: [16]byte{127, 0, 0, byte(1 + i%100)}, Port: 25565}
		at := int64(1_700_000_000_000_000 + i*100)
		stream := i / 5 // five exchanges a connection
		pkts = append(pkts,
			Packet{Micros: at, Target: target, TCP: true, Stream: stream, Data: make([]byte, 40+i%81)},
			Packet{Micros: at + 50, Target: target, TCP: true, Stream: stream, Direction: Received, Data: make([]byte, 200+(i*37)%3000)})
	}
	return Append(nil, "bench", pkts), 2 * n
}

// BenchmarkDecoderTCP is BenchmarkDecoder on TCP exchanges: the same
// throughput measure with reassembly into turns, to set beside it:
//
//	go test -run '^$' -bench 'BenchmarkDecoder' -benchtime 2s ./pcapng
func BenchmarkDecoderTCP(b *testing.B) {
	f, turns := benchTCPFile(10000)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := countAll(f); err != nil || n != turns {
			b.Fatalf("%d turns, %v; want %d", n, err, turns)
		}
	}
}

// TestDecoderAllocs: decoding allocates per file (the decoder and its
// buffer), never per datagram.
func TestDecoderAllocs(t *testing.T) {
	f := benchFile(1000)
	allocs := testing.AllocsPerRun(5, func() {
		d := NewDecoder()
		d.Feed(f)
		n := 0
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			n++
		}
		if n != 1000 {
			t.Fatalf("%d datagrams", n)
		}
	})
	if allocs > 4 {
		t.Errorf("%v allocations for 1,000 datagrams", allocs)
	}
}
