package web

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/internal/wasmmodule"
)

// writeModule writes a family module's files as scripts/build-wasm.sh
// --family does; its content is not WebAssembly (withModules serves the
// forms as they are, checked against the manifest).
func writeModule(t *testing.T, dir, family string, protocols ...string) string {
	t.Helper()
	name := wasmmodule.FamilyName(family)
	body := []byte("not really a module of " + family)
	m := wasmmodule.Manifest{Module: name, SHA256: wasmmodule.Sum(body), Size: len(body), Families: []string{family}, Protocols: protocols,
		Brotli: wasmmodule.Coded{File: name + ".br", Size: len(body), SHA256: wasmmodule.Sum(body)},
		Gzip:   wasmmodule.Coded{File: name + ".gz", Size: len(body), SHA256: wasmmodule.Sum(body)}}
	js, _ := json.Marshal(m)
	for f, b := range map[string][]byte{name + ".br": body, name + ".gz": body, name + ".json": js} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// TestModulesDirRefused: a directory of modules is refused, with a message
// saying why, when it holds none, or a module of a protocol the binary
// does not know, or of a protocol the binary registers from another
// package, or one that an embedded module already decodes; an embedded
// module's files copied there are refused the same way.
func TestModulesDirRefused(t *testing.T) {
	idx, err := Modules()
	if err != nil {
		t.Fatal(err)
	}
	fam := idx.Modules[1] // a family module built into the binary
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, dir string)
		want  string
	}{
		{"empty", func(*testing.T, string) {}, "no module"},
		{"unknown protocol", func(t *testing.T, dir string) { writeModule(t, dir, "example.com/codecs/nosuch", "nosuch") },
			`decodes protocol "nosuch", which this binary does not know: serve it from a querylens built with example.com/codecs/nosuch`},
		{"other package", func(t *testing.T, dir string) {
			writeModule(t, dir, "example.com/codecs/"+strings.TrimSuffix(strings.TrimPrefix(fam.Module, "querylens-"), ".wasm"), fam.Protocols[0])
		}, "but this binary's comes from " + fam.Families[0]},
		{"already decoded", func(t *testing.T, dir string) { writeModule(t, dir, fam.Families[0], fam.Protocols...) },
			"which " + fam.Module + " already decodes"},
		{"not one family", func(t *testing.T, dir string) {
			name := writeModule(t, dir, fam.Families[0], fam.Protocols...)
			os.Rename(filepath.Join(dir, name+".json"), filepath.Join(dir, "querylens-other.wasm.json"))
		}, "not a manifest of querylens-other.wasm"},
		{"partial", func(t *testing.T, dir string) {
			name := writeModule(t, dir, "example.com/codecs/nosuch", "nosuch")
			os.WriteFile(filepath.Join(dir, name+".br"), []byte("cut"), 0o644)
		}, "an interrupted or partial build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.write(t, dir)
			a, err := loadAssets(slog.New(slog.DiscardHandler), dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("loadAssets(%s) = %v, %v; want an error naming the directory and saying %q", tc.name, a, err, tc.want)
			}
		})
	}
	// The embedded table is unchanged by a refused directory.
	a, err := loadAssets(slog.New(slog.DiscardHandler), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.ModuleMap(); len(got) != countProtocols(idx) {
		t.Errorf("the embedded module map has %d protocols, want %d", len(got), countProtocols(idx))
	}
}

func countProtocols(x wasmmodule.Index) int {
	n := 0
	for _, e := range x.Modules[1:] {
		n += len(e.Protocols)
	}
	return n
}
