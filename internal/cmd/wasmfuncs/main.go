// Command wasmfuncs prints the size of each function body in a WebAssembly
// module, named from the module's "name" section, as `go tool nm -size`
// does for other targets (nm does not read wasm):
//
//	wasmfuncs [-sum PREFIX]... MODULE.wasm
//
// Without -sum: one line per defined function, "size name", largest first.
// With -sum: one line per prefix, "size prefix", the total of the functions
// whose name starts with it. Go's linker names a function by its package
// path with "/" and "." turned into "_" (the package's own dot kept), as in
// github.com_querylens_querylens_codecs_a2s.readInfo.
//
// The module must keep its names: build it without -ldflags=-s. The sizes
// are of the code section's bodies, which -s does not change, so they are
// the sizes in the module the server sends. scripts/family-size.sh uses
// this for each family's code, a figure compression noise does not move.
package main

import (
	"cmp"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

type prefixes []string

func (p *prefixes) String() string     { return strings.Join(*p, ",") }
func (p *prefixes) Set(s string) error { *p = append(*p, s); return nil }

func main() {
	var sum prefixes
	flag.Var(&sum, "sum", "print the total size of the functions whose name starts with `PREFIX` (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: wasmfuncs [-sum PREFIX]... MODULE.wasm")
		os.Exit(2)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmfuncs:", err)
		os.Exit(1)
	}
	fs, err := functions(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmfuncs:", flag.Arg(0)+":", err)
		os.Exit(1)
	}
	if len(sum) > 0 {
		for _, p := range sum {
			n := 0
			for _, f := range fs {
				if strings.HasPrefix(f.name, p) {
					n += f.size
				}
			}
			fmt.Printf("%d %s\n", n, p)
		}
		return
	}
	slices.SortStableFunc(fs, func(a, b function) int { return cmp.Compare(b.size, a.size) })
	for _, f := range fs {
		fmt.Printf("%d %s\n", f.size, f.name)
	}
}

// function is one body of the code section: its size in bytes (the body
// and its length prefix) and its name ("" when the name section has none).
type function struct {
	name string
	size int
}

var errFormat = errors.New("not a WebAssembly module, or a malformed one")

// reader reads a module's sections with a sticky error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errFormat
	}
	r.b = nil
}

func (r *reader) uleb() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<31 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) bytes(n int) []byte {
	if n > len(r.b) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) byte() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

// limits skips a table's or memory's limits: flags, minimum, maximum if
// flag bit 0 is set.
func (r *reader) limits() {
	if r.uleb()&1 != 0 {
		r.uleb()
	}
	r.uleb()
}

// functions lists the module's defined functions in index order. Imported
// functions come first in the index space, so their count is read from the
// import section to match the name section's indexes with the bodies.
func functions(b []byte) ([]function, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" || binary.LittleEndian.Uint32(b[4:]) != 1 {
		return nil, errFormat
	}
	m := &reader{b: b[8:]}
	imported := 0
	var fs []function
	names := map[int]string{}
	for len(m.b) > 0 && m.err == nil {
		id := m.byte()
		s := &reader{b: m.bytes(m.uleb())}
		switch id {
		case 2: // imports: module, name, kind, description
			for n := s.uleb(); n > 0 && s.err == nil; n-- {
				s.bytes(s.uleb())
				s.bytes(s.uleb())
				switch s.byte() {
				case 0: // function: type index
					imported++
					s.uleb()
				case 1: // table: element type, limits
					s.byte()
					s.limits()
				case 2: // memory: limits
					s.limits()
				case 3: // global: value type, mutability
					s.bytes(2)
				default:
					s.fail()
				}
			}
		case 10: // code: sized bodies
			for n := s.uleb(); n > 0 && s.err == nil; n-- {
				before := len(s.b)
				s.bytes(s.uleb())
				fs = append(fs, function{size: before - len(s.b)})
			}
		case 0: // custom: the "name" section's subsection 1 names functions
			if string(s.bytes(s.uleb())) != "name" {
				continue
			}
			for len(s.b) > 0 && s.err == nil {
				sub := s.byte()
				t := &reader{b: s.bytes(s.uleb())}
				if sub != 1 {
					continue
				}
				for n := t.uleb(); n > 0 && t.err == nil; n-- {
					i := t.uleb()
					names[i] = string(t.bytes(t.uleb()))
				}
				if t.err != nil {
					s.err = t.err
				}
			}
		}
		if s.err != nil {
			m.err = s.err
		}
	}
	if m.err != nil {
		return nil, m.err
	}
	for i := range fs {
		fs[i].name = names[imported+i]
	}
	return fs, nil
}
