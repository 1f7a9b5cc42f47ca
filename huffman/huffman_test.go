package huffman

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readSpec reads a copy of a file of the protocol specification kept in
// testdata/ (testdata/SOURCES.md says where each came from).
func readSpec(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// vector is one entry of testdata/huffman.json.
type vector struct {
	Name       string `json:"name"`
	PlainHex   string `json:"plain_hex"`
	EncodedHex string `json:"encoded_hex"`
	LegacyHex  string `json:"legacy_encoded_hex"`
	Expected   struct {
		PlainLen    int   `json:"plain_len"`
		EncodedLen  *int  `json:"encoded_len"`
		RawFallback *bool `json:"raw_fallback"`
		PaddingBits *int  `json:"padding_bits"`
		HuffmanBits *int  `json:"huffman_bits"`
	} `json:"expected"`

	plain, encoded, legacy []byte
}

// decodeOnly reports a vector that only specifies decoding (its plain text
// need not encode to its datagram).
func (v *vector) decodeOnly() bool { return strings.HasPrefix(v.Name, "decode:") }

// loadVectors reads testdata/huffman.json, a copy of the spec's
// vectors/huffman.json.
func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	b, err := os.ReadFile("testdata/huffman.json")
	if err != nil {
		tb.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		tb.Fatal(err)
	}
	for i := range vs {
		v := &vs[i]
		v.plain = mustHex(tb, v.PlainHex)
		v.encoded = mustHex(tb, v.EncodedHex)
		v.legacy = v.encoded
		if v.LegacyHex != "" {
			v.legacy = mustHex(tb, v.LegacyHex)
		}
	}
	return vs
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			for _, form := range []struct {
				name string
				b    []byte
			}{{"encoded", v.encoded}, {"legacy", v.legacy}} {
				got, err := Decode(nil, form.b)
				if err != nil || !bytes.Equal(got, v.plain) {
					t.Errorf("Decode(%s %x) = %x, %v; want %x", form.name, form.b, got, err, v.plain)
				}
			}
			if len(v.plain) != v.Expected.PlainLen {
				t.Errorf("plain is %d bytes, expected.plain_len %d", len(v.plain), v.Expected.PlainLen)
			}
			if v.decodeOnly() {
				return
			}
			if got := Encode(nil, v.plain); !bytes.Equal(got, v.encoded) {
				t.Errorf("Encode = %x\nwant     %x", got, v.encoded)
			}
			if got := EncodeLegacy(nil, v.plain); !bytes.Equal(got, v.legacy) {
				t.Errorf("EncodeLegacy = %x\nwant           %x", got, v.legacy)
			}
			if IsLegacy(v.encoded) {
				t.Errorf("IsLegacy(current form %x) = true", v.encoded)
			}
			if differs := v.LegacyHex != ""; IsLegacy(v.legacy) != differs {
				t.Errorf("IsLegacy(legacy form %x) = %v, want %v", v.legacy, !differs, differs)
			}
			e := v.Expected
			if e.EncodedLen != nil && len(v.encoded) != *e.EncodedLen {
				t.Errorf("encoded is %d bytes, expected.encoded_len %d", len(v.encoded), *e.EncodedLen)
			}
			if e.RawFallback != nil && (v.encoded[0] == 0xff) != *e.RawFallback {
				t.Errorf("raw form = %v, expected.raw_fallback %v", v.encoded[0] == 0xff, *e.RawFallback)
			}
			if e.PaddingBits != nil && int(v.encoded[0]) != *e.PaddingBits {
				t.Errorf("padding = %d, expected.padding_bits %d", v.encoded[0], *e.PaddingBits)
			}
			if e.HuffmanBits != nil && codeBits(v.plain) != *e.HuffmanBits {
				t.Errorf("code bits = %d, expected.huffman_bits %d", codeBits(v.plain), *e.HuffmanBits)
			}
		})
	}
}

func TestTreeMatchesSpec(t *testing.T) {
	want := mustHex(t, strings.TrimSpace(string(readSpec(t, "huffman-tree.hex"))))
	if !bytes.Equal(serializedTree[:], want) {
		t.Fatalf("embedded tree differs from huffman-tree.hex")
	}
	if got := buildRefTree(&frequencies).serialize(); !bytes.Equal(got, want) {
		t.Fatalf("tree built from the frequencies serializes to\n%x\nwant\n%x", got, want)
	}
}

