package huffman

import (
	"strconv"
	"strings"
	"testing"
)

// This file holds a spec-literal model of the codec: the tree built from
// the frequency table exactly as docs/protocols/huffman.md 1.3 describes, a bit-by-bit
// tree-walk decoder and a bit-at-a-time encoder. The tests check the
// table-driven code against it, and the benchmarks use it as the baseline.

// frequencies is g_FrequencyTable from the Skulltag-era src/huffman.cpp
// (testdata/huffman-freq.txt), byte 0 first.
var frequencies = [256]float32{
	0.14473691, 0.01147017, 0.00167522, 0.03831121, 0.00356579, 0.03811315, 0.00178254, 0.00199644, // 0x00
	0.00183511, 0.00225716, 0.00211240, 0.00308829, 0.00172852, 0.00186608, 0.00215921, 0.00168891, // 0x08
	0.00168603, 0.00218586, 0.00284414, 0.00161833, 0.00196043, 0.00151029, 0.00173932, 0.00218370, // 0x10
	0.00934121, 0.00220530, 0.00381211, 0.00185456, 0.00194675, 0.00161977, 0.00186680, 0.00182071, // 0x18
	0.06421956, 0.00537786, 0.00514019, 0.00487155, 0.00493925, 0.00503143, 0.00514019, 0.00453520, // 0x20
	0.00454241, 0.00485642, 0.00422407, 0.00593387, 0.00458130, 0.00343687, 0.00342823, 0.00531592, // 0x28
	0.00324890, 0.00333388, 0.00308613, 0.00293776, 0.00258918, 0.00259278, 0.00377105, 0.00267488, // 0x30
	0.00227516, 0.00415997, 0.00248763, 0.00301555, 0.00220962, 0.00206990, 0.00270369, 0.00231694, // 0x38
	0.00273826, 0.00450928, 0.00384380, 0.00504728, 0.00221251, 0.00376961, 0.00232990, 0.00312574, // 0x40
	0.00291688, 0.00280236, 0.00252436, 0.00229461, 0.00294353, 0.00241201, 0.00366590, 0.00199860, // 0x48
	0.00257838, 0.00225860, 0.00260646, 0.00187256, 0.00266552, 0.00242641, 0.00219450, 0.00192082, // 0x50
	0.00182071, 0.02185930, 0.00157439, 0.00164353, 0.00161401, 0.00187544, 0.00186248, 0.03338637, // 0x58
	0.00186968, 0.00172132, 0.00148509, 0.00177749, 0.00144620, 0.00192442, 0.00169683, 0.00209439, // 0x60
	0.00209439, 0.00259062, 0.00194531, 0.00182359, 0.00159096, 0.00145196, 0.00128199, 0.00158376, // 0x68
	0.00171412, 0.00243433, 0.00345704, 0.00156359, 0.00145700, 0.00157007, 0.00232342, 0.00154198, // 0x70
	0.00140730, 0.00288807, 0.00152830, 0.00151246, 0.00250203, 0.00224420, 0.00161761, 0.00714383, // 0x78
	0.08188576, 0.00802537, 0.00119484, 0.00123805, 0.05632671, 0.00305156, 0.00105584, 0.00105368, // 0x80
	0.00099246, 0.00090459, 0.00109473, 0.00115379, 0.00261223, 0.00105656, 0.00124381, 0.00100326, // 0x88
	0.00127550, 0.00089739, 0.00162481, 0.00100830, 0.00097229, 0.00078864, 0.00107240, 0.00084409, // 0x90
	0.00265760, 0.00116891, 0.00073102, 0.00075695, 0.00093916, 0.00106880, 0.00086786, 0.00185600, // 0x98
	0.00608367, 0.00133600, 0.00075695, 0.00122077, 0.00566955, 0.00108249, 0.00259638, 0.00077063, // 0xa0
	0.00166586, 0.00090387, 0.00087074, 0.00084914, 0.00130935, 0.00162409, 0.00085922, 0.00093340, // 0xa8
	0.00093844, 0.00087722, 0.00108249, 0.00098598, 0.00095933, 0.00427593, 0.00496661, 0.00102775, // 0xb0
	0.00159312, 0.00118404, 0.00114947, 0.00104936, 0.00154342, 0.00140082, 0.00115883, 0.00110769, // 0xb8
	0.00161112, 0.00169107, 0.00107816, 0.00142747, 0.00279804, 0.00085922, 0.00116315, 0.00119484, // 0xc0
	0.00128559, 0.00146204, 0.00130215, 0.00101551, 0.00091756, 0.00161184, 0.00236375, 0.00131872, // 0xc8
	0.00214120, 0.00088875, 0.00138570, 0.00211960, 0.00094060, 0.00088083, 0.00094564, 0.00090243, // 0xd0
	0.00106160, 0.00088659, 0.00114514, 0.00095861, 0.00108753, 0.00124165, 0.00427016, 0.00159384, // 0xd8
	0.00170547, 0.00104431, 0.00091395, 0.00095789, 0.00134681, 0.00095213, 0.00105944, 0.00094132, // 0xe0
	0.00141883, 0.00102127, 0.00101911, 0.00082105, 0.00158448, 0.00102631, 0.00087938, 0.00139290, // 0xe8
	0.00114658, 0.00095501, 0.00161329, 0.00126542, 0.00113218, 0.00123661, 0.00101695, 0.00112930, // 0xf0
	0.00317976, 0.00085346, 0.00101190, 0.00189849, 0.00105728, 0.00186824, 0.00092908, 0.00160896, // 0xf8
}

