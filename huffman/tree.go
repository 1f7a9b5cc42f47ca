package huffman

import (
	"errors"
	"strconv"
	"sync"
)

// Code-length limits of the Zandronum code. The decoder's single-code
// lookup table is indexed by the next maxCodeLen bits, and the output bound
// used to size dst divides the bit count by minCodeLen. Both are checked
// against the tree when the tables are built.
const (
	minCodeLen = 3
	maxCodeLen = 10
	tableSize  = 1 << maxCodeLen
	tableMask  = tableSize - 1

	// The fast decoder's table is indexed by multiBits bits (so the index
	// is simply the low 16 bits of the bit buffer) and decodes every code
	// that ends within them, up to multiMaxCodes of them.
	multiBits     = 16
	multiMaxCodes = multiBits / minCodeLen
)

// serializedTree is the code tree exactly as Zandronum ships it since 2013
// (HUFFMAN_Construct in src/huffman/huffman.cpp; testdata/huffman-tree.hex).
// Layout, in pre-order with the zero subtree before the one subtree: every
// internal node is a descriptor byte whose bit 0 says "zero-child is a leaf"
// and bit 1 says "one-child is a leaf"; after it comes child 0 and then
// child 1, a leaf as its byte value, an internal child as its own subtree.
// It is the tree docs/protocols/huffman.md 1.3 builds from the frequency table; the tests
// rebuild it that way and compare.
var serializedTree = [511]byte{
	0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00, 0x03, 0x26, 0x22, 0x02, 0x01, 0x50, 0x03, 0x6e,
	0x90, 0x43, 0x00, 0x02, 0x01, 0x4a, 0x03, 0xf3, 0x8e, 0x25, 0x02, 0x03, 0x7c, 0x3a, 0xb6, 0x00,
	0x00, 0x01, 0x24, 0x00, 0x03, 0xdd, 0x83, 0x03, 0xf5, 0xa3, 0x01, 0x23, 0x03, 0x71, 0x55, 0x00,
	0x01, 0x29, 0x01, 0x4d, 0x03, 0xc7, 0x82, 0x00, 0x01, 0xce, 0x03, 0xb9, 0x99, 0x03, 0x46, 0x76,
	0x00, 0x03, 0x03, 0x05, 0x00, 0x00, 0x01, 0x18, 0x00, 0x02, 0x03, 0xc6, 0xbe, 0x3f, 0x02, 0x03,
	0x8b, 0xba, 0x4b, 0x00, 0x01, 0x2c, 0x02, 0x03, 0xf0, 0xda, 0x38, 0x03, 0x28, 0x27, 0x00, 0x00,
	0x02, 0x02, 0x03, 0xf4, 0xf7, 0x51, 0x41, 0x00, 0x03, 0x09, 0x7d, 0x03, 0x44, 0x3c, 0x00, 0x00,
	0x01, 0x19, 0x03, 0xbf, 0x8a, 0x03, 0x56, 0x11, 0x00, 0x01, 0x17, 0x03, 0xdc, 0xb2, 0x02, 0x03,
	0xa5, 0xc2, 0x0e, 0x01, 0x00, 0x02, 0x02, 0x00, 0x00, 0x02, 0x01, 0xd0, 0x03, 0x96, 0x9d, 0xb5,
	0x01, 0xde, 0x02, 0x03, 0xd8, 0xe6, 0xd3, 0x00, 0x02, 0x02, 0x03, 0xfc, 0x8d, 0x0a, 0x2a, 0x00,
	0x02, 0x03, 0x86, 0x87, 0x68, 0x01, 0x67, 0x03, 0xbb, 0xe1, 0x5f, 0x20, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x01, 0x39, 0x01, 0x3d, 0x03, 0xb7, 0xed, 0x00, 0x00, 0x03, 0xe9, 0xea, 0x03, 0xf6,
	0xcb, 0x02, 0x03, 0xfa, 0x93, 0x4f, 0x01, 0x81, 0x00, 0x01, 0x07, 0x03, 0x8f, 0x88, 0x01, 0x14,
	0x03, 0xb3, 0x94, 0x00, 0x00, 0x00, 0x03, 0x1c, 0x6a, 0x03, 0x65, 0x57, 0x01, 0x42, 0x00, 0x03,
	0xb4, 0xdb, 0x03, 0xe3, 0xf1, 0x00, 0x01, 0x1a, 0x01, 0xfb, 0x03, 0xe5, 0xd6, 0x03, 0x36, 0x45,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe7, 0xd4, 0x03, 0x9c, 0xb0, 0x03, 0x5d, 0x53, 0x00, 0x03,
	0x60, 0xfd, 0x03, 0x1e, 0x0d, 0x00, 0x00, 0x02, 0x03, 0xaf, 0xfe, 0x5e, 0x03, 0x9f, 0x1b, 0x02,
	0x01, 0x08, 0x03, 0xcc, 0xe2, 0x4e, 0x00, 0x00, 0x00, 0x03, 0x6b, 0x58, 0x01, 0x1f, 0x03, 0x89,
	0xa9, 0x02, 0x02, 0x03, 0xd7, 0x91, 0x06, 0x04, 0x01, 0x7f, 0x00, 0x01, 0x63, 0x03, 0xd1, 0xd9,
	0x00, 0x03, 0xd5, 0xee, 0x03, 0xb1, 0xaa, 0x01, 0x84, 0x00, 0x00, 0x00, 0x02, 0x03, 0x16, 0x0c,
	0x72, 0x02, 0x02, 0x03, 0x9e, 0xc5, 0x61, 0x2d, 0x00, 0x01, 0x2e, 0x01, 0x70, 0x03, 0xae, 0xf9,
	0x00, 0x03, 0xe0, 0x66, 0x02, 0x03, 0xab, 0x97, 0xc1, 0x00, 0x00, 0x00, 0x03, 0x0f, 0x10, 0x03,
	0x02, 0xa8, 0x01, 0x31, 0x03, 0x5b, 0x92, 0x00, 0x01, 0x30, 0x03, 0xad, 0x1d, 0x00, 0x03, 0x13,
	0x7e, 0x03, 0x5c, 0xf2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcd, 0xc0, 0x02, 0x03, 0xeb,
	0x95, 0xff, 0x02, 0x03, 0xdf, 0xb8, 0xf8, 0x00, 0x00, 0x03, 0x6c, 0xec, 0x03, 0x6f, 0x5a, 0x02,
	0x03, 0x75, 0x73, 0x47, 0x00, 0x00, 0x03, 0x0b, 0x32, 0x00, 0x03, 0xbc, 0x77, 0x01, 0x7a, 0x03,
	0xa7, 0xa2, 0x01, 0xa0, 0x01, 0x85, 0x03, 0x7b, 0x15, 0x00, 0x00, 0x02, 0x01, 0x3b, 0x02, 0x03,
	0x9b, 0x9a, 0x62, 0x2b, 0x00, 0x03, 0x4c, 0x33, 0x02, 0x03, 0xc9, 0x74, 0x48, 0x02, 0x00, 0x02,
	0x03, 0x6d, 0x64, 0x79, 0x02, 0x03, 0xc3, 0xe8, 0x12, 0x01, 0x00, 0x02, 0x00, 0x01, 0xa4, 0x02,
	0x03, 0x78, 0xbd, 0x49, 0x00, 0x01, 0xc4, 0x03, 0xef, 0xd2, 0x03, 0x40, 0x3e, 0x59, 0x00, 0x00,
	0x01, 0x21, 0x02, 0x03, 0xe4, 0xa1, 0x37, 0x02, 0x03, 0x54, 0x98, 0x2f, 0x00, 0x00, 0x02, 0x03,
	0xcf, 0xac, 0x8c, 0x03, 0x52, 0xa6, 0x00, 0x03, 0x35, 0x69, 0x01, 0x34, 0x03, 0xca, 0xc8,
}

