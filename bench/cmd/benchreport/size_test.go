package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/internal/wasmbin"
	"github.com/querylens/querylens/internal/wasmmodule"
)

// The fixture's functions: one import, then three defined functions.
var fixtureNames = []string{
	"gojs.runtime.wasmExit", // imported
	"github.com_querylens_querylens_codecs_ogp.__decoder_.header",
	"runtime.mallocgc",
	"main.main",
}

// fixtureBodies are the defined functions' bodies: no locals, then code
// ending in `end` (0x0b), each a different size.
var fixtureBodies = [][]byte{
	{0x00, 0x01, 0x01, 0x0b},       // nop nop end
	{0x00, 0x0b},                   // end
	{0x00, 0x01, 0x01, 0x01, 0x0b}, // nop nop nop end
}

// wasmFixture assembles a small valid module the way the Go linker lays
// one out: type, import (a function and a memory), function, code, data and
// custom sections, with a name section whose module-name subsection comes
// before the function names (parseNames must skip it).
func wasmFixture() []byte {
	section := func(id byte, body []byte) []byte {
		return append(append([]byte{id}, uleb(len(body))...), body...)
	}
	name := func(s string) []byte { return append(uleb(len(s)), s...) }
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, section(1, []byte{1, 0x60, 0, 0})...) // one type: [] → []
	imports := []byte{2}
	imports = append(imports, name("gojs")...)
	imports = append(imports, name("runtime.wasmExit")...)
	imports = append(imports, 0, 0) // a function of type 0
	imports = append(imports, name("env")...)
	imports = append(imports, name("mem")...)
	imports = append(imports, 2, 1, 1, 2) // a memory with min 1, max 2
	b = append(b, section(2, imports)...)
	b = append(b, section(3, []byte{3, 0, 0, 0})...) // three functions of type 0
	code := uleb(len(fixtureBodies))
	for _, body := range fixtureBodies {
		code = append(append(code, uleb(len(body))...), body...)
	}
	b = append(b, section(10, code)...)
	b = append(b, section(11, []byte{1, 0, 0x41, 0, 0x0b, 3, 'a', 'b', 'c'})...) // one active segment of 3 bytes
	b = append(b, section(0, append(name("producers"), 0))...)
	names := append(name("name"), section(0, name("tiny"))...) // module name
	var fn []byte
	fn = append(fn, uleb(len(fixtureNames))...)
	for i, n := range fixtureNames {
		fn = append(append(fn, uleb(i)...), name(n)...)
	}
	names = append(names, section(1, fn)...)
	return append(b, section(0, names)...)
}

func uleb(v int) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func TestParseWasm(t *testing.T) {
	m, err := wasmbin.Parse(wasmFixture())
	if err != nil {
		t.Fatal(err)
	}
	if m.Imports != 1 {
		t.Errorf("imports = %d, want 1", m.Imports)
	}
	if want := []int{4, 2, 5}; !slices.Equal(m.Code, want) {
		t.Errorf("code = %v, want %v", m.Code, want)
	}
	if m.CodeBytes() != 11 || m.SectionBytes(wasmbin.Data) != 9 {
		t.Errorf("code bytes %d, data bytes %d; want 11, 9", m.CodeBytes(), m.SectionBytes(wasmbin.Data))
	}
	for i, want := range fixtureNames {
		if m.Names[i] != want {
			t.Errorf("function %d named %q, want %q", i, m.Names[i], want)
		}
	}
	var ids []byte
	for _, s := range m.Sections {
		ids = append(ids, s.ID)
	}
	if want := []byte{1, 2, 3, 10, 11, 0, 0}; !slices.Equal(ids, want) || m.Sections[6].Name != "name" {
		t.Errorf("sections %v (last named %q), want %v ending in name", ids, m.Sections[len(m.Sections)-1].Name, want)
	}
}

