package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFamiliesOverlay builds the overlay of renamed codec copies from the
// repository's own codecs: every copy renames its Protocol constant, and
// codecs/all imports every copy after the packages it had.
func TestFamiliesOverlay(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, err := familiesOverlay(root, dir, []string{"quake3", "a2s", "quake3"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var o struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"quake3x1", "a2sx2", "quake3x3"} {
		found := false
		for target, file := range o.Replace {
			if filepath.Dir(target) != filepath.Join(root, "codecs", name) {
				continue
			}
			if strings.HasSuffix(target, "_test.go") {
				t.Errorf("%s: a test file copied", target)
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), `const Protocol = "`+name+`"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("codecs/%s: no file with its renamed Protocol constant", name)
		}
	}
	all, err := os.ReadFile(o.Replace[filepath.Join(root, "codecs", "all", "all.go")])
	if err != nil {
		t.Fatal(err)
	}
	s := string(all)
	zan := strings.Index(s, `"github.com/querylens/querylens/codecs/zandronum"`)
	last := strings.Index(s, `"github.com/querylens/querylens/codecs/quake3x3"`)
	if zan < 0 || last < zan || !strings.Contains(s, `_ "github.com/querylens/querylens/codecs/a2sx2"`) {
		t.Errorf("codecs/all/all.go with the copies:\n%s", s)
	}

	if _, err := familiesOverlay(root, dir, []string{"nosuchcodec"}); err == nil {
		t.Error("a codec that does not exist: no error")
	}
	if _, ok := renameProtocol("package x\n\nconst Protocol = \"other\"\n", "x", "xx1"); ok {
		t.Error("renameProtocol renamed another package's constant")
	}
	// A package that registers more than one protocol (quake3 and FiveM,
	// quake2 and QuakeWorld): each name renamed, or the copy registers a
	// name twice and the module panics as it starts.
	for _, c := range []struct{ src, want string }{
		{"const Protocol = \"quake3\"\n\nconst ProtocolFiveM = \"fivem\"\n", "const Protocol = \"quake3x3\"\n\nconst ProtocolFiveM = \"fivemx3\"\n"},
		{"const (\n\tProtocol           = \"quake2\"     // Quake II\n\tProtocolQuakeWorld = \"quakeworld\"\n)\n",
			"const (\n\tProtocol           = \"quake2x3\"     // Quake II\n\tProtocolQuakeWorld = \"quakeworldx3\"\n)\n"},
	} {
		old := "quake3"
		if strings.Contains(c.src, "quake2") {
			old = "quake2"
		}
		got, ok := renameProtocol(c.src, old, old+"x3")
		if !ok || got != c.want {
			t.Errorf("renameProtocol(%q) = %q, %v; want %q", c.src, got, ok, c.want)
		}
	}
}

// TestFloorServe serves the floor's files as the browser page's: hashed
// names cached for good, the page revalidated, the module brotli only.
func TestFloorServe(t *testing.T) {
	f := &floorSite{files: map[string]floorFile{
		"/":                     {ctype: "text/html; charset=utf-8", body: []byte("<p>")},
		"/querylens.floor.wasm": {ctype: "application/wasm", coding: "br", body: []byte{1, 2, 3}, immutable: true},
	}}
	get := func(path string, hd map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		for k, v := range hd {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		return w
	}
	w := get("/querylens.floor.wasm", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	if w.Code != 200 || w.Header().Get("Content-Encoding") != "br" || !strings.Contains(w.Header().Get("Cache-Control"), "immutable") || w.Body.Len() != 3 {
		t.Errorf("module: %d %v", w.Code, w.Header())
	}
	if w := get("/querylens.floor.wasm", map[string]string{"Accept-Encoding": "br", "If-None-Match": w.Header().Get("ETag")}); w.Code != http.StatusNotModified {
		t.Errorf("module revalidated: %d", w.Code)
	}
	if w := get("/querylens.floor.wasm", nil); w.Code != http.StatusNotAcceptable {
		t.Errorf("module without brotli: %d", w.Code)
	}
	if w := get("/", nil); w.Code != 200 || w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("Cross-Origin-Embedder-Policy") != "require-corp" {
		t.Errorf("page: %d %v", w.Code, w.Header())
	}
	if w := get("/nothing", nil); w.Code != http.StatusNotFound {
		t.Errorf("unknown path: %d", w.Code)
	}
}

// TestFamilyShares drops one family's import from codecs/all and reports
// the families' shares with their goal: the largest share decides it.
func TestFamilyShares(t *testing.T) {
	src := "package all\n\nimport (\n\t_ \"github.com/querylens/querylens/codecs/a2s\"\n\t_ \"github.com/querylens/querylens/codecs/ogp\"\n)\n"
	got, err := dropImport(src, "github.com/querylens/querylens/codecs/a2s")
	if err != nil || strings.Contains(got, "codecs/a2s") || !strings.Contains(got, "codecs/ogp") {
		t.Errorf("dropImport: %v\n%s", err, got)
	}
	if _, err := dropImport(src, "github.com/querylens/querylens/codecs/quake3"); err == nil {
		t.Error("dropImport of a package not imported: no error")
	}
	for _, tc := range []struct {
		worst int
		met   bool
	}{{39_000, true}, {41_500, false}} {
		e := testEnv()
		out := familySharesReport(e, []familyShare{
			{pkg: "github.com/querylens/querylens/codecs/a2s", size: 3_600_000, br: 760_000, dSize: 247_019, dBr: tc.worst},
			{pkg: "github.com/querylens/querylens/codecs/ogp", size: 3_650_000, br: 770_000, dSize: 197_019, dBr: 29_962},
		})
		if len(e.goals) != 1 || e.goals[0].met != tc.met || !strings.Contains(e.goals[0].result, "largest codecs/a2s") {
			t.Errorf("worst %d: goals %+v", tc.worst, e.goals)
		}
		if !strings.Contains(out, "| `codecs/ogp` | 3,650,000 | 770,000 | 197,019 | 29,962 |") {
			t.Errorf("worst %d: table:\n%s", tc.worst, out)
		}
	}
}
