// Command precompress compresses the browser module for the server to send
// as it is, and writes the manifest that names it.
//
// It builds nothing: scripts/build-wasm.sh compiles wasm/ reproducibly to a
// scratch file and runs
//
//	go run ./internal/cmd/precompress -in SCRATCH.wasm -dir web/static
//
// which writes, all committed:
//
//	querylens.wasm.br    brotli, quality 11, 16 MiB window (what browsers send br for)
//	querylens.wasm.gz    gzip (compress/gzip, best compression), for clients without br
//	querylens.wasm.json  the manifest: SHA-256 and size of the module, the
//	                     compressed sizes, the Go version and build command,
//	                     and which encoder made each file
//
// Why committed, and why in Go: `go build ./cmd/querylens` and
// `go install …@version` embed web/static as it is in the repository, and
// run no build step of ours, so the module must already be there, in the
// form the server sends. Compressing with code pinned in go.mod and the
// standard library, instead of whatever gzip the machine has, makes the
// bytes (and so the size budget) the same on every machine. The raw module
// (about 2.9 MB) is not committed: web decompresses the gzip for the rare
// client that takes neither encoding.
//
// The gzip form takes well under a second, so it is made on every run and
// its file rewritten only when the bytes differ: no manifest entry can keep
// a stale .gz. Brotli at quality 11 takes seconds, so the .br is kept when
// the manifest describes this module, made by the same brotli encoder, and
// the file on disk still decompresses to the module.
//
// With -check, nothing is written: it compares the module's hash with the
// manifest's, checks that the .gz is what this build's gzip makes and that
// the .br decompresses to the module, and otherwise exits 1 with a message
// saying how to refresh them (scripts/lint.sh uses this on a fresh build).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"

	"github.com/querylens/querylens/internal/wasmmodule"
)

// brotliWindow is log2 of the brotli window. 24 (16 MiB) is the largest a
// browser accepts for Content-Encoding: br (larger windows are a separate,
// "large-window" format browsers do not decode); it spans the whole module,
// so a match may reach back to its start.
const brotliWindow = 24

// brotliQuality is the brotli quality: the best.
const brotliQuality = brotli.BestCompression

// gzipLevel is the compress/gzip level of the gzip form.
const gzipLevel = gzip.BestCompression

// gzipEncoder names the gzip encoder in the manifest. compress/gzip's output
// may change with the Go release, so the release is part of the name.
func gzipEncoder() string {
	return "compress/gzip " + runtime.Version() + " level " + strconv.Itoa(gzipLevel)
}

// gzipModule is the one place the gzip form is made. The output is a
// deterministic function of b and the Go release: no name, no modification
// time in the header.
func gzipModule(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzipLevel) // a valid level: no error
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func brotliModule(b []byte) []byte {
	var buf bytes.Buffer
	bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotliQuality, LGWin: brotliWindow})
	bw.Write(b)
	bw.Close()
	return buf.Bytes()
}

// brotliEncoder names the brotli encoder in the manifest, from the same
// constants brotliModule uses and the module version go.mod pins, so that a
// change to either compresses again.
func brotliEncoder() string {
	v := "(unknown version)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/andybalholm/brotli" {
				v = d.Version
				if d.Replace != nil {
					v += " => " + d.Replace.Path + " " + d.Replace.Version
				}
			}
		}
	}
	return "github.com/andybalholm/brotli " + v + " quality " + strconv.Itoa(brotliQuality) + " lgwin " + strconv.Itoa(brotliWindow)
}

func main() {
	in := flag.String("in", "", "the compiled module (`FILE`)")
	dir := flag.String("dir", "web/static", "where the compressed module and manifest live (`DIR`)")
	name := flag.String("name", wasmmodule.Name, "the module's file name (`NAME`): querylens.wasm, or querylens-<family>.wasm")
	families := flag.String("families", "", "the codec packages linked in, comma-separated (`PKGS`), for the manifest")
	protocols := flag.String("protocols", "", "the protocols they register, comma-separated (`NAMES`), for the manifest")
	check := flag.Bool("check", false, "only check that the manifest describes -in (with -index: that the index is fresh); write nothing")
	build := flag.String("build", "", "the build command to record in the manifest")
	list := flag.Bool("list", false, "print the registered protocol families, one a line: package path, a tab, its protocols comma-separated")
	base := flag.String("base", "", "with -index: the module of no family (`FILE`), to measure into the index")
	index := flag.Bool("index", false, "write (or with -check, check) "+wasmmodule.IndexName+" listing the modules named as arguments, the combined one first, and remove other family modules from -dir")
	flag.Parse()
	var err error
	switch {
	case *list:
		err = listFamilies(os.Stdout)
	case *index:
		err = writeIndex(*dir, flag.Args(), *base, *check)
	case *in == "" || flag.NArg() > 0:
		fmt.Fprintln(os.Stderr, "usage: precompress -in FILE [-dir DIR] [-name NAME] [-families PKGS -protocols NAMES] [-check] [-build CMD]\n"+
			"       precompress -index [-dir DIR] [-check] [-base FILE] MODULE...\n"+
			"       precompress -list")
		os.Exit(2)
	case *check:
		err = checkManifest(*in, *dir, *name, splitList(*families), splitList(*protocols))
	default:
		err = precompress(*in, *dir, *name, *build, splitList(*families), splitList(*protocols))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "precompress: "+err.Error())
		os.Exit(1)
	}
}

// splitList splits a comma-separated flag; "" is none.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

var sum = wasmmodule.Sum

