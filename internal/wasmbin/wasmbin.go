// Package wasmbin reads what querylens's size tools need of a WebAssembly
// module (https://webassembly.github.io/spec/core/binary/modules.html): the
// section headers, the imported functions' count, the size of each function
// body and the function names of the "name" section. The benchmark's size
// section (bench/cmd/benchreport) and internal/cmd/wasmfuncs
// (scripts/family-size.sh) both read modules through it; their tests
// (bench/cmd/benchreport's size_test.go: a fixture module, every prefix of
// it, malformed headers and sections) exercise it.
package wasmbin

import (
	"errors"
	"fmt"
	"strconv"
)

// The section ids this package reads
// (https://webassembly.github.io/spec/core/binary/modules.html).
const (
	Custom = 0  // name, then contents; the "name" section holds function names
	Import = 2  // vec(module name, field name, import description)
	Code   = 10 // vec(body size, body)
	Data   = 11
)

// Module is what Parse reads of a module.
type Module struct {
	Sections []Section
	Imports  int            // imported functions: the first function indices
	Code     []int          // body sizes of the defined functions, in order
	Names    map[int]string // function index → name, from the name section
}

// Section is one section's header.
type Section struct {
	ID   byte
	Name string // of a custom section
	Size int    // contents, without the id and size bytes
}

// CodeBytes is the size of every function body.
func (m Module) CodeBytes() int {
	n := 0
	for _, c := range m.Code {
		n += c
	}
	return n
}

// SectionBytes is the size of the contents of the sections with id.
func (m Module) SectionBytes(id byte) int {
	n := 0
	for _, s := range m.Sections {
		if s.ID == id {
			n += s.Size
		}
	}
	return n
}

// ErrFormat is wrapped by every error of Parse.
var ErrFormat = errors.New("not a valid WebAssembly module")

// Parse reads the section headers, the imported functions, the code
// section's body sizes and the name section's function names. It reads
// nothing else and never panics on bad input.
func Parse(b []byte) (Module, error) {
	var m Module
	if len(b) < 8 || string(b[:4]) != "\x00asm" || string(b[4:8]) != "\x01\x00\x00\x00" {
		return m, fmt.Errorf("%w: no \\0asm version 1 header", ErrFormat)
	}
	r := reader{b: b, off: 8}
	for r.off < len(b) && r.err == nil {
		start := r.off
		id := r.byte()
		size := r.u32()
		body := r.bytes(size)
		if r.err != nil {
			return m, fmt.Errorf("%w: section at offset %d: %v", ErrFormat, start, r.err)
		}
		s := Section{ID: id, Size: len(body)}
		sr := reader{b: body}
		var err error
		switch id {
		case Custom:
			s.Name = sr.name()
			if sr.err == nil && s.Name == "name" {
				m.Names, err = parseNames(sr)
			}
			err = errors.Join(sr.err, err)
		case Import:
			m.Imports, err = parseImports(sr)
		case Code:
			m.Code, err = parseCode(sr)
		}
		if err != nil {
			return m, fmt.Errorf("%w: section %d at offset %d: %v", ErrFormat, id, start, err)
		}
		m.Sections = append(m.Sections, s)
	}
	return m, nil
}

// parseImports counts the imported functions.
func parseImports(r reader) (int, error) {
	funcs := 0
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0: // function: type index
			r.u32()
			funcs++
		case 1: // table: reference type, limits
			r.byte()
			r.limits()
		case 2: // memory: limits
			r.limits()
		case 3: // global: value type, mutability
			r.byte()
			r.byte()
		default:
			if r.err == nil {
				return funcs, errors.New("import kind " + strconv.Itoa(int(kind)) + " at offset " + strconv.Itoa(r.off-1))
			}
		}
	}
	return funcs, r.err
}

// parseCode returns the size of each function body.
func parseCode(r reader) ([]int, error) {
	n := r.u32()
	if r.err == nil && n > len(r.b) { // each body takes at least one byte
		return nil, errors.New(strconv.Itoa(n) + " function bodies in " + strconv.Itoa(len(r.b)) + " bytes")
	}
	sizes := make([]int, 0, n)
	for ; n > 0 && r.err == nil; n-- {
		sizes = append(sizes, len(r.bytes(r.u32())))
	}
	return sizes, r.err
}

// parseNames reads the function names subsection (id 1) of the name
// section; other subsections are skipped.
func parseNames(r reader) (map[int]string, error) {
	names := map[int]string{}
	for r.off < len(r.b) && r.err == nil {
		id := r.byte()
		sub := reader{b: r.bytes(r.u32())}
		if r.err != nil || id != 1 {
			continue
		}
		for n := sub.u32(); n > 0 && sub.err == nil; n-- {
			idx := sub.u32()
			name := sub.name()
			if sub.err == nil {
				names[idx] = name
			}
		}
		if sub.err != nil {
			return names, sub.err
		}
	}
	return names, r.err
}

// reader consumes a byte slice with a sticky error: after the first
// failure every read returns zero values.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = errors.New(what + " cut short at offset " + strconv.Itoa(r.off))
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail("byte")
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (r *reader) u32() int {
	v := 0
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	if r.err == nil {
		r.err = errors.New("LEB128 longer than 5 bytes at offset " + strconv.Itoa(r.off))
	}
	return 0
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.off {
		r.fail(strconv.Itoa(n) + " bytes")
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *reader) name() string { return string(r.bytes(r.u32())) }

func (r *reader) limits() {
	if r.byte()&1 != 0 {
		r.u32()
	}
	r.u32()
}