// decTable maps the next maxCodeLen bits of the stream, least-significant
// bit first, to the symbol whose code is a prefix of them: entry =
// symbol<<8 | codeLen. A code of length L occupies the low L bits of the
// index, so it owns every index whose low L bits equal it: 1<<(10-L) slots.
var decTable [tableSize]uint16

// multiTable maps the next multiBits bits of the stream to all the whole
// codes at their start. An entry holds
//
//	bits  0..7   n, the total length of those codes (3..16)
//	bits  8..15  c, how many codes (1..5)
//	bits 16..55  their symbols, the first in bits 16..23 (zero beyond c)
//	bits 56..63  zero
//
// It is derived from decTable. Building it touches 512 KiB and takes about
// half a millisecond natively, two under wasm (BenchmarkMultiTable), so
// it is built by the first Decode of a Huffman-form datagram
// (initMultiTable) rather than at initialisation; see fast.go for how the
// decoder uses the layout.
type multiTable [1 << multiBits]uint64

var (
	multiTab       multiTable
	multiTableOnce sync.Once
)

// initMultiTable builds multiTab if that has not been done yet. Decode
// calls it before it uses the table.
func initMultiTable() {
	multiTableOnce.Do(buildMultiTab)
}

func buildMultiTab() {
	if err := buildMultiTable(&multiTab, &decTable, &encTable); err != nil {
		panic("huffman: embedded tree: " + err.Error())
	}
}

// encTable maps a byte to its code, already bit-reversed so that the first
// branch from the root is bit 0 (ready to be ORed into an LSB-first bit
// accumulator): entry = reversedCode<<4 | codeLen. Codes are at most 10
// bits, so an entry fits in 14 bits.
var encTable [256]uint16

func init() {
	if err := buildTables(serializedTree[:], &decTable, &encTable); err != nil {
		// The tree is a constant of this package, not input: a bad tree
		// is a programming error and must not ship.
		panic("huffman: embedded tree: " + err.Error())
	}
}

