package zandronum

import (
	"bytes"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// seedPayloads returns the plain payloads of the golden datagrams whose
// file name matches pattern (testdata/*.hex: see goldenCases for what each
// one is).
func seedPayloads(f *testing.F, pattern string) [][][]byte {
	names, err := filepath.Glob("testdata/" + pattern + ".hex")
	if err != nil || len(names) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	var out [][][]byte
	for _, n := range names {
		var ps [][]byte
		for _, d := range codectest.ReadHexLines(f, "testdata/"+filepath.Base(n)) {
			p, err := Unwrap(nil, d)
			if err != nil {
				f.Fatal(err)
			}
			ps = append(ps, p)
		}
		out = append(out, ps)
	}
	return out
}

// sameResponse compares two replies, taking a NaN team damage as equal to
// itself.
func sameResponse(a, b Response) bool {
	if math.IsNaN(float64(a.TeamDamage)) && math.IsNaN(float64(b.TeamDamage)) {
		a.TeamDamage, b.TeamDamage = 0, 0
	}
	return reflect.DeepEqual(a, b)
}

// FuzzDecodeResponse: no panic; a reply that decodes re-encodes to the
// same payload and decodes to the same value (Decode -> Append ->
// Decode); through the Huffman layer it decodes the same.
func FuzzDecodeResponse(f *testing.F) {
	for _, ps := range seedPayloads(f, "response_*") { // the DM, CTF and extended replies
		f.Add(ps[0])
	}
	for _, ps := range seedPayloads(f, "denied_*") { // 5660024 and 5660025
		f.Add(ps[0])
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := DecodeResponsePayload(p, nil)
		if err != nil {
			var e *codecs.Error
			if !errorsAs(err, &e) || e.Offset < 0 || e.Offset > len(p) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		b, err := AppendResponsePayload(nil, r)
		if err != nil {
			t.Fatalf("decoded reply does not encode: %v", err)
		}
		if !bytes.Equal(b, p) {
			t.Fatalf("re-encoded payload differs:\n got  %x\n want %x", b, p)
		}
		r2, err := DecodeResponsePayload(b, nil)
		if err != nil || !sameResponse(r, r2) {
			t.Fatalf("round trip: %v\n%#v\n%#v", err, r, r2)
		}
		r3, err := DecodeResponse(Wrap(nil, p), nil)
		if err != nil || !sameResponse(r, r3) {
			t.Fatalf("through the Huffman layer: %v", err)
		}
	})
}

// FuzzDecodeRequest: no panic; Decode -> Append gives the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	for _, ps := range seedPayloads(f, "request_*") { // Doomseeker's, extended+segmented, qstat's
		f.Add(ps[0])
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		q, err := DecodeRequestPayload(p)
		if err != nil {
			return
		}
		b, err := AppendRequestPayload(nil, q)
		if err != nil || !bytes.Equal(b, p) {
			t.Fatalf("re-encoded request differs: %v\n got  %x\n want %x", err, b, p)
		}
		q2, err := DecodeRequest(Wrap(nil, p))
		if err != nil || !reflect.DeepEqual(q, q2) {
			t.Fatalf("through the Huffman layer: %v", err)
		}
	})
}

// splitParts turns the fuzzer's arguments into 1 to 3 datagrams.
func splitParts(n uint8, a, b, c []byte) [][]byte {
	return [][][]byte{{a}, {a, b}, {a, b, c}}[n%3]
}

// FuzzDecodeMasterList: no panic; a complete list rebuilt with the
// builders decodes to the same servers.
func FuzzDecodeMasterList(f *testing.F) {
	for _, ps := range seedPayloads(f, "master_*") { // single, multi (3), legacy, refusal
		for len(ps) < 3 {
			ps = append(ps, nil)
		}
		f.Add(uint8(0), ps[0], ps[1], ps[2])
		if ps[2] != nil {
			f.Add(uint8(2), ps[0], ps[1], ps[2])
		}
	}
	f.Fuzz(func(t *testing.T, n uint8, a, b, c []byte) {
		l, err := DecodeMasterListPayloads(splitParts(n, a, b, c))
		if err != nil || !l.Complete {
			return
		}
		var again MasterList
		switch l.Code {
		case MasterBeginPart:
			again, err = DecodeMasterListPayloads(AppendMasterListPayloads(nil, l.Servers))
		case MasterBeginList:
			again, err = DecodeMasterListPayloads([][]byte{AppendLegacyMasterListPayload(nil, l.Servers)})
		default:
			t.Fatalf("complete list with code %d", l.Code)
		}
		if err != nil || !reflect.DeepEqual(l.Servers, again.Servers) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzDecodeSegmented: no panic; a reply that reassembles re-segments and
// decodes to the same value.
func FuzzDecodeSegmented(f *testing.F) {
	for _, ps := range seedPayloads(f, "segmented") { // the extended reply in 3 segments, out of order
		f.Add(uint8(2), ps[0], ps[1], ps[2])
		f.Add(uint8(1), ps[1], ps[2], []byte(nil))
	}
	f.Fuzz(func(t *testing.T, n uint8, a, b, c []byte) {
		r, err := DecodeSegmentedPayloads(splitParts(n, a, b, c))
		if err != nil {
			return
		}
		for _, size := range []int{13, 100, DefaultMaxPacketSize} {
			ps, err := AppendSegmentedPayloads(nil, r, size)
			if err != nil {
				continue // too many segments for a tiny packet size
			}
			r2, err := DecodeSegmentedPayloads(ps)
			if err != nil || !sameResponse(r, r2) {
				t.Fatalf("round trip at packet size %d: %v", size, err)
			}
		}
	})
}

// FuzzCodec runs datagrams through Detect, CheckQuery and Decode with
// spans: no panic, and every span lies in its layer.
func FuzzCodec(f *testing.F) {
	names, _ := filepath.Glob("testdata/*.hex")
	for _, n := range names {
		ds := codectest.ReadHexLines(f, "testdata/"+filepath.Base(n))
		for len(ds) < 3 {
			ds = append(ds, nil)
		}
		f.Add(uint8(len(ds)-1), ds[0], ds[1], ds[2])
	}
	f.Fuzz(func(t *testing.T, n uint8, a, b, c []byte) {
		var codec Codec
		codec.Detect(a)
		codec.CheckQuery(a)
		m, err := codec.Decode(splitParts(n, a, b, c), codecs.DecodeOptions{Spans: true})
		if m == nil {
			t.Fatal("no message")
		}
		for _, s := range m.Spans {
			if s.Layer < 0 || s.Layer >= len(m.Layers) || s.Start < 0 || s.Start > s.End || s.End > len(m.Layers[s.Layer].Bytes) {
				t.Fatalf("span %+v outside its layer", s)
			}
		}
		_ = err
		m.AppendJSON(nil)
		codecs.AppendDump(nil, m)
	})
}
