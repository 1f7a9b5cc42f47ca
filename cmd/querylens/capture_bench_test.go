package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/pcapng"
)

// benchCaptureFile writes a pcapng of n UDP datagrams to path: query/reply
// pairs of six protocols, taken from the demo capture (A2S INFO with and
// without the challenge, Quake III getstatus, Bloodmasters, the Zandronum
// master and a GameSpy v3 challenge), between 1,000 targets on loopback.
// It returns the file's size.
func benchCaptureFile(tb testing.TB, path string, n int) int64 {
	tb.Helper()
	src, err := os.Open(filepath.Join(captureDir, "demo-tcpdump.pcap"))
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	want := map[int]bool{36: true, 37: true, 38: true, 39: true, 66: true, 67: true, 24: true, 25: true, 1: true, 2: true, 85: true, 86: true}
	var payloads [][]byte
	r := pcapng.NewReader(src)
	for {
		dg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if want[dg.Frame] {
			payloads = append(payloads, append([]byte(nil), dg.Payload...))
		}
	}
	if len(payloads) != len(want) {
		tb.Fatalf("found %d of the %d datagrams", len(payloads), len(want))
	}
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	head := len(pcapng.Append(nil, "bench", nil)) // the SHB and IDB
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var size int64
	const batch = 10000
	for i := 0; i < n; i += batch {
		pkts := make([]pcapng.Packet, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			k := j % len(payloads) // even: query, odd: its reply
			target := pcapng.Endpoint{V4: true, IP: [16]byte{127, 0, byte(j / 2 % 1000 / 250), byte(1 + j/2%250)}, Port: uint16(20000 + j/2%1000)}
			p := pcapng.Packet{Micros: t0 + int64(j)*50, Target: target, Data: payloads[k]}
			if k%2 == 1 {
				p.Direction = pcapng.Received
			}
			pkts = append(pkts, p)
		}
		b := pcapng.Append(nil, "bench", pkts)
		if i > 0 {
			b = b[head:]
		}
		if _, err := out.Write(b); err != nil {
			tb.Fatal(err)
		}
		size += int64(len(b))
	}
	return size
}

// BenchmarkInspectCapture runs `querylens inspect --pcap FILE --json` (in
// this process, output to /dev/null) on a generated pcapng of 1 million UDP
// datagrams, and `tshark -r FILE -Y udp -T fields -e frame.number` once on
// the same file, when tshark is installed: tshark-s is its time, x-tshark
// the ratio. The file goes in a temporary directory (or to
// $QUERYLENS_BENCH_CAPTURE, kept, to time the binary by hand):
//
//	go test -run '^$' -bench BenchmarkInspectCapture -benchtime 1x ./cmd/querylens
func BenchmarkInspectCapture(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("QUERYLENS_BENCH_DATAGRAMS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	file := os.Getenv("QUERYLENS_BENCH_CAPTURE")
	if file == "" {
		file = filepath.Join(b.TempDir(), "bench.pcapng")
	}
	size := benchCaptureFile(b, file, n)
	b.Logf("%s: %d datagrams, %d bytes", file, n, size)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	b.SetBytes(size)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if code := run([]string{"inspect", "--pcap", file, "--json"}, nil, devnull, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
	ours := time.Since(start).Seconds() / float64(b.N)
	b.StopTimer()
	if _, err := exec.LookPath("tshark"); err != nil {
		b.Log("tshark is not installed: no comparison")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tshark", "-r", file, "-Y", "udp", "-T", "fields", "-e", "frame.number")
	cmd.Stdout = devnull
	start = time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("tshark: %v", err)
	}
	theirs := time.Since(start).Seconds()
	b.ReportMetric(theirs, "tshark-s")
	b.ReportMetric(ours/theirs, "x-tshark")
}
