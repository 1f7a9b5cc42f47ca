package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/querylens/querylens/internal/wasmmodule"
)

// The browser modules the start section opens the page with besides the
// build's own: the same page with a module of twelve more protocol
// families, and any module given by a flag. A module reaches the page the
// way the command serves it: embedded in a querylens binary, which this
// builds with `go build -overlay` putting the module's precompressed files
// (internal/cmd/precompress) in place of web/static/querylens.wasm.{br,gz,json},
// and the modules' index (querylens.modules.json) with its combined entry
// describing that module (the server refuses an index that disagrees with
// its modules). Nothing is written into the source tree.

// extraFamilies are the codec packages copied, in order, for the module of
// twelve more families: eight of today's once, then the four largest of
// them again.
var extraFamilies = []string{"a2s", "bloodmasters", "gamespy1", "gamespy2", "gamespy3", "ogp", "quake3", "zandronum", "a2s", "ogp", "quake3", "zandronum"}

// embeddedModule lists the files of web/static a querylens binary embeds
// as its browser module.
var embeddedModule = []string{"querylens.wasm.br", "querylens.wasm.gz", "querylens.wasm.json"}

// wasmBuildEnv is scripts/build-wasm.sh's environment for the module.
func (e *env) wasmBuildEnv() ([]string, error) {
	gover, err := goLine(filepath.Join(e.root, "go.mod"))
	if err != nil {
		return nil, err
	}
	return []string{"GOTOOLCHAIN=go" + gover, "GOFLAGS=-mod=readonly", "GOEXPERIMENT=", "CGO_ENABLED=0", "GOOS=js", "GOARCH=wasm", "GOWASM="}, nil
}

// buildWasm builds pkg for js/wasm as scripts/build-wasm.sh builds the
// browser module, with an overlay file if given ("": none), into out.
func (e *env) buildWasm(ctx context.Context, pkg, overlay, out string) error {
	env, err := e.wasmBuildEnv()
	if err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	_, err = e.command(ctx, env, "go", append(args, pkg)...)
	return err
}

// familiesOverlay writes, under dir, the go build -overlay file that adds
// copies of the codec packages named in families to the module: package
// codecs/<name>x<i> for the i-th (from 1), each registering itself as
// "<name>x<i>" (its Protocol constant renamed), all imported by
// codecs/all. It returns the overlay file's path.
func familiesOverlay(root, dir string, families []string) (string, error) {
	replace := map[string]string{}
	var imports []string
	for i, f := range families {
		name := fmt.Sprintf("%sx%d", f, i+1)
		src := filepath.Join(root, "codecs", f)
		ents, err := os.ReadDir(src)
		if err != nil {
			return "", err
		}
		renamed := false
		for _, ent := range ents {
			fn := ent.Name()
			if ent.IsDir() || !strings.HasSuffix(fn, ".go") || strings.HasSuffix(fn, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, fn))
			if err != nil {
				return "", err
			}
			s, ok := renameProtocol(string(b), f, name)
			renamed = renamed || ok
			out := filepath.Join(dir, name+"_"+fn)
			if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
				return "", err
			}
			replace[filepath.Join(root, "codecs", name, fn)] = out
		}
		if !renamed {
			return "", fmt.Errorf("codecs/%s: no `const Protocol = %q` to rename", f, f)
		}
		imports = append(imports, fmt.Sprintf("\t_ \"github.com/querylens/querylens/codecs/%s\"\n", name))
	}
	allPath := filepath.Join(root, "codecs", "all", "all.go")
	all, err := os.ReadFile(allPath)
	if err != nil {
		return "", err
	}
	s, err := addImports(string(all), imports)
	if err != nil {
		return "", fmt.Errorf("codecs/all/all.go: %w", err)
	}
	out := filepath.Join(dir, "all.go")
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		return "", err
	}
	replace[allPath] = out
	return writeOverlay(filepath.Join(dir, "overlay.json"), replace)
}

// protocolConst is a codec package's protocol name constant: Protocol, or
// another protocol the package registers beside it (ProtocolFiveM), alone
// or in a const block.
var protocolConst = regexp.MustCompile(`(?m)^(const |\t)(Protocol\w*)(\s*)= "([a-z0-9]+)"`)