// refTree is a code tree: nodes 0..255 are the leaves for those byte
// values, nodes 256.. are internal with child[n-256] = {zero, one}.
type refTree struct {
	child [255][2]int
	root  int
	codes [256]string // root-first, "0"/"1"
}

func isLeaf(n int) bool { return n < 256 }

// buildRefTree follows docs/protocols/huffman.md 1.3: float32 weights, 255 merges, each
// scanning the slots in index order with strict < so that on ties the
// lower slot becomes the smallest, zero-child = second smallest,
// one-child = smallest, the new node stored in the smallest's slot.
func buildRefTree(freq *[256]float32) *refTree {
	t := &refTree{}
	var slot [256]int
	var weight [256]float32
	used := [256]bool{}
	for i := range slot {
		slot[i], weight[i], used[i] = i, freq[i], true
	}
	for k := 0; k < 255; k++ {
		min1, min2 := float32(1e30), float32(1e30)
		at1, at2 := -1, -1
		for j := 0; j < 256; j++ {
			if !used[j] {
				continue
			}
			if weight[j] < min1 {
				at2, min2 = at1, min1
				at1, min1 = j, weight[j]
			} else if weight[j] < min2 {
				at2, min2 = j, weight[j]
			}
		}
		n := 256 + k
		t.child[k] = [2]int{slot[at2], slot[at1]}
		slot[at1], weight[at1] = n, weight[at2]+weight[at1]
		used[at2] = false
		t.root = n
	}
	t.assign(t.root, "")
	return t
}

// parseRefTree reads the serialized form (docs/protocols/huffman.md 1.4) into a refTree.
func parseRefTree(b []byte) *refTree {
	t := &refTree{}
	next := 256
	var parse func() int
	parse = func() int {
		desc := b[0]
		b = b[1:]
		n := next
		next++
		for c := 0; c < 2; c++ {
			if desc&(1<<c) != 0 {
				t.child[n-256][c] = int(b[0])
				b = b[1:]
			} else {
				t.child[n-256][c] = parse()
			}
		}
		return n
	}
	t.root = parse()
	t.assign(t.root, "")
	return t
}

func (t *refTree) assign(n int, code string) {
	if isLeaf(n) {
		t.codes[n] = code
		return
	}
	t.assign(t.child[n-256][0], code+"0")
	t.assign(t.child[n-256][1], code+"1")
}

// serialize writes the tree in the format of docs/protocols/huffman.md 1.4.
func (t *refTree) serialize() []byte {
	var out []byte
	var walk func(n int)
	walk = func(n int) {
		z, o := t.child[n-256][0], t.child[n-256][1]
		var desc byte
		if isLeaf(z) {
			desc |= 1
		}
		if isLeaf(o) {
			desc |= 2
		}
		out = append(out, desc)
		for _, c := range []int{z, o} {
			if isLeaf(c) {
				out = append(out, byte(c))
			} else {
				walk(c)
			}
		}
	}
	walk(t.root)
	return out
}

// codesText renders the codes in the layout of testdata/huffman-codes.txt.
func (t *refTree) codesText() string {
	var sb strings.Builder
	sb.WriteString("# byte_value code_length code_bits(root-first)\n")
	for i, c := range t.codes {
		sb.WriteString(strconv.Itoa(i) + " " + strconv.Itoa(len(c)) + " " + c + "\n")
	}
	return sb.String()
}

var specTree = parseRefTree(serializedTree[:])

// refDecode decodes one bit at a time by walking specTree, with the
// contract of Decode (same output, same errors).
func refDecode(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst, &Error{Offset: 0, Err: ErrEmpty}
	}
	if src[0] == 0xff {
		for i, c := range src[1:] {
			if i == MaxDecoded {
				return dst, &Error{Offset: 1 + i, Err: ErrTooLong}
			}
			dst = append(dst, c)
		}
		return dst, nil
	}
	total := (len(src)-1)*8 - int(src[0])
	produced, start, n := 0, 0, specTree.root
	for i := 0; i < total; i++ {
		bit := src[1+i/8] >> (i % 8) & 1
		n = specTree.child[n-256][bit]
		if isLeaf(n) {
			if produced == MaxDecoded {
				return dst, &Error{Offset: 1 + start/8, Err: ErrTooLong}
			}
			dst = append(dst, byte(n))
			produced++
			n, start = specTree.root, i+1
		}
	}
	if n != specTree.root {
		return dst, &Error{Offset: 1 + start/8, Err: ErrIncompleteCode}
	}
	return dst, nil
}

// refEncode encodes one bit at a time from specTree's codes with either
// raw-form rule of docs/protocols/huffman.md 1.5.
func refEncode(dst, src []byte, legacy bool) []byte {
	if len(src) == 0 {
		if legacy {
			return append(dst, 0xff)
		}
		return append(dst, 0)
	}
	var bits []byte
	nbits := 0
	for _, c := range src {
		for _, b := range specTree.codes[c] {
			if nbits%8 == 0 {
				bits = append(bits, 0)
			}
			if b == '1' {
				bits[nbits/8] |= 1 << (nbits % 8)
			}
			nbits++
		}
	}
	n, k := len(src), len(bits)
	if (!legacy && k > n) || (legacy && 1+k >= n+1) {
		return append(append(dst, 0xff), src...)
	}
	return append(append(dst, byte(k*8-nbits)), bits...)
}

func TestRefTreeFromFrequencies(t *testing.T) {
	built := buildRefTree(&frequencies)
	if got := built.serialize(); string(got) != string(serializedTree[:]) {
		t.Fatalf("tree built from frequencies serializes to\n%x\nwant\n%x", got, serializedTree)
	}
	if built.codes != specTree.codes {
		t.Fatal("codes of the built tree differ from the parsed tree's")
	}
}