// buildMultiTable fills mt from a complete single-code table. The codes at
// index idx are found one after the other: the next one is dec[] of the
// index bits after the previous codes. Once fewer than maxCodeLen index
// bits remain, the high bits of that dec[] index are zeros rather than
// stream bits, which is harmless when the code found fits in the bits that
// remain: prefix-freeness makes it the only code matching them. A code
// that does not fit ends the entry. The first code always fits, since
// multiBits >= maxCodeLen.
//
// It checks what the decoder relies on: every entry holds 1..multiMaxCodes
// codes of minCodeLen..maxCodeLen bits, their lengths sum to n <= multiBits,
// and their codes, concatenated, are exactly the low n bits of the index.
func buildMultiTable(mt *multiTable, dec *[tableSize]uint16, enc *[256]uint16) error {
	for idx := range mt {
		var e uint64
		n, c := 0, 0
		for c < multiMaxCodes {
			d := dec[(idx>>n)&tableMask]
			l := int(d & 0xff)
			if n+l > multiBits {
				break
			}
			if l < minCodeLen || l > maxCodeLen || uint16(idx>>n)&(1<<l-1) != enc[d>>8]>>4 {
				return treeError("multi-code table entry "+strconv.Itoa(idx)+" is inconsistent", 0)
			}
			e |= uint64(d>>8) << (16 + 8*c)
			n += l
			c++
		}
		if c == 0 {
			return treeError("multi-code table entry "+strconv.Itoa(idx)+" is empty", 0)
		}
		mt[idx] = e | uint64(c)<<8 | uint64(n)
	}
	return nil
}

var errBadTree = errors.New("invalid serialized tree")

// buildTables parses a serialized tree and fills both tables, checking
// everything the decoder and encoder rely on: the tree is exactly the
// bytes given, every byte value is a leaf exactly once, every code is
// minCodeLen..maxCodeLen bits, and the codes fill the lookup table exactly
// (no slot twice, none empty: the code is complete, so decoding never meets
// an invalid bit pattern).
func buildTables(tree []byte, dec *[tableSize]uint16, enc *[256]uint16) error {
	var seen [256]bool
	p := treeParser{tree: tree, enc: enc, seen: &seen}
	p.node(0, 0)
	if p.err != nil {
		return p.err
	}
	if p.pos != len(tree) {
		return treeError("trailing bytes after the root's subtree", p.pos)
	}
	for sym, ok := range seen {
		if !ok {
			return treeError("byte value "+strconv.Itoa(sym)+" has no code", len(tree))
		}
	}
	var filled [tableSize]bool
	for sym, e := range enc {
		code, n := uint(e>>4), uint(e&15)
		// Every index whose low n bits equal the code decodes to sym;
		// the high 10-n bits are whatever follows in the stream.
		for hi := uint(0); hi < 1<<(maxCodeLen-n); hi++ {
			idx := code | hi<<n
			if filled[idx] {
				return treeError("code of byte "+strconv.Itoa(sym)+" is not prefix-free", 0)
			}
			filled[idx] = true
			dec[idx] = uint16(sym)<<8 | uint16(n)
		}
	}
	for _, ok := range filled {
		if !ok {
			return treeError("code is incomplete", 0)
		}
	}
	return nil
}

func treeError(what string, pos int) error {
	return errors.New(errBadTree.Error() + ": " + what + " at byte " + strconv.Itoa(pos))
}

type treeParser struct {
	tree []byte
	pos  int
	enc  *[256]uint16
	seen *[256]bool
	err  error
}

// node parses the internal node at p.pos whose path from the root is the
// depth bits of code (first branch in bit 0). Recursion is bounded by
// maxCodeLen because a deeper node is rejected before descending.
func (p *treeParser) node(code uint16, depth uint) {
	if p.err != nil {
		return
	}
	if depth >= maxCodeLen {
		p.err = treeError("code longer than "+strconv.Itoa(maxCodeLen)+" bits", p.pos)
		return
	}
	if p.pos >= len(p.tree) {
		p.err = treeError("truncated", p.pos)
		return
	}
	desc := p.tree[p.pos]
	if desc > 3 {
		p.err = treeError("descriptor "+strconv.Itoa(int(desc))+" is not 0..3", p.pos)
		return
	}
	p.pos++
	for child := uint16(0); child < 2; child++ {
		c := code | child<<depth
		if desc&(1<<child) == 0 {
			p.node(c, depth+1)
			continue
		}
		if p.pos >= len(p.tree) {
			p.err = treeError("truncated", p.pos)
			return
		}
		sym := p.tree[p.pos]
		n := depth + 1
		switch {
		case p.seen[sym]:
			p.err = treeError("byte value "+strconv.Itoa(int(sym))+" appears twice", p.pos)
		case n < minCodeLen:
			p.err = treeError("code shorter than "+strconv.Itoa(minCodeLen)+" bits", p.pos)
		}
		if p.err != nil {
			return
		}
		p.seen[sym] = true
		p.enc[sym] = c<<4 | uint16(n)
		p.pos++
	}
}