// renameProtocol renames the codec package's Protocol constant from old to
// name, reporting whether it found it, and every other protocol name the
// package registers (ProtocolFiveM) by the same suffix, so that the copy
// registers no name twice.
func renameProtocol(src, old, name string) (string, bool) {
	suffix, ok := strings.CutPrefix(name, old)
	if !ok {
		suffix = "_" + name
	}
	found := false
	s := protocolConst.ReplaceAllStringFunc(src, func(m string) string {
		sub := protocolConst.FindStringSubmatch(m)
		lead, ident, space, value := sub[1], sub[2], sub[3], sub[4]
		switch {
		case ident == "Protocol" && value == old:
			found = true
			value = name
		case ident == "Protocol":
			return m // another package's constant
		default:
			value += suffix
		}
		return lead + ident + space + `= "` + value + `"`
	})
	return s, found
}

// addImports adds import lines to the end of a Go file's one import block.
func addImports(src string, lines []string) (string, error) {
	i := strings.Index(src, "\nimport (\n")
	if i < 0 {
		return "", fmt.Errorf("no import block")
	}
	j := strings.Index(src[i:], "\n)\n")
	if j < 0 {
		return "", fmt.Errorf("import block not closed")
	}
	j += i + 1
	return src[:j] + strings.Join(lines, "") + src[j:], nil
}

func writeOverlay(path string, replace map[string]string) (string, error) {
	b, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "\t")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

// servedModule is a browser module as a querylens binary serves it.
type servedModule struct {
	wasm string // the module, uncompressed
	bin  string // a querylens binary embedding it
	size int    // bytes, uncompressed
	br   int    // bytes, brotli (as served)
}

// embedModule precompresses the module wasm into dir and builds a querylens
// binary that embeds it instead of web/static's (go build -overlay).
func (e *env) embedModule(ctx context.Context, wasm, dir string) (*servedModule, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := e.command(ctx, nil, "go", "run", "./internal/cmd/precompress", "-in", wasm, "-dir", dir, "-build", "benchreport: "+filepath.Base(wasm)); err != nil {
		return nil, err
	}
	replace := map[string]string{}
	for _, f := range embeddedModule {
		target := filepath.Join(e.root, "web", "static", f)
		if _, err := os.Stat(target); err != nil {
			return nil, fmt.Errorf("the binary's module is no longer web/static/%s (%w): teach bench/cmd/benchreport/modules.go the new layout", f, err)
		}
		replace[target] = filepath.Join(dir, f)
	}
	// The index names the combined module's sizes: the one in the tree,
	// with its combined entry replaced by this module's.
	static := filepath.Join(e.root, "web", "static")
	x, err := wasmmodule.LoadIndex(os.DirFS(static))
	if err != nil {
		return nil, fmt.Errorf("the binary's module index (web/static/%s): %w", wasmmodule.IndexName, err)
	}
	m, err := wasmmodule.LoadNamed(os.DirFS(dir), wasmmodule.Name)
	if err != nil {
		return nil, err
	}
	x.Modules[0] = wasmmodule.EntryOf(m.Manifest)
	ib, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, wasmmodule.IndexName), append(ib, '\n'), 0o644); err != nil {
		return nil, err
	}
	replace[filepath.Join(static, wasmmodule.IndexName)] = filepath.Join(dir, wasmmodule.IndexName)
	overlay, err := writeOverlay(filepath.Join(dir, "embed-overlay.json"), replace)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "querylens")
	if _, err := e.command(ctx, nil, "go", "build", "-overlay", overlay, "-o", bin, "./cmd/querylens"); err != nil {
		return nil, err
	}
	var man struct {
		Size int `json:"size"`
		Br   struct {
			Size int `json:"size"`
		} `json:"br"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "querylens.wasm.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, err
	}
	return &servedModule{wasm: wasm, bin: bin, size: man.Size, br: man.Br.Size}, nil
}

// buildFamiliesModule builds the browser module (./wasm) with the families
// of extraFamilies added, and a querylens binary serving it.
func (e *env) buildFamiliesModule(ctx context.Context) (*servedModule, error) {
	dir := filepath.Join(e.tmp, "families")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	overlay, err := familiesOverlay(e.root, dir, extraFamilies)
	if err != nil {
		return nil, err
	}
	wasm := filepath.Join(dir, "querylens-20.wasm")
	if err := e.buildWasm(ctx, "./wasm", overlay, wasm); err != nil {
		return nil, err
	}
	return e.embedModule(ctx, wasm, filepath.Join(dir, "served"))
}

// moduleSizes reads the build's own module's sizes from its manifest.
func (e *env) moduleSizes() (size, br int, err error) {
	var man struct {
		Size int `json:"size"`
		Br   struct {
			Size int `json:"size"`
		} `json:"br"`
	}
	b, err := os.ReadFile(filepath.Join(e.root, "web", "static", "querylens.wasm.json"))
	if err != nil {
		return 0, 0, err
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return 0, 0, err
	}
	return man.Size, man.Br.Size, nil
}
