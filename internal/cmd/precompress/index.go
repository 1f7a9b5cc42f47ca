package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/internal/wasmmodule"
)

// listFamilies prints the registry's protocol families, one a line: the
// codec package's path, a tab, and the protocols it registers,
// comma-separated. scripts/build-wasm.sh builds one module for each, so it
// names no protocol itself.
func listFamilies(w io.Writer) error {
	byFamily := map[string][]string{}
	for _, c := range codecs.Protocols() {
		f := wasmmodule.FamilyOf(c)
		byFamily[f] = append(byFamily[f], c.Name())
	}
	var b strings.Builder
	for _, f := range wasmmodule.Families(codecs.Protocols()) {
		names := byFamily[f]
		slices.Sort(names)
		b.WriteString(f + "\t" + strings.Join(names, ",") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// indexOf builds the index of the named modules from their manifests in dir.
func indexOf(dir string, names []string) (wasmmodule.Index, error) {
	var x wasmmodule.Index
	if len(names) == 0 || names[0] != wasmmodule.Name {
		return x, errors.New("-index: name the modules, the combined " + wasmmodule.Name + " first")
	}
	for _, n := range names {
		m, err := readManifest(dir, n)
		if err != nil {
			return x, err
		}
		x.Modules = append(x.Modules, wasmmodule.EntryOf(m))
	}
	return x, nil
}

// staleFamilies lists the family modules' files in dir that the index
// does not name (a family no longer registered).
func staleFamilies(dir string, x wasmmodule.Index) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{wasmmodule.IndexName: true}
	for _, e := range x.Modules {
		for _, ext := range []string{".br", ".gz", ".json"} {
			keep[e.Module+ext] = true
		}
	}
	var stale []string
	for _, e := range ents {
		if n := e.Name(); wasmmodule.IsModuleFile(n) && !keep[n] {
			stale = append(stale, n)
		}
	}
	return stale, nil
}

// writeIndex writes the index of the named modules (or, with check, fails
// unless the one in dir is exactly that), and removes the files of family
// modules it does not name (with check, fails when there are any).
//
// base is the module of no family, measured into the index (its brotli
// size kept from the index in dir when the module is the same).
func writeIndex(dir string, names []string, base string, check bool) error {
	x, err := indexOf(dir, names)
	if err != nil {
		return err
	}
	if base != "" {
		b, err := os.ReadFile(base)
		if err != nil {
			return err
		}
		h := sum(b)
		old, _ := wasmmodule.LoadIndex(os.DirFS(dir))
		switch {
		case old.Base != nil && old.Base.SHA256 == h:
			x.Base = old.Base
		case check:
			return errors.New("the module of no family (" + base + ") is not the one " + wasmmodule.IndexName + " measures: run go tool task build:wasm and commit web/static")
		default:
			x.Base = &wasmmodule.Base{SHA256: h, Size: len(b), Brotli: len(brotliModule(b)), Gzip: len(gzipModule(b))}
		}
	}
	js, _ := json.MarshalIndent(x, "", "  ")
	js = append(js, '\n')
	stale, err := staleFamilies(dir, x)
	if err != nil {
		return err
	}
	if check {
		cur, err := os.ReadFile(filepath.Join(dir, wasmmodule.IndexName))
		if err != nil || !bytes.Equal(cur, js) {
			return errors.New("the committed " + wasmmodule.IndexName + " does not list the modules the registry's families build to: run go tool task build:wasm and commit web/static")
		}
		if len(stale) > 0 {
			return errors.New("web/static holds modules of no registered family (" + strings.Join(stale, ", ") + "): run go tool task build:wasm and commit web/static")
		}
		_, _, err = wasmmodule.LoadAll(os.DirFS(dir))
		return err
	}
	for _, n := range stale {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	if _, err := writeIfChanged(filepath.Join(dir, wasmmodule.IndexName), js); err != nil {
		return err
	}
	_, _, err = wasmmodule.LoadAll(os.DirFS(dir))
	return err
}
