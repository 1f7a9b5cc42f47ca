package pcapng

import (
	"encoding/hex"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestCaptureGoldens lists the datagrams of each capture under
// testdata/captures (made by tcpdump and dumpcap; see the README there):
// frame, time, endpoints, interface, block offset and payload, one line
// each, and the counts, against testdata/NAME.golden.
func TestCaptureGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.pcap"))
	more, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.pcapng"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no captures in testdata/captures")
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var b strings.Builder
			b.WriteString("# the datagrams of captures/" + name + " (frame, time, source > destination, interface, block offset, payload bytes, first 16 in hex)\n")
			r := NewReader(f)
			for {
				dg, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				head := dg.Payload[:min(16, len(dg.Payload))]
				b.WriteString(strconv.Itoa(dg.Frame) + " " + time.UnixMicro(dg.Micros).UTC().Format("15:04:05.000000") + " " +
					dg.Src.String() + " > " + dg.Dst.String() + " if" + strconv.Itoa(dg.Interface) + " @" + strconv.FormatInt(dg.Offset, 10) +
					" " + strconv.Itoa(len(dg.Payload)) + " " + hex.EncodeToString(head) + "\n")
			}
			st := r.Stats()
			b.WriteString("# frames " + strconv.Itoa(st.Frames) + ", udp " + strconv.Itoa(st.UDP) + ", skipped " + strconv.Itoa(st.Skipped) +
				", fragments " + strconv.Itoa(st.Fragments) + ", reassembled " + strconv.Itoa(st.Reassembled) + ", truncated " + strconv.Itoa(st.Truncated) + "\n")
			golden := filepath.Join("testdata", strings.TrimSuffix(name, filepath.Ext(name))+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
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
