package web_test

import (
	"encoding/json"
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
// wasmmodule.Budget of the number of protocol families (codec packages) the
// combined module holds: 40 KB more for each; each family's own module
// within wasmmodule.FamilyBudget, its share (the module less the module of
// no family the index measures) within BudgetFamilyAlone, and that module
// of no family within EmptyMeasured + BudgetShared. The files are committed
// and made by Go code pinned in go.mod, so the result is the same on every
// machine.
func TestWasmBudget(t *testing.T) {
	h := newHandler(t)
	page := get(t, h, "/")
	html := ht.Parse(t, page.Body.Bytes()).Tags("html")[0]
	url := ht.Attr(html, "data-wasm")
	if !strings.HasPrefix(url, "/static/querylens.") {
		t.Fatalf("the page links the module as %q", url)
	}
	var boot struct {
		Decoders struct {
			Combined  string            `json:"combined"`
			Protocols map[string]string `json:"protocols"`
		} `json:"decoders"`
	}
	if err := json.Unmarshal([]byte(ht.Attr(html, "data-boot")), &boot); err != nil {
		t.Fatal(err)
	}
	if boot.Decoders.Combined != url {
		t.Errorf("the worker's combined module is %q, the page's %q", boot.Decoders.Combined, url)
	}
	x, err := web.Modules()
	if err != nil {
		t.Fatal(err)
	}
	families := wasmFamilies
	if len(families) == 0 {
		t.Fatal("no codec registered")
	}
	if len(x.Modules) != len(families)+1 {
		t.Errorf("%d modules, want the combined one and one for each of the %d families %q", len(x.Modules), len(families), families)
	}
	for _, e := range x.Modules {
		u, budget := url, wasmBrotliBudget
		if !e.Combined {
			budget = wasmmodule.FamilyBudget()
			if x.Base == nil {
				t.Fatal("the index does not measure the module of no family")
			}
			if share := e.Brotli - x.Base.Brotli; share > wasmmodule.BudgetFamilyAlone {
				t.Errorf("%s adds %d bytes of brotli to the module of no family, %d over its share of %d (wasmmodule.BudgetFamilyAlone)",
					e.Module, share, share-wasmmodule.BudgetFamilyAlone, wasmmodule.BudgetFamilyAlone)
			} else {
				t.Logf("%s: share %d bytes of brotli (of %d)", e.Module, share, wasmmodule.BudgetFamilyAlone)
			}
			u = ""
			for _, p := range e.Protocols {
				if u == "" {
					u = boot.Decoders.Protocols[p]
				} else if boot.Decoders.Protocols[p] != u {
					t.Errorf("%s: protocol %s is sent to %q, not %q", e.Module, p, boot.Decoders.Protocols[p], u)
				}
			}
			if !strings.HasPrefix(u, "/static/"+strings.TrimSuffix(e.Module, ".wasm")+".") {
				t.Errorf("%s: the page sends its protocols %q to %q", e.Module, e.Protocols, u)
				continue
			}
		} else if !slices.Equal(e.Families, families) {
			t.Errorf("the combined module holds %q, the registry %q", e.Families, families)
		}
		rec := get(t, h, u, "Accept-Encoding", "br")
		if got := rec.Header().Get("Content-Encoding"); rec.Code != 200 || got != "br" {
			t.Fatalf("%s: %d, Content-Encoding %q", u, rec.Code, got)
		}
		n := rec.Body.Len()
		t.Logf("%s: %d bytes, sent as %d bytes of brotli; budget %d (%d protocol families %q)",
			e.Module, e.Size, n, budget, len(e.Families), e.Families)
		if n != e.Brotli {
			t.Errorf("%s: sent %d bytes of brotli, the index says %d", e.Module, n, e.Brotli)
		}
		if n > budget && e.Combined {
			t.Errorf("%s is sent as %d bytes of brotli, %d over the budget of %d for %d protocol families "+
				"(%d empty program + %d shared + %d capture reader + %d × %d per family; internal/wasmmodule/budget.go)",
				e.Module, n, n-budget, budget, len(e.Families), wasmmodule.BudgetEmpty, wasmmodule.BudgetShared, wasmmodule.BudgetCapture,
				len(e.Families), wasmmodule.BudgetPerFamily)
		} else if n > budget {
			t.Errorf("%s is sent as %d bytes of brotli, %d over the budget of %d for a family's own module "+
				"(%d empty program + %d shared + %d for the family alone; internal/wasmmodule/budget.go)",
				e.Module, n, n-budget, budget, wasmmodule.BudgetEmpty, wasmmodule.BudgetShared, wasmmodule.BudgetFamilyAlone)
		}
	}
	// The shared code is the module of no family less the empty program
	// as measured (BudgetEmpty rounds that down).
	if x.Base != nil && x.Base.Brotli > wasmmodule.EmptyMeasured+wasmmodule.BudgetShared {
		t.Errorf("the module of no family is %d bytes of brotli, over the %d of an empty program (%d measured) and the shared code (%d)",
			x.Base.Brotli, wasmmodule.EmptyMeasured+wasmmodule.BudgetShared, wasmmodule.EmptyMeasured, wasmmodule.BudgetShared)
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
