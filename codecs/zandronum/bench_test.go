package zandronum

import (
	"testing"

	"github.com/querylens/querylens/codecs"
)

// benchInputs are the realistic messages the benchmarks decode.
type benchInputs struct {
	dmWire, ctfWire, extWire []byte
	dmPayload, ctfPayload    []byte
	segments                 [][]byte // the extended reply in 3 segments
	list                     [][]byte // 170 IPs x 4 ports in 3 packets
}

func loadBench(b testing.TB) benchInputs {
	var in benchInputs
	in.dmWire = vectorDatagram(vecDM, "response")(b)[0]
	in.ctfWire = vectorDatagram(vecCTF, "response")(b)[0]
	var err error
	in.extWire, err = AppendResponse(nil, extendedResponse())
	noErr(b, "AppendResponse", err)
	in.dmPayload, _ = Unwrap(nil, in.dmWire)
	in.ctfPayload, _ = Unwrap(nil, in.ctfWire)
	in.segments, err = AppendSegmented(nil, extendedResponse(), 200)
	noErr(b, "AppendSegmented", err)
	in.list = permute(AppendMasterList(nil, multiServers(170, 4)), 2, 0, 1)
	return in
}

func BenchmarkDecodeResponse(b *testing.B) {
	in := loadBench(b)
	for _, bc := range []struct {
		name string
		fn   func() error
		size int
	}{
		{"payload/dm", func() error { _, err := DecodeResponsePayload(in.dmPayload, nil); return err }, len(in.dmPayload)},
		{"payload/ctf", func() error { _, err := DecodeResponsePayload(in.ctfPayload, nil); return err }, len(in.ctfPayload)},
		{"wire/dm", func() error { _, err := DecodeResponse(in.dmWire, nil); return err }, len(in.dmWire)},
		{"wire/ctf", func() error { _, err := DecodeResponse(in.ctfWire, nil); return err }, len(in.ctfWire)},
		{"wire/extended", func() error { _, err := DecodeResponse(in.extWire, nil); return err }, len(in.extWire)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(bc.size))
			for b.Loop() {
				if err := bc.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeSegmented(b *testing.B) {
	in := loadBench(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSegmented(in.segments); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMasterList(b *testing.B) {
	in := loadBench(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMasterList(in.list); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodecDecode is the codec's Decode, which also builds the JSON
// view, with and without the inspector's spans.
func BenchmarkCodecDecode(b *testing.B) {
	in := loadBench(b)
	for _, bc := range []struct {
		name string
		ds   [][]byte
	}{
		{"ctf", [][]byte{in.ctfWire}},
		{"segmented", in.segments},
		{"masterlist", in.list},
	} {
		for _, spans := range []bool{false, true} {
			name := bc.name + "/nospans"
			if spans {
				name = bc.name + "/spans"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := (&Codec{}).Decode(bc.ds, codecs.DecodeOptions{Spans: spans}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	r := extendedResponse()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendResponse(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

// raceEnabled is set by race_test.go.
var raceEnabled bool

// TestDecodeAllocs: without spans, decoding allocates only for what it
// returns: one string holding the reply's text (ASCII strings are slices
// of it) and one slice per list (PWADs, players, teams, all_dmflags), plus
// the reassembled buffer for segments and the server slice for a list.
func TestDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts vary under the race detector")
	}
	in := loadBench(t)
	req := vectorDatagram(vecRequest, "request")(t)[0]
	for _, tc := range []struct {
		name string
		max  float64
		fn   func() error
	}{
		// text, pwads, players, all_dmflags
		{"dm payload", 4, func() error { _, err := DecodeResponsePayload(in.dmPayload, nil); return err }},
		{"dm wire", 4, func() error { _, err := DecodeResponse(in.dmWire, nil); return err }},
		// and teams
		{"ctf wire", 5, func() error { _, err := DecodeResponse(in.ctfWire, nil); return err }},
		// payloads, headers, reassembled buffer, text, two Latin-1
		// strings, seven lists
		{"segmented", 13, func() error { _, err := DecodeSegmented(in.segments); return err }},
		{"request", 0, func() error { _, err := DecodeRequest(req); return err }},
		// the payloads of the three packets, servers, packets
		{"master list", 3, func() error { _, err := DecodeMasterList(in.list); return err }},
		// Detect and CheckQuery only look.
		{"detect reply", 0, func() error { (&Codec{}).Detect(in.ctfWire); return nil }},
		{"detect list", 0, func() error { (&Codec{}).Detect(in.list[0]); return nil }},
		{"check query", 0, func() error { return (&Codec{}).CheckQuery(req) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			allocs := testing.AllocsPerRun(200, func() { err = tc.fn() })
			noErr(t, "decode", err)
			if allocs > tc.max {
				t.Errorf("%v allocations, want at most %v", allocs, tc.max)
			}
			t.Logf("%v allocations", allocs)
		})
	}
}
