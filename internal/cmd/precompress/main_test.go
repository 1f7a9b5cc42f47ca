package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/internal/wasmmodule"
)

// fakeModule is a WebAssembly header followed by compressible bytes.
func fakeModule(seed string) []byte {
	return append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("querylens "+seed+" "), 500)...)
}

func TestPrecompress(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(t.TempDir(), "querylens.wasm")
	mod := fakeModule("a")
	if err := os.WriteFile(in, mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := precompress(in, dir, wasmmodule.Name, "test build", nil, nil); err != nil {
		t.Fatal(err)
	}
	m, err := wasmmodule.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if m.SHA256 != wasmmodule.Sum(mod) || m.Size != len(mod) || m.Build != "test build" ||
		m.Manifest.Gzip.Encoder != gzipEncoder() || m.Manifest.Brotli.Encoder != brotliEncoder() {
		t.Errorf("manifest %+v", m.Manifest)
	}
	for name, f := range map[string]func() ([]byte, error){"gzip": m.Gunzip, "br": m.Unbrotli} {
		if b, err := f(); err != nil || !bytes.Equal(b, mod) {
			t.Errorf("%s form: %v", name, err)
		}
	}
	if len(m.Brotli) >= len(mod)/10 || len(m.Gzip) >= len(mod)/10 {
		t.Errorf("a repetitive module compressed to br %d, gzip %d bytes of %d", len(m.Brotli), len(m.Gzip), len(mod))
	}

	// Deterministic: the same input gives the same bytes.
	if !bytes.Equal(gzipModule(mod), m.Gzip) || !bytes.Equal(brotliModule(mod), m.Brotli) {
		t.Error("compressing twice gave different bytes")
	}

	// A second run on the same module rewrites nothing.
	st, _ := os.Stat(filepath.Join(dir, "querylens.wasm.br"))
	os.Chtimes(filepath.Join(dir, "querylens.wasm.br"), st.ModTime().Add(-3600e9), st.ModTime().Add(-3600e9))
	st, _ = os.Stat(filepath.Join(dir, "querylens.wasm.br"))
	if err := precompress(in, dir, wasmmodule.Name, "test build", nil, nil); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(filepath.Join(dir, "querylens.wasm.br")); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("an up-to-date module was compressed again")
	}

	// -check: the same module passes, another fails saying what to do.
	if err := checkManifest(in, dir, wasmmodule.Name, nil, nil); err != nil {
		t.Errorf("check of the same module: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other.wasm")
	os.WriteFile(other, fakeModule("b"), 0o644)
	if err := checkManifest(other, dir, wasmmodule.Name, nil, nil); err == nil || !strings.Contains(err.Error(), "stale") || !strings.Contains(err.Error(), "go tool task build:wasm") {
		t.Errorf("check of another module: %v", err)
	}

	// A changed module is compressed again; a damaged .gz is replaced.
	if err := precompress(other, dir, wasmmodule.Name, "test build", nil, nil); err != nil {
		t.Fatal(err)
	}
	if m, err := wasmmodule.Load(os.DirFS(dir)); err != nil || m.SHA256 != wasmmodule.Sum(fakeModule("b")) {
		t.Errorf("after a change: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "querylens.wasm.gz"), []byte("damaged"), 0o644)
	if err := precompress(other, dir, wasmmodule.Name, "test build", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := wasmmodule.Load(os.DirFS(dir)); err != nil {
		t.Errorf("a damaged .gz was not replaced: %v", err)
	}
}

// TestPrecompressStale: a compressed form that the manifest vouches for
// (right size, hash and encoder name) but that is not what this build's
// encoder makes of this module is replaced; the encoder's name alone never
// keeps a file.
func TestPrecompressStale(t *testing.T) {
	mod := fakeModule("a")
	in := filepath.Join(t.TempDir(), "querylens.wasm")
	if err := os.WriteFile(in, mod, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		file  string
		stale []byte // a valid encoding, but not the one wanted
		want  func([]byte) []byte
	}{
		{"gzip of the module at another level", "querylens.wasm.gz", gzipAt(t, mod, gzip.BestSpeed), gzipModule},
		{"brotli of another module", "querylens.wasm.br", brotliModule(fakeModule("b")), brotliModule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := precompress(in, dir, wasmmodule.Name, "test build", nil, nil); err != nil {
				t.Fatal(err)
			}
			// Swap the file and make the manifest agree with it, as a
			// manifest written by an older encoder of the same name would.
			m, err := readManifest(dir, wasmmodule.Name)
			if err != nil {
				t.Fatal(err)
			}
			c := &m.Gzip
			if tc.file == m.Brotli.File {
				c = &m.Brotli
			}
			c.Size, c.SHA256 = len(tc.stale), wasmmodule.Sum(tc.stale)
			js, _ := json.MarshalIndent(m, "", "  ")
			if err := os.WriteFile(filepath.Join(dir, tc.file), tc.stale, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, wasmmodule.ManifestName), js, 0o644); err != nil {
				t.Fatal(err)
			}

			if err := checkManifest(in, dir, wasmmodule.Name, nil, nil); err == nil {
				t.Error("-check passed the stale file")
			}
			if err := precompress(in, dir, wasmmodule.Name, "test build", nil, nil); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want(mod)) {
				t.Errorf("%s was kept: %d bytes, want the %d this encoder makes", tc.file, len(got), len(tc.want(mod)))
			}
			if err := checkManifest(in, dir, wasmmodule.Name, nil, nil); err != nil {
				t.Errorf("-check after the run: %v", err)
			}
		})
	}
}

func gzipAt(t *testing.T, b []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestPrecompressRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.wasm")
	os.WriteFile(in, []byte("not a module at all"), 0o644)
	if err := precompress(in, dir, wasmmodule.Name, "", nil, nil); err == nil || !strings.Contains(err.Error(), "not a WebAssembly module") {
		t.Errorf("non-wasm input: %v", err)
	}
	if err := precompress(filepath.Join(dir, "missing.wasm"), dir, wasmmodule.Name, "", nil, nil); err == nil {
		t.Error("missing input accepted")
	}
	if err := checkManifest(in, t.TempDir(), wasmmodule.Name, nil, nil); err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Errorf("check without a manifest: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("refused runs left files: %v", ents)
	}
}