func TestFrequenciesMatchSpec(t *testing.T) {
	lines := strings.Fields(string(readSpec(t, "huffman-freq.txt")))
	if len(lines) != 256 {
		t.Fatalf("huffman-freq.txt has %d values, want 256", len(lines))
	}
	for i, s := range lines {
		var f float32
		if err := json.Unmarshal([]byte(s), &f); err != nil {
			t.Fatal(err)
		}
		if f != frequencies[i] {
			t.Errorf("frequency of %d = %v, spec %s", i, frequencies[i], s)
		}
	}
}

// codesFromTables renders encTable in the layout of huffman-codes.txt.
func codesFromTables() string {
	var t refTree
	for sym, e := range encTable {
		code, n := e>>4, int(e&15)
		var sb strings.Builder
		for i := 0; i < n; i++ { // encTable holds the code bit-reversed
			sb.WriteByte('0' + byte(code>>i&1))
		}
		t.codes[sym] = sb.String()
	}
	return t.codesText()
}

func TestCodesMatchSpec(t *testing.T) {
	got := codesFromTables()
	if want := buildRefTree(&frequencies).codesText(); got != want {
		t.Fatal("encTable disagrees with the codes of the tree built from the frequencies")
	}
	if want := string(readSpec(t, "huffman-codes.txt")); got != want {
		t.Fatalf("codes differ from huffman-codes.txt:\n%s", got)
	}
}

func TestTables(t *testing.T) {
	if e := encTable[0x00]; e != 0b010<<4|3 { // root-first 010 is 010 reversed
		t.Errorf("code of 0x00 = %#x, want 3 bits 010", e)
	}
	if e := encTable[0xff]; e&15 != 9 {
		t.Errorf("code of 0xff is %d bits, want 9", e&15)
	}
	// Every slot decodes back to the symbol whose code is its low bits.
	for idx, e := range decTable {
		sym, n := e>>8, e&0xff
		if enc := encTable[sym]; enc&15 != n || uint16(idx)&(1<<n-1) != enc>>4 {
			t.Fatalf("decTable[%#x] = symbol %d/%d bits, encTable says %#x", idx, sym, n, enc)
		}
	}
}

// TestMultiTable checks every multi-code entry against decoding its index
// code by code with decTable: it takes codes while they end within the
// index's multiBits bits, at most multiMaxCodes of them.
func TestMultiTable(t *testing.T) {
	initMultiTable()
	mt := &multiTab
	for idx, e := range mt {
		var want uint64
		n, c := 0, 0
		for c < multiMaxCodes {
			d := decTable[idx>>n&tableMask]
			l := int(d & 0xff)
			if n+l > multiBits {
				break
			}
			// The decoded code really is the index's next bits.
			if code := encTable[d>>8]; uint16(idx>>n)&(1<<l-1) != code>>4 || int(code&15) != l {
				t.Fatalf("multiTable[%#x]: code %d does not match", idx, c)
			}
			want |= uint64(d>>8) << (16 + 8*c)
			n += l
			c++
		}
		want |= uint64(c)<<8 | uint64(n)
		if e != want {
			t.Fatalf("multiTable[%#x] = %#x, want %#x", idx, e, want)
		}
	}
	// Five 4-bit codes 0000 (byte 0x80) in 16 zero bits would be 20 bits.
	if e := mt[0]; e != 0x80808080_0410 {
		t.Errorf("multiTable[0] = %#x, want four 0x80", e)
	}
	var bad multiTable
	dec := decTable
	dec[5] = dec[5]&0xff00 | 2 // a code shorter than minCodeLen
	if err := buildMultiTable(&bad, &dec, &encTable); err == nil {
		t.Error("buildMultiTable accepted an inconsistent single-code table")
	}
}

