package web_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The browser module's budget: what a visitor downloads before the first
// decode. The floor (an empty program using syscall/js) is about 570 KB.
const wasmGzipBudget = 800_000

// bannedWasmDeps keeps the browser module small and its boundary honest.
var bannedWasmDeps = map[string]string{
	"fmt":                        "pulls in reflection-based formatting: about +100 KB gzipped; codecs use strconv",
	"encoding/json":              "reflection again; JSON comes from codecs.AppendJSON and the engine's JSON.parse",
	"net/http":                   "the page talks to the relay with the browser's WebSocket, in JS",
	"log":                        "drags in fmt; the module reports through return values",
	"text/template":              "pages are rendered by the server (templ), never in the module",
	"html/template":              "pages are rendered by the server (templ), never in the module",
	"github.com/coder/websocket": "+2.9 MB; the browser's own WebSocket is used from JS",
	"net/netip":                  "with time, about +100 KB; web/pcapng parses addresses itself",
}

func TestWasmDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
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

func TestWasmSize(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("static", "querylens.wasm"))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("web/static/querylens.wasm is not built (run bash scripts/build-wasm.sh before the tests): %v", err)
		}
		t.Skip("web/static/querylens.wasm not built; run bash scripts/build-wasm.sh")
	}
	// What the server sends: the build's precompressed querylens.wasm.gz
	// (assets.go), else its own gzip at the default level.
	served, err := os.ReadFile(filepath.Join("static", "querylens.wasm.gz"))
	how := "precompressed by the build"
	if err != nil {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		zw.Write(b)
		zw.Close()
		served, how = buf.Bytes(), "gzipped by the server"
	}
	t.Logf("querylens.wasm: %d bytes, %d %s (budget %d)", len(b), len(served), how, wasmGzipBudget)
	if len(served) > wasmGzipBudget {
		t.Errorf("querylens.wasm is %d bytes %s, over the %d budget", len(served), how, wasmGzipBudget)
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
