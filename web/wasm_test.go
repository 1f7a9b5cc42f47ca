package web_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/internal/wasmmodule"
	"github.com/querylens/querylens/web"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// The browser module's budget in bytes of brotli: wasmmodule.Budget of the
// protocol families (codec packages) registered (TestWasmBudget).
var (
	wasmFamilies     = wasmmodule.Families(codecs.Protocols())
	wasmBrotliBudget = wasmmodule.Budget(len(wasmFamilies))
)

// bannedWasmDeps keeps the browser module small and its boundary honest.
var bannedWasmDeps = map[string]string{
	"fmt":                        "pulls in reflection-based formatting: about +100 KB gzipped; codecs use strconv",
	"encoding/json":              "reflection again; JSON comes from codecs.AppendJSON and the engine's JSON.parse",
	"net/http":                   "the page talks to the relay with the browser's WebSocket, in JS",
	"log":                        "drags in fmt; the module reports through return values",
	"text/template":              "pages are rendered by the server (templ), never in the module",
	"html/template":              "pages are rendered by the server (templ), never in the module",
	"github.com/coder/websocket": "+2.9 MB; the browser's own WebSocket is used from JS",
	"net/netip":                  "with time, about +100 KB; pcapng parses addresses itself",
	"compress/bzip2":             "with hash/crc32, the A2S family was 55,214 bytes of brotli (its share is 40,000); codecs/a2s has its own small bzip2 decoder",
	"hash/crc32":                 "slicing-by-8 tables for a few hundred bytes; codecs/a2s has a one-table IEEE CRC32",
}

func TestWasmDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to list the module's dependencies: ", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./wasm")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	importers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			importers[imp] = append(importers[imp], f[0])
		}
	}
	for dep, why := range bannedWasmDeps {
		if _, ok := importers[dep]; ok {
			t.Errorf("the wasm module depends on %s (through %s): %s", dep, importChain(importers, dep), why)
		}
	}
}

// TestWasmBudget: what a visitor downloads before the first decode, on the
// brotli bytes the server actually sends (every current browser accepts
// brotli over HTTPS; the gzip fallback has no budget), within
// wasmmodule.Budget of the number of protocol families (codec packages) in
// the registry: 40 KB more for each. The files are committed and made by
// Go code pinned in go.mod, so the result is the same on every machine.
func TestWasmBudget(t *testing.T) {
	h := newHandler(t)
	page := get(t, h, "/")
	url := ht.Attr(ht.Parse(t, page.Body.Bytes()).Tags("html")[0], "data-wasm")
	if !strings.HasPrefix(url, "/static/querylens.") {
		t.Fatalf("the page links the module as %q", url)
	}
	m, err := web.Module()
	if err != nil {
		t.Fatal(err)
	}
	families, budget := wasmFamilies, wasmBrotliBudget
	if len(families) == 0 {
		t.Fatal("no codec registered")
	}
	rec := get(t, h, url, "Accept-Encoding", "br")
	if got := rec.Header().Get("Content-Encoding"); rec.Code != 200 || got != "br" {
		t.Fatalf("%d, Content-Encoding %q", rec.Code, got)
	}
	n := rec.Body.Len()
	t.Logf("querylens.wasm: %d bytes, sent as %d bytes of brotli; budget %d for %d protocol families %q (%s)",
		m.Size, n, budget, len(families), families, m.Brotli.Encoder)
	if n > budget {
		t.Errorf("querylens.wasm is sent as %d bytes of brotli, %d over the budget of %d for %d protocol families "+
			"(%d empty program + %d shared + %d capture reader + %d × %d per family; internal/wasmmodule/budget.go)",
			n, n-budget, budget, len(families), wasmmodule.BudgetEmpty, wasmmodule.BudgetShared, wasmmodule.BudgetCapture,
			len(families), wasmmodule.BudgetPerFamily)
	}
}

// importChain names the path from one of this module's packages down to
// dep, so the failure says which package to fix.
func importChain(importers map[string][]string, dep string) string {
	chain := []string{dep}
	seen := map[string]bool{dep: true}
	for cur := dep; !strings.HasPrefix(cur, "github.com/querylens/"); {
		next := ""
		for _, by := range importers[cur] {
			if !seen[by] {
				next = by
				if strings.HasPrefix(by, "github.com/querylens/") {
					break
				}
			}
		}
		if next == "" {
			break
		}
		seen[next] = true
		chain = append([]string{next}, chain...)
		cur = next
	}
	return strings.Join(chain, " → ")
}

// TestFooter: every page says which server and which browser module it is.
func TestFooter(t *testing.T) {
	m, err := web.Module()
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t)
	for _, path := range []string{"/", "/inspect", "/nosuch"} {
		d := ht.Parse(t, get(t, h, path).Body.Bytes())
		if got, want := ht.Text(d.TestID(t, "build-info")), "querylens devel · module "+m.SHA256[:12]; got != want {
			t.Errorf("%s: footer %q, want %q", path, got, want)
		}
	}
}

// TestBuildWasmSources: the Taskfile's build:wasm sources cover every
// package of this module compiled into the browser module or into the
// command that compresses it, so a change to any of them rebuilds it.
func TestBuildWasmSources(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to list the module's packages: ", err)
	}
	taskfile, err := os.ReadFile("../Taskfile.yml")
	if err != nil {
		t.Fatal(err)
	}
	sources := taskSources(t, string(taskfile), "build:wasm")
	for _, want := range []string{"go.mod", "go.sum", "scripts/build-wasm.sh"} {
		if !slices.Contains(sources, want) {
			t.Errorf("build:wasm sources lack %s", want)
		}
	}
	for _, tc := range []struct {
		pkg  string
		goos string
	}{{"./wasm", "js"}, {"./internal/cmd/precompress", ""}} {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", tc.pkg)
		cmd.Dir = ".."
		cmd.Env = os.Environ()
		if tc.goos == "js" {
			cmd.Env = append(cmd.Env, "GOOS=js", "GOARCH=wasm")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			dir, ok := strings.CutPrefix(p, "github.com/querylens/querylens/")
			if !ok {
				continue // a dependency: go.sum covers it
			}
			if !covered(sources, dir) {
				t.Errorf("%s is compiled into %s but no build:wasm source covers %s/*.go: add '%s/**/*.go' to Taskfile.yml", p, tc.pkg, dir, dir)
			}
		}
	}
}

// taskSources returns the flow list of a task's sources: line.
func taskSources(t *testing.T, taskfile, task string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(taskfile, "\n  "+task+":\n")
	if !ok {
		t.Fatalf("Taskfile.yml has no task %s", task)
	}
	for _, line := range strings.Split(rest, "\n") {
		if len(line) > 0 && !strings.HasPrefix(line, "   ") {
			break // the next task
		}
		if l, ok := strings.CutPrefix(strings.TrimSpace(line), "sources:"); ok {
			l = strings.Trim(strings.TrimSpace(l), "[]")
			var out []string
			for _, s := range strings.Split(l, ",") {
				out = append(out, strings.Trim(strings.TrimSpace(s), `'"`))
			}
			return out
		}
	}
	t.Fatalf("task %s has no one-line sources: [...] list", task)
	return nil
}

// covered reports whether a source glob matches the .go files of dir.
func covered(sources []string, dir string) bool {
	for _, s := range sources {
		if prefix, ok := strings.CutSuffix(s, "/**/*.go"); ok && (dir == prefix || strings.HasPrefix(dir, prefix+"/")) {
			return true
		}
		if prefix, ok := strings.CutSuffix(s, "/*.go"); ok && dir == prefix {
			return true
		}
	}
	return false
}