func readManifest(dir, name string) (wasmmodule.Manifest, error) {
	var m wasmmodule.Manifest
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, errors.New(filepath.Join(dir, name+".json") + ": " + err.Error())
	}
	return m, nil
}

func checkManifest(in, dir, moduleName string, families, protocols []string) error {
	mod, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	m, err := readManifest(dir, moduleName)
	if err != nil {
		return errors.New("no manifest of the browser module " + moduleName + " (" + err.Error() + "): run go tool task build:wasm and commit web/static")
	}
	if got := sum(mod); got != m.SHA256 {
		return errors.New("the committed browser module " + moduleName + " is stale: the sources build to sha256 " + got[:12] +
			" (" + strconv.Itoa(len(mod)) + " bytes, " + runtime.Version() + "), " + filepath.Join(dir, moduleName+".json") +
			" says " + short(m.SHA256) + " (" + strconv.Itoa(m.Size) + " bytes, " + m.Go + "): run go tool task build:wasm and commit web/static")
	}
	if !slices.Equal(m.Families, families) || !slices.Equal(m.Protocols, protocols) {
		return errors.New(filepath.Join(dir, moduleName+".json") + " names other families or protocols than the registry's: run go tool task build:wasm and commit web/static")
	}
	// The compressed forms too: the .gz must be exactly what this build's
	// gzip makes (cheap to redo), the .br must decompress to the module.
	gz, err := os.ReadFile(filepath.Join(dir, m.Gzip.File))
	if err != nil || !bytes.Equal(gz, gzipModule(mod)) || m.Gzip.Encoder != gzipEncoder() {
		return errors.New("the committed " + m.Gzip.File + " is not what " + gzipEncoder() + " makes of the module: run go tool task build:wasm and commit web/static")
	}
	if keptBrotli(dir, moduleName, m.SHA256, mod, m, nil) == nil {
		return errors.New("the committed " + m.Brotli.File + " does not match the manifest and the module, or was made by another encoder than " + brotliEncoder() + ": run go tool task build:wasm and commit web/static")
	}
	return nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// keptBrotli returns the brotli form already in dir when it can stand for
// mod (hash h): the manifest names this module and the current brotli
// encoder, and the file has the recorded size and hash and decompresses to
// mod. Otherwise nil: compress again.
func keptBrotli(dir, moduleName, h string, mod []byte, m wasmmodule.Manifest, err error) []byte {
	if err != nil || m.SHA256 != h || m.Brotli.Encoder != brotliEncoder() || m.Brotli.File != moduleName+".br" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, m.Brotli.File))
	if err != nil || len(b) != m.Brotli.Size || sum(b) != m.Brotli.SHA256 {
		return nil
	}
	got, err := io.ReadAll(io.LimitReader(brotli.NewReader(bytes.NewReader(b)), int64(len(mod))+1))
	if err != nil || !bytes.Equal(got, mod) {
		return nil
	}
	return b
}

func precompress(in, dir, moduleName, build string, families, protocols []string) error {
	mod, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return errors.New(in + " is not a WebAssembly module (no \\0asm magic)")
	}
	h := sum(mod)
	old, oerr := readManifest(dir, moduleName)
	m := wasmmodule.Manifest{Module: moduleName, SHA256: h, Size: len(mod), Go: runtime.Version(), Build: build,
		Families: families, Protocols: protocols}
	br := keptBrotli(dir, moduleName, h, mod, old, oerr)
	if br == nil {
		br = brotliModule(mod)
	}
	gz := gzipModule(mod)
	m.Brotli = wasmmodule.Coded{File: moduleName + ".br", Size: len(br), SHA256: sum(br), Encoder: brotliEncoder()}
	m.Gzip = wasmmodule.Coded{File: moduleName + ".gz", Size: len(gz), SHA256: sum(gz), Encoder: gzipEncoder()}
	js, _ := json.MarshalIndent(m, "", "  ")
	changed := false
	// The manifest last, so an interrupted run leaves one that does not
	// match the files, which Load refuses and the next run redoes.
	for _, f := range []struct {
		name string
		b    []byte
	}{{m.Brotli.File, br}, {m.Gzip.File, gz}, {moduleName + ".json", append(js, '\n')}} {
		c, err := writeIfChanged(filepath.Join(dir, f.name), f.b)
		if err != nil {
			return err
		}
		changed = changed || c
	}
	if !changed {
		fmt.Println("precompress: " + moduleName + " " + h[:12] + " already compressed, nothing to do")
		return nil
	}
	// Read back what was written, as the server will, and decompress both.
	mm, err := wasmmodule.LoadNamed(os.DirFS(dir), moduleName)
	if err == nil {
		_, err = mm.Gunzip()
	}
	if err == nil {
		_, err = mm.Unbrotli()
	}
	if err != nil {
		return errors.New("the written files do not check out: " + err.Error())
	}
	fmt.Printf("precompress: %s %s: %d bytes, br %d, gzip %d\n", moduleName, h[:12], len(mod), m.Brotli.Size, m.Gzip.Size)
	return nil
}

// writeIfChanged writes b to name unless the file already holds exactly b,
// and reports whether it wrote.
func writeIfChanged(name string, b []byte) (bool, error) {
	if cur, err := os.ReadFile(name); err == nil && bytes.Equal(cur, b) {
		return false, nil
	}
	return true, writeFile(name, b)
}

// writeFile replaces name atomically, so an interrupted run never leaves a
// truncated file for go:embed to pick up.
func writeFile(name string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), name)
}