func TestBuildTablesRejects(t *testing.T) {
	good := serializedTree[:]
	with := func(edit func(b []byte) []byte) []byte {
		return edit(append([]byte(nil), good...))
	}
	tests := []struct {
		name string
		tree []byte
	}{
		{"empty", nil},
		{"truncated", good[:510]},
		{"truncated at a leaf", good[:4]},
		{"trailing byte", with(func(b []byte) []byte { return append(b, 0) })},
		{"descriptor above 3", with(func(b []byte) []byte { b[0] = 4; return b })},
		// the first leaf, 0x80 at depth 4, repeated in place of 0x26
		{"duplicate leaf", with(func(b []byte) []byte { b[9] = 0x80; return b })},
		{"too deep", bytes.Repeat([]byte{0}, 511)},
		{"code too short", append([]byte{3, 1, 2}, good[3:]...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dec [tableSize]uint16
			var enc [256]uint16
			err := buildTables(tc.tree, &dec, &enc)
			if err == nil || !strings.Contains(err.Error(), errBadTree.Error()) {
				t.Fatalf("buildTables = %v, want an invalid-tree error", err)
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		var dec [tableSize]uint16
		var enc [256]uint16
		if err := buildTables(good, &dec, &enc); err != nil || dec != decTable || enc != encTable {
			t.Fatalf("buildTables(embedded tree) = %v or different tables", err)
		}
	})
}

func TestDecode(t *testing.T) {
	zeros := make([]byte, MaxDecoded+1)
	tests := []struct {
		name    string
		src     []byte
		want    []byte
		err     error
		offset  int
		wantLen int // checked instead of want when want is nil and wantLen > 0
	}{
		{name: "empty datagram", src: nil, err: ErrEmpty, offset: 0},
		{name: "lone ff (legacy empty)", src: []byte{0xff}, want: []byte{}},
		{name: "lone 00 (current empty)", src: []byte{0x00}, want: []byte{}},
		{name: "lone 07: padding beyond the data clamps to nothing", src: []byte{0x07}, want: []byte{}},
		{name: "41", src: []byte{0x00, 0x9c}, want: []byte{0x41}},
		{name: "ff ff", src: []byte{0xff, 0xff}, want: []byte{0xff}},
		{name: "garbage in the padding of 00", src: []byte{0x05, 0xfa}, want: []byte{0x00}},
		{name: "byte0 8 removes the only byte", src: []byte{0x08, 0x9c}, want: []byte{}},
		{name: "byte0 200 clamps at zero bits", src: []byte{200, 0x9c, 0x9c}, want: []byte{}},
		{name: "byte0 8 keeps one of two bytes", src: []byte{0x08, 0x9c, 0x55}, want: []byte{0x41}},
		{name: "byte0 10 ends inside the first code", src: []byte{10, 0x9c, 0x9c}, want: []byte{}, err: ErrIncompleteCode, offset: 1},
		{name: "7 of 8 bits of 41", src: []byte{0x01, 0x9c}, want: []byte{}, err: ErrIncompleteCode, offset: 1},
		{name: "41 then 7 bits of 41", src: []byte{0x01, 0x9c, 0x9c}, want: []byte{0x41}, err: ErrIncompleteCode, offset: 2},
		{name: "raw at the limit", src: append([]byte{0xff}, zeros[:MaxDecoded]...), wantLen: MaxDecoded},
		{name: "raw beyond the limit", src: append([]byte{0xff}, zeros...), wantLen: MaxDecoded, err: ErrTooLong, offset: 1 + MaxDecoded},
		{name: "huffman at the limit", src: Encode(nil, zeros[:MaxDecoded]), wantLen: MaxDecoded},
		// 21847 codes of 3 bits: the extra code starts at bit 65538, in byte 1+8192.
		{name: "huffman beyond the limit", src: Encode(nil, zeros), wantLen: MaxDecoded, err: ErrTooLong, offset: 1 + MaxDecoded*3/8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(nil, tc.src)
			if tc.want != nil && !bytes.Equal(got, tc.want) {
				t.Errorf("Decode(%x) = %x, want %x", tc.src, got, tc.want)
			}
			if tc.want == nil && len(got) != tc.wantLen {
				t.Errorf("Decode returned %d bytes, want %d", len(got), tc.wantLen)
			}
			checkErr(t, err, tc.err, tc.offset)
			ref, rerr := refDecode(nil, tc.src)
			if !bytes.Equal(ref, got) || !sameError(rerr, err) {
				t.Errorf("reference decoder: %x, %v; table decoder: %x, %v", ref, rerr, got, err)
			}
		})
	}
}

func checkErr(t *testing.T, err, want error, offset int) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, want) || e.Offset != offset {
		t.Fatalf("err = %v, want *Error{%d, %v}", err, offset, want)
	}
}

func sameError(a, b error) bool {
	var ea, eb *Error
	if errors.As(a, &ea) != errors.As(b, &eb) {
		return false
	}
	return ea == nil || *ea == *eb
}

