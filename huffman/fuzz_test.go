package huffman

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// addVectorSeeds seeds f with every vector of testdata/huffman.json: the
// payload when plain is set, else the current and legacy datagrams. Each
// vector's name says what it covers: the empty payload, one-byte payloads
// on both sides of the raw rule, the launcher challenge, the master
// request (k == n, where the two rules differ), all 256 byte values, the
// 275-byte server response, incompressible bytes, the raw marker, and
// garbage padding bits.
func addVectorSeeds(f *testing.F, plain bool) {
	for _, v := range loadVectors(f) {
		if plain {
			f.Add(v.plain)
		} else {
			f.Add(v.encoded)
			f.Add(v.legacy)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	addVectorSeeds(f, true)
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")) // only 9-bit codes: raw form
	f.Add(bytes.Repeat([]byte{0}, 40))                        // only 3-bit codes: longest fast path
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) > MaxDecoded {
			return
		}
		for _, enc := range []struct {
			name   string
			encode func(dst, src []byte) []byte
			legacy bool
		}{{"Encode", Encode, false}, {"EncodeLegacy", EncodeLegacy, true}} {
			e := enc.encode(nil, p)
			if len(e) > len(p)+1 {
				t.Fatalf("%s(%x) = %x: longer than len+1", enc.name, p, e)
			}
			if ref := refEncode(nil, p, enc.legacy); !bytes.Equal(e, ref) {
				t.Fatalf("%s(%x) = %x, reference %x", enc.name, p, e, ref)
			}
			d, err := Decode(nil, e)
			if err != nil || !bytes.Equal(d, p) {
				t.Fatalf("Decode(%s(%x)) = %x, %v", enc.name, p, d, err)
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	addVectorSeeds(f, false)
	f.Add([]byte{})                       // empty datagram: ErrEmpty
	f.Add([]byte{0x09, 0x9c, 0x9c})       // padding count above 7: 7 meaningful bits, incomplete code
	f.Add([]byte{0xfe, 0x01})             // padding count 254: no bits at all
	f.Add([]byte{0x01, 0x9c, 0x9c})       // stream ends inside the second code
	f.Add(bytes.Repeat([]byte{0x00}, 70)) // 552 zero bits: 138 codes 0000 (byte 0x80), a long fast path ending on a code boundary
	// 0x00 runs split at each phase of a 3-bit code: the two-halves
	// decoder resynchronises only when the split falls on a boundary.
	for n := 2000; n < 2003; n++ {
		f.Add(Encode(nil, make([]byte, n)))
	}
	for _, v := range loadVectors(f) {
		if strings.HasPrefix(v.Name, "realistic") {
			f.Add(Encode(nil, bytes.Repeat(v.plain, 4))) // 1100 bytes of real traffic: the two-halves decoder resynchronises
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := Decode(nil, src)
		if len(got) > MaxDecoded {
			t.Fatalf("Decode returned %d bytes, more than MaxDecoded", len(got))
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(src) {
				t.Fatalf("Decode(%x): error %#v is not an *Error inside src", src, err)
			}
		}
		if ref, rerr := refDecode(nil, src); !bytes.Equal(got, ref) || !sameError(err, rerr) {
			t.Fatalf("Decode(%x) = %x, %v; reference %x, %v", src, got, err, ref, rerr)
		}
		if err != nil {
			return
		}
		// What decodes must re-encode to something that decodes the same.
		again, err := Decode(nil, Encode(nil, got))
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("round trip of %x: %x, %v", got, again, err)
		}
	})
}
