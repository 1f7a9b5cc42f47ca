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
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/querylens/querylens/internal/wasmbin"
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

// functions lists the module's defined functions in index order, read
// with wasmbin.Parse: the name section indexes imports first, so a body's
// name is at its index plus the imported functions' count.
func functions(b []byte) ([]function, error) {
	m, err := wasmbin.Parse(b)
	if err != nil {
		return nil, err
	}
	fs := make([]function, len(m.Code))
	for i, n := range m.Code {
		fs[i] = function{name: m.Names[m.Imports+i], size: lebLen(n) + n}
	}
	return fs, nil
}

// lebLen is the length of n as an unsigned LEB128, the body's size prefix
// as the Go linker writes it (no padding).
func lebLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}