func TestErrorMessage(t *testing.T) {
	_, err := Decode(nil, []byte{0x01, 0x9c})
	want := "huffman: bit stream ends inside a code at offset 1"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestDecodeAppends(t *testing.T) {
	dst := []byte("prefix")
	got, err := Decode(dst, []byte{0x00, 0x9c})
	if err != nil || string(got) != "prefixA" {
		t.Fatalf("Decode(prefix, 00 9c) = %q, %v", got, err)
	}
	got = Encode([]byte("x"), []byte{0x41})
	if !bytes.Equal(got, []byte{'x', 0x00, 0x9c}) {
		t.Fatalf("Encode(x, 41) = %x", got)
	}
	got = Encode([]byte("x"), []byte{0xff})
	if !bytes.Equal(got, []byte{'x', 0xff, 0xff}) {
		t.Fatalf("Encode(x, ff) = %x", got)
	}
}

// TestPrefixes cuts every vector's datagrams at every length: each prefix
// decodes without panicking to a prefix of the payload, with an error
// whose offset lies inside the prefix or with none.
func TestPrefixes(t *testing.T) {
	for _, v := range loadVectors(t) {
		for _, src := range [][]byte{v.encoded, v.legacy} {
			for i := 0; i <= len(src); i++ {
				p := src[:i]
				got, err := Decode(nil, p)
				if !bytes.HasPrefix(v.plain, got) {
					t.Fatalf("%s: Decode(%x) = %x, not a prefix of %x", v.Name, p, got, v.plain)
				}
				var e *Error
				if err != nil && (!errors.As(err, &e) || e.Offset > i) {
					t.Fatalf("%s: Decode(%x): error %v beyond the prefix", v.Name, p, err)
				}
				ref, rerr := refDecode(nil, p)
				if !bytes.Equal(ref, got) || !sameError(rerr, err) {
					t.Fatalf("%s: Decode(%x) = %x, %v; reference %x, %v", v.Name, p, got, err, ref, rerr)
				}
			}
		}
	}
}

// randomPayload returns n bytes drawn either uniformly (mostly raw form)
// or from the code's own distribution (mostly Huffman form).
func randomPayload(r *rand.Rand, n int) []byte {
	return randomBytes(r, n, r.IntN(2) == 0)
}

func randomBytes(r *rand.Rand, n int, skewed bool) []byte {
	b := make([]byte, n)
	for i := range b {
		if skewed {
			// Random bits decoded: each symbol comes with probability
			// 2^-len, the distribution the code is optimal for.
			b[i] = byte(decTable[r.IntN(tableSize)] >> 8)
		} else {
			b[i] = byte(r.IntN(256))
		}
	}
	return b
}

func TestAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		p := randomPayload(r, r.IntN(300))
		for _, legacy := range []bool{false, true} {
			want := refEncode(nil, p, legacy)
			got := Encode(nil, p)
			if legacy {
				got = EncodeLegacy(nil, p)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("legacy=%v: encoding of %x = %x, reference %x", legacy, p, got, want)
			}
			dec, err := Decode(nil, got)
			if err != nil || !bytes.Equal(dec, p) {
				t.Fatalf("Decode(%x) = %x, %v; want %x", got, dec, err, p)
			}
			if got[0] != 0xff && got[0] > 0 {
				// Fill the padding with garbage, as legacy servers did.
				g := bytes.Clone(got)
				g[len(g)-1] |= byte(0xff << (8 - g[0]))
				dec, err := Decode(nil, g)
				if err != nil || !bytes.Equal(dec, p) {
					t.Fatalf("Decode(%x) with padding garbage = %x, %v; want %x", g, dec, err, p)
				}
			}
		}
		// Arbitrary datagrams: same output and same error as the reference.
		src := make([]byte, r.IntN(80))
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		if len(src) > 0 && r.IntN(2) == 0 {
			src[0] = byte(r.IntN(8))
		}
		got, err := Decode(nil, src)
		ref, rerr := refDecode(nil, src)
		if !bytes.Equal(got, ref) || !sameError(err, rerr) {
			t.Fatalf("Decode(%x) = %x, %v; reference %x, %v", src, got, err, ref, rerr)
		}
	}
}

