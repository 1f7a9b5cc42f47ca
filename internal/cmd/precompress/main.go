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
//	querylens.wasm.gz    gzip, for clients without br
//	querylens.wasm.json  the manifest: SHA-256 and size of the module, the
//	                     compressed sizes, the Go version and build command,
//	                     and which encoder made each file
//
// Why committed, and why in Go: `go build ./cmd/querylens` and
// `go install …@version` embed web/static as it is in the repository, and
// run no build step of ours, so the module must already be there, in the
// form the server sends. Compressing with code pinned in go.mod, instead of
// whatever gzip or zopfli the machine has, makes the bytes (and so the size
// budget) the same on every machine. The raw module (about 2.9 MB) is not
// committed: web decompresses the gzip for the rare client that takes
// neither encoding.
//
// Compression is slow (brotli at quality 11 takes seconds, a zopfli-class
// gzip much longer) and the build is reproducible, so when the manifest
// already describes this module, made by the same encoders, and both files
// are present with the recorded sizes, nothing is rewritten.
//
// With -check, nothing is written either: it only compares the module's
// hash with the manifest's and exits 1 with a message saying how to refresh
// it (scripts/lint.sh uses this on a fresh build).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/andybalholm/brotli"

	"github.com/querylens/querylens/internal/deflate"
	"github.com/querylens/querylens/internal/wasmmodule"
)

// brotliWindow is log2 of the brotli window. 24 (16 MiB) is the largest a
// browser accepts for Content-Encoding: br (larger windows are a separate,
// "large-window" format browsers do not decode); it spans the whole module,
// so a match may reach back to its start.
const brotliWindow = 24

// gzipEncoder names the gzip encoder in the manifest. It changes with the
// encoder, so that the next build recompresses (and web's budget test
// knows which encoder it measures).
const gzipEncoder = "querylens internal/deflate Gzip (optimal parsing, default options)"

// gzipModule is the one place the gzip form is made (with gzipEncoder just
// above). The output must be a deterministic function of b: no name, no
// modification time in the header. internal/deflate's optimal parsing makes
// it about 6% smaller than compress/gzip at BestCompression.
func gzipModule(b []byte) []byte {
	return deflate.Gzip(b)
}

func brotliModule(b []byte) []byte {
	var buf bytes.Buffer
	bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: brotliWindow})
	bw.Write(b)
	bw.Close()
	return buf.Bytes()
}

func brotliEncoder() string {
	v := "(unknown version)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/andybalholm/brotli" {
				v = d.Version
			}
		}
	}
	return "github.com/andybalholm/brotli " + v + " quality 11 lgwin " + strconv.Itoa(brotliWindow)
}

func main() {
	in := flag.String("in", "", "the compiled module (`FILE`)")
	dir := flag.String("dir", "web/static", "where the compressed module and manifest live (`DIR`)")
	check := flag.Bool("check", false, "only check that the manifest describes -in; write nothing")
	build := flag.String("build", "", "the build command to record in the manifest")
	flag.Parse()
	if *in == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: precompress -in FILE [-dir DIR] [-check] [-build CMD]")
		os.Exit(2)
	}
	var err error
	if *check {
		err = checkManifest(*in, *dir)
	} else {
		err = precompress(*in, *dir, *build)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "precompress: "+err.Error())
		os.Exit(1)
	}
}

const moduleName = wasmmodule.Name

var sum = wasmmodule.Sum

func readManifest(dir string) (wasmmodule.Manifest, error) {
	var m wasmmodule.Manifest
	b, err := os.ReadFile(filepath.Join(dir, wasmmodule.ManifestName))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, errors.New(filepath.Join(dir, wasmmodule.ManifestName) + ": " + err.Error())
	}
	return m, nil
}

func checkManifest(in, dir string) error {
	mod, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	m, err := readManifest(dir)
	if err != nil {
		return errors.New("no manifest of the browser module (" + err.Error() + "): run go tool task build:wasm and commit web/static")
	}
	if got := sum(mod); got != m.SHA256 {
		return errors.New("the committed browser module is stale: the sources build to sha256 " + got[:12] +
			" (" + strconv.Itoa(len(mod)) + " bytes, " + runtime.Version() + "), " + filepath.Join(dir, moduleName+".json") +
			" says " + short(m.SHA256) + " (" + strconv.Itoa(m.Size) + " bytes, " + m.Go + "): run go tool task build:wasm and commit web/static")
	}
	return nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// upToDate reports whether the files in dir already are the compressed
// forms of a module with hash h, made by the current encoders.
func upToDate(dir string, h string, m wasmmodule.Manifest, err error) bool {
	if err != nil || m.SHA256 != h || m.Go != runtime.Version() ||
		m.Brotli.Encoder != brotliEncoder() || m.Gzip.Encoder != gzipEncoder {
		return false
	}
	for _, c := range []wasmmodule.Coded{m.Brotli, m.Gzip} {
		b, err := os.ReadFile(filepath.Join(dir, c.File))
		if err != nil || len(b) != c.Size || sum(b) != c.SHA256 {
			return false
		}
	}
	return true
}

func precompress(in, dir, build string) error {
	mod, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return errors.New(in + " is not a WebAssembly module (no \\0asm magic)")
	}
	h := sum(mod)
	old, oerr := readManifest(dir)
	if upToDate(dir, h, old, oerr) {
		fmt.Println("precompress: " + moduleName + " " + h[:12] + " already compressed, nothing to do")
		return nil
	}
	m := wasmmodule.Manifest{Module: moduleName, SHA256: h, Size: len(mod), Go: runtime.Version(), Build: build}
	forms := []struct {
		c   *wasmmodule.Coded
		ext string
		enc string
		f   func([]byte) []byte
	}{
		{&m.Brotli, ".br", brotliEncoder(), brotliModule},
		{&m.Gzip, ".gz", gzipEncoder, gzipModule},
	}
	for _, f := range forms {
		b := f.f(mod)
		*f.c = wasmmodule.Coded{File: moduleName + f.ext, Size: len(b), SHA256: sum(b), Encoder: f.enc}
		if err := writeFile(filepath.Join(dir, f.c.File), b); err != nil {
			return err
		}
	}
	js, _ := json.MarshalIndent(m, "", "  ")
	if err := writeFile(filepath.Join(dir, moduleName+".json"), append(js, '\n')); err != nil {
		return err
	}
	// Read back what was written, as the server will, and decompress both.
	mm, err := wasmmodule.Load(os.DirFS(dir))
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