// TestParseWasmTruncated: every prefix of the fixture parses only if it
// ends at a section boundary, and otherwise fails without panicking.
func TestParseWasmTruncated(t *testing.T) {
	b := wasmFixture()
	full, err := wasmbin.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	boundaries := map[int]bool{8: true}
	off := 8
	for _, s := range full.Sections {
		off += 1 + len(uleb(s.Size)) + s.Size
		boundaries[off] = true
	}
	for i := range len(b) {
		_, err := wasmbin.Parse(b[:i])
		if boundaries[i] != (err == nil) {
			t.Errorf("prefix of %d bytes: %v (a section boundary: %v)", i, err, boundaries[i])
		}
		if err != nil && !errors.Is(err, wasmbin.ErrFormat) {
			t.Errorf("prefix of %d bytes: %v does not wrap wasmbin.ErrFormat", i, err)
		}
	}
}

func TestParseWasmBad(t *testing.T) {
	head := "\x00asm\x01\x00\x00\x00"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "no \\0asm version 1 header"},
		{"not wasm", "\x7fELF\x02\x01\x01\x00", "no \\0asm version 1 header"},
		{"version 2", "\x00asm\x02\x00\x00\x00", "no \\0asm version 1 header"},
		{"section longer than the module", head + "\x0a\x05\x01", "section at offset 8"},
		{"LEB128 too long", head + "\x0a\xff\xff\xff\xff\xff\x01", "longer than 5 bytes"},
		{"more bodies than bytes", head + "\x0a\x02\x7f\x00", "127 function bodies in 2 bytes"},
		{"body past the section", head + "\x0a\x03\x01\x05\x00", "section 10 at offset 8"},
		{"unknown import kind", head + "\x02\x06\x01\x01a\x01b\x07", "import kind 7"},
		{"function name past its subsection", head + "\x00\x0b\x04name\x01\x04\x01\x00\x05a", "section 0 at offset 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wasmbin.Parse([]byte(tc.in))
			if err == nil || !errors.Is(err, wasmbin.ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseWasm = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestPackageNamer(t *testing.T) {
	n := newPackageNamer([]string{
		"runtime", "internal/runtime/maps", "internal/runtime/atomic", "slices",
		"github.com/querylens/querylens/codecs", "github.com/querylens/querylens/codecs/ogp",
		"github.com/querylens/querylens/wasm",
	}, "github.com/querylens/querylens/wasm")
	for _, tc := range []struct{ name, want string }{
		{"runtime.mallocgc", "runtime"},
		{"runtime.__mheap_.alloc", "runtime"},
		{"internal_runtime_maps.__Map_.getWithoutKeySmallFastStr", "internal/runtime/maps"},
		{"internal_runtime_atomic.Or8", "internal/runtime/atomic"},
		{"github.com_querylens_querylens_codecs.trimSpace", "github.com/querylens/querylens/codecs"},
		{"github.com_querylens_querylens_codecs_ogp.__decoder_.header", "github.com/querylens/querylens/codecs/ogp"},
		{"slices.Sort_go.shape.int_", "slices"},
		{"main.main", "github.com/querylens/querylens/wasm"},
		{"type_.eq.runtime._panic", "(compiler-generated)"},
		{"memcmp", "(no package)"},
		{"github.com_querylens_querylens_codecs_zandronum.Decode", "(no package)"}, // not in the list
	} {
		if got := n.packageOf(tc.name); got != tc.want {
			t.Errorf("packageOf(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLinkerName(t *testing.T) {
	for in, want := range map[string]string{
		"runtime":                               "runtime",
		"internal/runtime/maps":                 "internal_runtime_maps",
		"github.com/querylens/querylens/codecs": "github.com_querylens_querylens_codecs",
		"gopkg.in/yaml.v3":                      "gopkg.in_yaml.v3",
		"example.com/a-b~c":                     "example.com_a_b_c",
	} {
		if got := linkerName(in); got != want {
			t.Errorf("linkerName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSizeReport(t *testing.T) {
	m, err := wasmbin.Parse(wasmFixture())
	if err != nil {
		t.Fatal(err)
	}
	man := wasmmodule.Manifest{Size: 2_985_262}
	man.Brotli.Size, man.Gzip.Size = 639_479, 847_142
	pkgs := newPackageNamer([]string{"runtime", "github.com/querylens/querylens/codecs/ogp", "github.com/querylens/querylens/wasm"}, "github.com/querylens/querylens/wasm")
	families := []string{"github.com/querylens/querylens/codecs/a", "github.com/querylens/querylens/codecs/b", "github.com/querylens/querylens/codecs/c", "github.com/querylens/querylens/codecs/d"}
	got := sizeReport(man, m, m, pkgs, families)
	for _, want := range []string{
		"| module, uncompressed | 2,985,262 |",
		"| code section | 11 |",
		"| data section | 9 |",
		"| gzip (the fallback; no budget) | 847,142 |",
		"| **brotli (what browsers download)** | **639,479** |",
		"| budget: 441,000 + 60,000 shared + 20,000 capture reader + 4 × 40,000 per protocol family | 681,000 |",
		"| headroom | 41,521 |",
		"`codecs/a`, `codecs/b`, `codecs/c`, `codecs/d`",
		"| package | functions | code bytes | share |",
		"| `wasm` | 1 | 5 | 45.5% |\n| `codecs/ogp` | 1 | 4 | 36.4% |\n| **this module, all packages** | 2 | 9 | 81.8% |\n| `runtime` | 1 | 2 | 18.2% |",
		"| **all** | 3 | 11 | 100.0% |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	// This module's packages come first, largest first; the others after
	// their total.
	if i, j := strings.Index(got, "`codecs/ogp`"), strings.Index(got, "`runtime`"); i < 0 || j < i {
		t.Errorf("this module's packages do not come first:\n%s", got)
	}
}

func TestGroupDigits(t *testing.T) {
	for in, want := range map[int]string{0: "0", 12: "12", 999: "999", 1000: "1,000", 639479: "639,479", 1924440: "1,924,440", -41521: "-41,521"} {
		if got := groupDigits(in); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestGoLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, gomod, want string }{
		{"go line", "module x\n\ngo 1.26.8\n\ntool foo\n", "1.26.8"},
		{"no go line", "module x\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, "go.mod")
			if err := os.WriteFile(f, []byte(tc.gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := goLine(f)
			if got != tc.want || (err == nil) != (tc.want != "") {
				t.Errorf("goLine = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestParseGoWasm: a real Go js/wasm program built without -s has the
// name section, and its functions map back to their packages, as the size
// section relies on (the linker's naming is an implementation detail).
func TestParseGoWasm(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build a module: ", err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":     "module example.com/tiny\n\ngo 1.26\n",
		"main.go":    "package main\n\nimport \"example.com/tiny/sub\"\n\nfunc main() { println(sub.Twice(21)) }\n",
		"sub/sub.go": "package sub\n\n//go:noinline\nfunc Twice(n int) int { return 2 * n }\n",
	}
	for name, text := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "tiny.wasm")
	cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags=-w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasmbin.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Names) < len(m.Code) {
		t.Fatalf("%d names for %d functions: no name section?", len(m.Names), len(m.Code))
	}
	got := map[string]pkgSize{}
	for _, p := range packageSizes(m, newPackageNamer([]string{"runtime", "example.com/tiny/sub", "example.com/tiny"}, "example.com/tiny")) {
		got[p.pkg] = p
	}
	for _, pkg := range []string{"runtime", "example.com/tiny", "example.com/tiny/sub"} {
		if got[pkg].funcs == 0 || got[pkg].bytes == 0 {
			t.Errorf("no code found for %s: %v", pkg, got)
		}
	}
	if got["runtime"].bytes < m.CodeBytes()/4 {
		t.Errorf("runtime has %d of %d code bytes", got["runtime"].bytes, m.CodeBytes())
	}
}