func TestIsLegacy(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		want bool
	}{
		{"empty datagram", nil, false},
		{"lone ff: legacy empty payload", []byte{0xff}, true},
		{"lone 00: current empty payload", []byte{0x00}, false},
		{"ff 00: legacy form of 00 (3 bits fit in 1 byte)", []byte{0xff, 0x00}, true},
		{"ff 41: legacy form of 41 (8 bits fit in 1 byte)", []byte{0xff, 0x41}, true},
		{"ff ff: both rules send 0xff raw (9 bits)", []byte{0xff, 0xff}, false},
		{"ff 00 00: neither rule (6 bits fit in 1 byte)", []byte{0xff, 0x00, 0x00}, false},
		{"huffman form", []byte{0x05, 0x02}, false},
		{"huffman form with padding garbage", []byte{0x05, 0xfa}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsLegacy(tc.src); got != tc.want {
				t.Fatalf("IsLegacy(%x) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	var response vector
	for _, v := range loadVectors(t) {
		if strings.HasPrefix(v.Name, "realistic") {
			response = v
		}
	}
	if response.plain == nil {
		t.Fatal("no realistic vector")
	}
	raw := bytes.Repeat([]byte{0xff}, 100)
	rawForm := Encode(nil, raw)
	buf := make([]byte, 0, 1024)
	tests := []struct {
		name string
		f    func()
	}{
		{"Decode huffman", func() { buf, _ = Decode(buf[:0], response.encoded) }},
		{"Decode raw", func() { buf, _ = Decode(buf[:0], rawForm) }},
		{"Encode huffman", func() { buf = Encode(buf[:0], response.plain) }},
		{"Encode raw", func() { buf = Encode(buf[:0], raw) }},
		{"EncodeLegacy", func() { buf = EncodeLegacy(buf[:0], response.plain) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tc.f); n != 0 {
				t.Fatalf("%v allocations per run, want 0", n)
			}
		})
	}
}

// TestDecodeSplit covers both outcomes of the two-halves decoder: the
// halves resynchronise (the usual case) or they do not and decoding falls
// back to the first half's state: in a long run of 3-bit 0x00 codes or
// 8-bit 0x41 codes split inside a code, the second half's parse stays out
// of phase.
func TestDecodeSplit(t *testing.T) {
	initMultiTable()
	r := rand.New(rand.NewPCG(3, 4))
	mixed := randomBytes(r, 4000, true)
	// run returns k copies of lead (8-bit code 0x41 or 3-bit code 0x00,
	// whichever c is not) followed by about 2000 copies of c, whose code
	// is l bits long, with k and the count chosen so that decodeSplit's
	// split point m falls phase bits into a code of the run.
	run := func(c byte, l, phase int) []byte {
		lead, ll := byte(0x41), 8
		if c == 0x41 {
			lead, ll = 0, 3
		}
		for k := range 8 {
			for n := 2000; n < 2000+l; n++ {
				total := ll*k + l*n
				if m := (total - overshoot) / 2; m >= ll*k && (m-ll*k)%l == phase {
					return append(bytes.Repeat([]byte{lead}, k), bytes.Repeat([]byte{c}, n)...)
				}
			}
		}
		t.Fatalf("no run of %#x splits %d bits into a code", c, phase)
		return nil
	}
	tests := []struct {
		name   string
		plain  []byte
		synced bool
	}{
		{"mixed payload", mixed, true},
		{"0x41 run split on a code boundary", run(0x41, 8, 0), true},
		{"0x41 run split 1 bit into a code", run(0x41, 8, 1), false},
		{"zero run split on a code boundary", run(0, 3, 0), true},
		{"zero run split 1 bit into a code", run(0, 3, 1), false},
		{"zero run split 2 bits into a code", run(0, 3, 2), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := Encode(nil, tc.plain)
			if src[0] == 0xff {
				t.Fatal("payload encodes raw")
			}
			data := src[1:]
			total := len(data)*8 - int(src[0])
			out := make([]byte, total/minCodeLen)
			o, pos := decodeSplit(out, data, total)
			// Without a common boundary, A stops within one table entry
			// after B's last recorded batch boundary.
			m := (total - overshoot) / 2
			if synced := pos > m+maxEdges*batchBits; synced != tc.synced {
				t.Errorf("decodeSplit stopped at bit %d of %d (m = %d): synced = %v, want %v", pos, total, m, synced, tc.synced)
			}
			if !bytes.HasPrefix(tc.plain, out[:o]) {
				t.Fatalf("decodeSplit output is not a prefix of the payload")
			}
			got, err := Decode(nil, src)
			if err != nil || !bytes.Equal(got, tc.plain) {
				t.Fatalf("Decode = %d bytes, %v; want the %d-byte payload", len(got), err, len(tc.plain))
			}
		})
	}
}

// TestDecodeLong checks payloads up to the largest Zandronum packet
// against the reference decoder, through both fast decoders.
func TestDecodeLong(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		p := randomPayload(r, 100+r.IntN(8000))
		if i%3 == 0 { // long runs, as in real packets' zero fields
			for j := r.IntN(len(p)); j < len(p) && r.IntN(200) != 0; j++ {
				p[j] = 0
			}
		}
		src := Encode(nil, p)
		got, err := Decode(nil, src)
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("Decode(Encode(%d bytes)) = %d bytes, %v", len(p), len(got), err)
		}
		// Cut the stream short: the same partial output and error as the reference.
		cut := src[:1+r.IntN(len(src)-1)]
		got, err = Decode(nil, cut)
		ref, rerr := refDecode(nil, cut)
		if !bytes.Equal(got, ref) || !sameError(err, rerr) {
			t.Fatalf("Decode(%d-byte prefix) = %d bytes, %v; reference %d bytes, %v", len(cut), len(got), err, len(ref), rerr)
		}
	}
}
