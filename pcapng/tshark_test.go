//go:build !js

package pcapng

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTsharkReadsWriter: tshark reads the pcapng Append writes as the same
// packets (addresses, ports, payloads) the decoder reads back. Skipped
// without tshark.
func TestTsharkReadsWriter(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed")
	}
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	target := mustEndpoint(t, "192.0.2.10:27015")
	v6 := mustEndpoint(t, "[2001:db8::5]:27960")
	pkts := []Packet{
		{Micros: t0, Target: target, Data: []byte("\xff\xff\xff\xffTSource Engine Query\x00")},
		{Micros: t0 + 1500, Target: target, Direction: Received, Data: []byte("\xff\xff\xff\xffA\x01\x02\x03\x04"), Comment: "challenge"},
		{Micros: t0 + 3000, Target: v6, Data: []byte("\xff\xff\xff\xffgetstatus")},
		{Micros: t0 + 4000, Target: v6, Direction: Received, Data: []byte("\xff\xff\xff\xffstatusResponse\n\\sv_hostname\\x")},
	}
	file := filepath.Join(t.TempDir(), "w.pcapng")
	if err := os.WriteFile(file, Append(nil, "test", pkts), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// udp.payload needs Wireshark 3.6 or later; data.data is the payload
	// for ports no dissector claims. frame.time_epoch checks the time.
	out, err := exec.CommandContext(ctx, "tshark", "-r", file, "-Y", "udp", "-o", "udp.try_heuristic_first:FALSE",
		"-T", "fields", "-E", "separator=|", "-e", "frame.number", "-e", "ip.src", "-e", "ipv6.src", "-e", "udp.srcport",
		"-e", "ip.dst", "-e", "ipv6.dst", "-e", "udp.dstport", "-e", "udp.payload", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	got, _, err := decodeAll(Append(nil, "test", pkts), 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(got) {
		t.Fatalf("tshark finds %d UDP packets, the decoder %d:\n%s", len(lines), len(got), out)
	}
	for i, line := range lines {
		f := strings.Split(line, "|")
		g := got[i]
		host := func(e Endpoint) string {
			s := e.String()
			s = s[:strings.LastIndexByte(s, ':')]
			return strings.Trim(s, "[]")
		}
		src, dst := f[1]+f[2], f[4]+f[5]
		if src != host(g.Src) || dst != host(g.Dst) || f[3] != itoa(int(g.Src.Port)) || f[6] != itoa(int(g.Dst.Port)) ||
			f[7] != hex.EncodeToString(g.Payload) || !strings.HasPrefix(f[8], itoa(int(g.Micros/1e6))+"."+pad6(g.Micros%1e6)) {
			t.Errorf("packet %d: tshark says %s\ndecoder: %v > %v % x at %d", i+1, line, g.Src, g.Dst, g.Payload, g.Micros)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func pad6(n int64) string {
	s := itoa(int(n))
	for len(s) < 6 {
		s = "0" + s
	}
	return s
}

// TestTsharkFollowsTCP: for the writer's TCP file and the well-formed
// hand-built captures, tshark's "Follow TCP Stream" (-z follow,tcp,raw)
// shows the same bytes per stream and side as the reader's turns, and
// its tcp.stream numbers are ours. Skipped without tshark.
func TestTsharkFollowsTCP(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed")
	}
	for _, tc := range tcpCases(t) {
		if !tc.tshark {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := decodeAll(tc.file, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Ours: per stream, its turns in turn order as "port hex".
			ours := make([][]string, st.Streams)
			for _, dg := range got {
				if dg.TCP {
					for len(ours[dg.Stream]) < dg.Turn {
						ours[dg.Stream] = append(ours[dg.Stream], "")
					}
					ours[dg.Stream][dg.Turn-1] = itoa(int(dg.Src.Port)) + " " + hex.EncodeToString(dg.Payload)
				}
			}
			file := filepath.Join(t.TempDir(), tc.name+".pcapng")
			if err := os.WriteFile(file, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-r", file, "-q"}
			for i := 0; i < st.Streams; i++ {
				args = append(args, "-z", "follow,tcp,raw,"+itoa(i))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, "tshark", args...).Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			theirs := followTurns(t, string(out))
			for i := 0; i < st.Streams; i++ {
				if strings.Join(theirs[i], "\n") != strings.Join(ours[i], "\n") {
					t.Errorf("stream %d: tshark follows\n%s\nthe reader's turns:\n%s", i, strings.Join(theirs[i], "\n"), strings.Join(ours[i], "\n"))
				}
			}
			if len(theirs) != st.Streams {
				t.Errorf("tshark shows %d streams, the reader %d", len(theirs), st.Streams)
			}
		})
	}
}

// followTurns reads tshark's follow,tcp,raw output: per stream, the runs
// of one node's lines (node 1's are indented) joined, as "port hex".
func followTurns(t *testing.T, out string) map[int][]string {
	turns := map[int][]string{}
	stream, last := -1, -1
	var port [2]string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Filter: tcp.stream eq "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "Filter: tcp.stream eq "))
			if err != nil {
				t.Fatalf("tshark: %q", line)
			}
			stream, last = n, -1
			turns[n] = []string{}
		case strings.HasPrefix(line, "Node 0: "), strings.HasPrefix(line, "Node 1: "):
			port[line[5]-'0'] = line[strings.LastIndexByte(line, ':')+1:]
		case strings.HasPrefix(line, "=") || line == "" || strings.HasPrefix(line, "Follow:") || stream < 0:
		default:
			node := 0
			if line[0] == '\t' {
				node = 1
			}
			data := strings.TrimSpace(line)
			if node == last {
				turns[stream][len(turns[stream])-1] += data
			} else {
				turns[stream] = append(turns[stream], port[node]+" "+data)
			}
			last = node
		}
	}
	return turns
}
