package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/pcapng"
)

// The captures of demo traffic (pcapng/testdata/captures/README.md says how
// they were made).
var captureDir = filepath.Join("..", "..", "pcapng", "testdata", "captures")

func captureFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		m, _ := filepath.Glob(filepath.Join(captureDir, pat))
		files = append(files, m...)
	}
	slices.Sort(files)
	if len(files) < 3 {
		t.Fatalf("want the three demo captures in %s, found %v", captureDir, files)
	}
	return files
}

// tsharkUDPFrames returns the frame numbers `tshark -r FILE -Y udp` lists.
// Without tshark it returns the list stored beside the capture (FILE.udp,
// written by tshark with -update), and says so.
func tsharkUDPFrames(t *testing.T, file string) []int {
	t.Helper()
	stored := file + ".udp"
	if _, err := exec.LookPath("tshark"); err != nil {
		b, err := os.ReadFile(stored)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tshark is not installed: comparing with %s, made by tshark", stored)
		return parseFrames(t, string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tshark", "-r", file, "-Y", "udp", "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	frames := parseFrames(t, string(out))
	if *update {
		var b strings.Builder
		b.WriteString("# the UDP frames of " + filepath.Base(file) + ", by tshark -r FILE -Y udp -T fields -e frame.number\n")
		for _, f := range frames {
			b.WriteString(strconv.Itoa(f) + "\n")
		}
		if err := os.WriteFile(stored, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return frames
}

func parseFrames(t *testing.T, s string) []int {
	t.Helper()
	var frames []int
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n, err := strconv.Atoi(line)
		if err != nil {
			t.Fatalf("bad frame number %q", line)
		}
		frames = append(frames, n)
	}
	return frames
}

// captureLine is what the tests read of inspect --pcap --json's lines.
type captureLine struct {
	Frame      int             `json:"frame"`
	Time       string          `json:"time"`
	Src        string          `json:"src"`
	Dst        string          `json:"dst"`
	Length     int             `json:"length"`
	Protocol   *string         `json:"protocol"`
	DetectedBy string          `json:"detected_by"`
	Kind       string          `json:"kind"`
	ReplyTo    int             `json:"reply_to"`
	PartOf     int             `json:"part_of"`
	Frames     []int           `json:"frames"`
	Message    json.RawMessage `json:"message"`
	TCPStream  *int            `json:"tcp_stream"`
	TCPTurn    int             `json:"tcp_turn"`
	Cut        bool            `json:"cut"`
	Gap        bool            `json:"gap"`
}

type captureMessage struct {
	Kind   string `json:"kind"`
	Denied string `json:"denied"`
	Info   *struct {
		Name       string `json:"name"`
		Map        string `json:"map"`
		NumPlayers *int   `json:"num_players"`
	} `json:"info"`
	Servers  []string `json:"servers"`
	Warnings []string `json:"warnings"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func parseCaptureJSON(t *testing.T, out string) []captureLine {
	t.Helper()
	var lines []captureLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l captureLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v: %s", len(lines)+1, err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines
}

// summary is one golden line per datagram: how it was read and, for the
// datagram that carries a message, what it says.
func summary(t *testing.T, l captureLine) string {
	t.Helper()
	head := "frame " + strconv.Itoa(l.Frame) + " " + l.Src + " > " + l.Dst
	if l.TCPStream != nil {
		head += " tcp " + strconv.Itoa(*l.TCPStream) + "/" + strconv.Itoa(l.TCPTurn)
		if l.Cut {
			head += " cut"
		}
		if l.Gap {
			head += " gap"
		}
	}
	if l.Protocol == nil {
		return head + " unknown"
	}
	s := head + " " + *l.Protocol + " " + l.Kind + " (" + l.DetectedBy + ")"
	if l.ReplyTo > 0 {
		s += " reply to " + strconv.Itoa(l.ReplyTo)
	}
	if l.PartOf > 0 {
		return s + " part of " + strconv.Itoa(l.PartOf)
	}
	if l.Frames != nil {
		s += " frames " + strings.Trim(jsonText(l.Frames), "[]")
	}
	if l.Message == nil {
		return s
	}
	var m captureMessage
	if err := json.Unmarshal(l.Message, &m); err != nil {
		t.Fatalf("frame %d: message: %v", l.Frame, err)
	}
	switch {
	case m.Error != nil:
		s += ": error " + m.Error.Message
	case m.Info != nil:
		s += ": " + strconv.Quote(m.Info.Name) + " map " + strconv.Quote(m.Info.Map)
		if m.Info.NumPlayers != nil {
			s += " players " + strconv.Itoa(*m.Info.NumPlayers)
		}
	case m.Servers != nil:
		s += ": " + strconv.Itoa(len(m.Servers)) + " servers"
	case m.Denied != "":
		s += ": denied " + m.Denied
	}
	if len(m.Warnings) > 0 {
		s += " warnings " + strings.Join(m.Warnings, "; ")
	}
	return s
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestInspectCaptures reads the demo captures: as many UDP datagrams as
// tshark finds, in the same frames, every one of a known protocol, split
// replies grouped, replies paired with their queries, and the decoded
// names and players in a golden summary.
func TestInspectCaptures(t *testing.T) {
	for _, file := range captureFiles(t) {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			out, stderr, code := runCLI(t, "", "inspect", "--json", "--pcap", file)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := parseCaptureJSON(t, out)
			var frames []int
			protocols := map[string]bool{}
			var sum strings.Builder
			sum.WriteString("# querylens inspect --json --pcap " + name + ", summarised by TestInspectCaptures\n")
			for _, l := range lines {
				frames = append(frames, l.Frame)
				if l.Protocol == nil {
					t.Errorf("frame %d: no protocol found", l.Frame)
					continue
				}
				protocols[*l.Protocol] = true
				if !strings.HasPrefix(l.Src, "127.0.0.1:") || !strings.HasPrefix(l.Dst, "127.0.0.1:") || l.Length == 0 || !strings.HasPrefix(l.Time, "20") {
					t.Errorf("frame %d: %+v", l.Frame, l)
				}
				if l.Kind != "query" && l.Kind != "master-query" && l.ReplyTo == 0 {
					t.Errorf("frame %d: a %s paired with no query", l.Frame, l.Kind)
				}
				sum.WriteString(summary(t, l) + "\n")
			}
			if want := tsharkUDPFrames(t, file); !slices.Equal(frames, want) {
				t.Errorf("UDP frames %v\ntshark finds %v", frames, want)
			}
			// The protocols the demo served when the captures were made
			// (not codecs.Protocols(): a test registers a toy protocol,
			// and a protocol added later is not in these files).
			for _, name := range []string{"a2s", "bloodmasters", "gamespy1", "gamespy2", "gamespy3", "ogp", "quake3", "zandronum"} {
				if !protocols[name] {
					t.Errorf("no datagram of %s", name)
				}
			}
			if !strings.Contains(stderr, strconv.Itoa(len(lines))+" UDP datagrams") {
				t.Errorf("stderr: %s", stderr)
			}
			checkGolden(t, filepath.Join("testdata", "captures", strings.TrimSuffix(name, filepath.Ext(name))+".golden"), sum.String())

			// The text form prints the same messages as field dumps.
			text, _, code := runCLI(t, "", "inspect", "--pcap", file)
			if code != exitOK || !strings.Contains(text, "protocol a2s, kind response\n") || !strings.Contains(text, " part of the message of frame ") {
				t.Errorf("text form: exit %d\n%.2000s", code, text)
			}
		})
	}
}

func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/querylens -update)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (run with -update if the change is intended)\ngot:\n%s", golden, got)
	}
}

// TestInspectCaptureErrors: a broken capture's error names the file, the
// block and its offset; the datagrams before it are printed.
func TestInspectCaptureErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(captureDir, "demo-dumpcap.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Cut the file inside its tenth packet block.
	d := pcapng.NewDecoder()
	d.Feed(good)
	var tenth pcapng.Datagram
	for i := 0; i < 10; i++ {
		if tenth, err = d.Next(); err != nil {
			t.Fatal(err)
		}
	}
	cut := write("cut.pcapng", good[:tenth.Offset+20])
	bad := bytes.Clone(good)
	bad[tenth.Offset+4] ^= 0x01 // a total length that is not a multiple of 4
	badLen := write("badlen.pcapng", bad)
	for _, tc := range []struct {
		name, file string
		code       int
		stderr     string
		lines      int
	}{
		{"truncated", cut, exitFail, cut + ": pcapng: EPB at offset " + strconv.FormatInt(tenth.Offset, 10) + ": truncated", 9},
		{"bad length", badLen, exitFail, badLen + ": pcapng: EPB at offset " + strconv.FormatInt(tenth.Offset, 10) + ": length", 9},
		{"not a capture", write("x.pcap", []byte("hello, world")), exitFail, "x.pcap: pcapng: file at offset 0: not a pcap or pcapng file", 0},
		{"missing", filepath.Join(dir, "nope.pcap"), exitFail, "nope.pcap: no such file", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, "", "inspect", "--json", "--pcap", tc.file)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, tc.code, tc.stderr)
			}
			if n := strings.Count(out, "\n"); n != tc.lines {
				t.Errorf("%d lines printed, want %d", n, tc.lines)
			}
		})
	}
	for _, args := range [][]string{
		{"inspect", "--pcap", cut, "c7000000"},
		{"inspect", "--pcap", cut, "-p", "quake9"},
	} {
		if _, _, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestInspectWriterExport reads the pcapng the inspector page exports
// (package pcapng's writer): the protocol found by the well-known port,
// replies paired with queries, and -p forcing a protocol.
func TestInspectWriterExport(t *testing.T) {
	a2sQuery := []byte("\xff\xff\xff\xffTSource Engine Query\x00")
	a2sChallenge := []byte("\xff\xff\xff\xffA\x01\x02\x03\x04")
	// The first of two parts of a split reply (Source form: id, total,
	// number, part size), whose second part never comes.
	split := []byte("\xfe\xff\xff\xff\x07\x00\x00\x00\x02\x00\xe0\x04\xff\xff\xff\xffI\x11")
	target, _ := pcapng.ParseEndpoint("192.0.2.10:27015")
	other, _ := pcapng.ParseEndpoint("192.0.2.11:27015")
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	f := pcapng.Append(nil, "test", []pcapng.Packet{
		{Micros: t0, Target: target, Data: a2sQuery},
		{Micros: t0 + 1500, Target: target, Data: a2sChallenge, Direction: pcapng.Received},
		{Micros: t0 + 3000, Target: target, Data: []byte("not a query of anything")},
		{Micros: t0 + 4000, Target: other, Data: a2sQuery},
		{Micros: t0 + 5000, Target: other, Data: split, Direction: pcapng.Received},
		{Micros: t0 + 6000, Target: target, Data: a2sQuery},
	})
	file := filepath.Join(t.TempDir(), "export.pcapng")
	if err := os.WriteFile(file, f, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "inspect", "--json", "--pcap", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := parseCaptureJSON(t, out)
	want := []string{
		"frame 1 0.0.0.0:49152 > 192.0.2.10:27015 a2s query (port)",
		"frame 2 192.0.2.10:27015 > 0.0.0.0:49152 a2s challenge (conversation) reply to 1",
		"frame 3 0.0.0.0:49152 > 192.0.2.10:27015 unknown",
		"frame 4 0.0.0.0:49152 > 192.0.2.11:27015 a2s query (port)",
		// Held until the capture ends, then printed with what is missing;
		// frame 6 waits behind it, so the lines stay in frame order.
		"frame 5 192.0.2.11:27015 > 0.0.0.0:49152 a2s response (conversation) reply to 4: error ",
		"frame 6 0.0.0.0:49152 > 192.0.2.10:27015 a2s query (port)",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if got := summary(t, l); got != want[i] && !(strings.HasSuffix(want[i], "error ") && strings.HasPrefix(got, want[i])) {
			t.Errorf("line %d: %s\nwant %s", i+1, got, want[i])
		}
	}
	if lines[1].Time != "2025-03-01T12:00:00.001500Z" {
		t.Errorf("time %s", lines[1].Time)
	}
	// -p decodes every datagram in one protocol, errors included.
	out, _, code = runCLI(t, "", "inspect", "--json", "-p", "a2s", "--pcap", file)
	lines = parseCaptureJSON(t, out)
	if code != exitOK || len(lines) != len(want) || lines[2].Protocol == nil || !strings.Contains(string(lines[2].Message), `"error"`) {
		t.Errorf("-p a2s: exit %d\n%s", code, out)
	}
}

// TestLiveCapture captures loopback traffic with tcpdump and dumpcap (as
// root; skipped where capturing is not allowed or the tool is missing) and
// reads it back: the datagrams a test server exchanged, in order.
func TestLiveCapture(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("capturing on lo needs root")
	}
	for _, tool := range []string{"tcpdump", "dumpcap"} {
		t.Run(tool, func(t *testing.T) {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skip(tool + " is not installed")
			}
			liveCapture(t, tool)
		})
	}
}

func liveCapture(t *testing.T, tool string) {
	// A server answering every datagram with an A2S challenge, on loopback.
	srv, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := srv.ReadFrom(buf)
			if err != nil {
				return
			}
			if n > 0 {
				srv.WriteTo([]byte("\xff\xff\xff\xffA\x01\x02\x03\x04"), from)
			}
		}
	}()
	cl, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	port := srv.LocalAddr().(*net.UDPAddr).Port
	const packets = 6 // three queries and their replies
	file := filepath.Join(t.TempDir(), "live."+map[string]string{"tcpdump": "pcap", "dumpcap": "pcapng"}[tool])
	filter := "udp and port " + strconv.Itoa(port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	var ready string
	if tool == "tcpdump" {
		cmd = exec.CommandContext(ctx, "tcpdump", "-i", "lo", "-U", "-c", strconv.Itoa(packets), "-w", file, filter)
		ready = "listening on"
	} else {
		cmd = exec.CommandContext(ctx, "dumpcap", "-i", "lo", "-c", strconv.Itoa(packets), "-f", filter, "-w", file)
		ready = "Capturing on"
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skip(tool + " does not start: " + err.Error())
	}
	// Wait for the tool to say it captures (it prints that once the
	// interface is open and the filter set), keeping what it said.
	var said strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), ready) {
			break
		}
	}
	go func() { // drain the rest, so the tool never blocks on its stderr
		for sc.Scan() {
		}
	}()
	if !strings.Contains(said.String(), ready) {
		cmd.Wait()
		t.Skip(tool + " cannot capture here: " + said.String())
	}
	// Send queries until the tool has its packets and exits (the capture
	// may miss the first ones if its filter came up late): bounded.
	query := []byte("\xff\xff\xff\xffTSource Engine Query\x00")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	sent := 0
wait:
	for sent < 50 {
		if _, err := cl.WriteTo(query, srv.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		sent++
		cl.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 64)
		cl.ReadFrom(buf) // the reply, so each query's pair is on the wire before the next
		select {
		case werr = <-done:
			break wait
		default:
		}
		if sent >= packets/2 {
			select {
			case werr = <-done:
				break wait
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	if sent == 50 {
		cancel()
		<-done
		t.Fatalf("%s did not capture %d packets after %d queries", tool, packets, sent)
	}
	if werr != nil {
		t.Fatalf("%s: %v", tool, werr)
	}
	out, stderrOut, code := runCLI(t, "", "inspect", "--json", "--pcap", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderrOut)
	}
	lines := parseCaptureJSON(t, out)
	if len(lines) != packets {
		t.Fatalf("%d datagrams, want %d:\n%s", len(lines), packets, out)
	}
	// The capture may start between a query and its reply (its filter
	// came up after the query left): then the first datagram is a reply
	// whose query is not in the file, and it is a reply to nothing.
	// After that, queries and replies alternate, each reply to the
	// query before it.
	server := "127.0.0.1:" + strconv.Itoa(port)
	for i, l := range lines {
		kind, from, replyTo := "query", l.Dst, 0
		if l.Src == server {
			kind, from = "challenge", l.Src
			if i > 0 {
				replyTo = lines[i-1].Frame
			}
		}
		if i > 0 && (l.Src == server) == (lines[i-1].Src == server) {
			t.Errorf("datagram %d: two %ss in a row: %s", i, kind, summary(t, l))
		}
		if l.Protocol == nil || *l.Protocol != "a2s" || l.Kind != kind || from != server || l.ReplyTo != replyTo {
			t.Errorf("datagram %d: %s", i, summary(t, l))
		}
	}
}

// TestInspectCaptureDamaged runs inspect --pcap --json on damaged copies
// of the demo captures (cut short, a byte changed): it never panics, exits
// 0 or 1, and prints one line per UDP datagram the reader found (the count
// it reports), however the damage regroups the datagrams. The reader
// itself is fuzzed by pcapng's FuzzDecoder; this covers the grouping
// above it without building the command under the fuzzer.
func TestInspectCaptureDamaged(t *testing.T) {
	for _, file := range captureFiles(t) {
		good, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, b []byte) {
			var out, errb bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
			code := e.inspectReader(captureOptions{file: "damaged", json: true}, bytes.NewReader(b))
			lines := strings.Count(out.String(), "\n")
			if code != exitOK && code != exitFail || !strings.Contains(errb.String(), " "+strconv.Itoa(lines)+" UDP datagrams") {
				t.Errorf("%s %s: exit %d, %d lines, stderr %q", filepath.Base(file), what, code, lines, errb.String())
			}
		}
		for i := 0; i < 20; i++ {
			at := len(good) * i / 20
			check("cut at "+strconv.Itoa(at), good[:at])
			for _, x := range []byte{0x01, 0x80, 0xff} {
				b := bytes.Clone(good)
				b[at+i%7] ^= x
				check("byte "+strconv.Itoa(at+i%7)+" ^ "+strconv.Itoa(int(x)), b)
			}
		}
	}
}
