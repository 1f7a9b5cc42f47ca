package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"github.com/querylens/querylens/internal/wasmmodule"
)

func staticMux(t *testing.T, a *assets) *http.ServeMux {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /static/{file...}", a)
	return mux
}

// embeddedStatic is the embedded static/ directory as a MapFS, for tests
// that break one file.
func embeddedStatic(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	sub, _ := fs.Sub(staticFS, "static")
	err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// firstFamilyModule is the name of the first family module the index lists.
func firstFamilyModule(t *testing.T, m fstest.MapFS) string {
	x, err := wasmmodule.LoadIndex(m)
	if err != nil || len(x.Modules) < 2 {
		t.Fatalf("no family module in the index: %v", err)
	}
	return x.Modules[1].Module
}

// TestMissingModule: a binary without a usable browser module is refused
// (New fails, so serve does not start), with an error saying how to build it.
func TestMissingModule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(fstest.MapFS)
		want    string // in the error
	}{
		{"no manifest", func(m fstest.MapFS) { delete(m, "querylens.wasm.json") }, "missing"},
		{"no brotli form", func(m fstest.MapFS) { delete(m, "querylens.wasm.br") }, "querylens.wasm.br"},
		{"gzip form cut short", func(m fstest.MapFS) { m["querylens.wasm.gz"].Data = m["querylens.wasm.gz"].Data[:100] }, "querylens.wasm.gz is 100 bytes"},
		{"manifest not JSON", func(m fstest.MapFS) { m["querylens.wasm.json"] = &fstest.MapFile{Data: []byte("{")} }, "querylens.wasm.json"},
		{"manifest of something else", func(m fstest.MapFS) { m["querylens.wasm.json"] = &fstest.MapFile{Data: []byte(`{"module":"x.wasm"}`)} }, "not a manifest"},
		{"no index of the modules", func(m fstest.MapFS) { delete(m, wasmmodule.IndexName) }, "missing"},
		{"a family module missing", func(m fstest.MapFS) { delete(m, firstFamilyModule(t, m)+".br") }, "querylens-"},
		{"a family module's manifest not the index's", func(m fstest.MapFS) {
			f := firstFamilyModule(t, m) + ".json"
			m[f].Data = bytes.Replace(m[f].Data, []byte(`"size": `), []byte(`"size": 1`), 1)
		}, "does not describe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := embeddedStatic(t)
			tc.breakIt(m)
			_, err := loadAssetsFS(m, slog.Default())
			if !errors.Is(err, ErrNoModule) || !strings.Contains(err.Error(), "go tool task build:wasm") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrNoModule naming %q and how to build", err, tc.want)
			}
		})
	}
	if _, err := loadAssetsFS(embeddedStatic(t), slog.Default()); err != nil {
		t.Errorf("the embedded files: %v", err)
	}
}

// TestModuleDecompresses: both committed forms of each module are the
// module its manifest describes.
func TestModuleDecompresses(t *testing.T) {
	sub, _ := fs.Sub(staticFS, "static")
	_, mods, err := wasmmodule.LoadAll(sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		gz, err := m.Gunzip()
		if err != nil {
			t.Fatal(err)
		}
		br, err := m.Unbrotli()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gz, br) || !bytes.HasPrefix(gz, []byte("\x00asm")) {
			t.Errorf("%s: the brotli and gzip forms differ, or are not WebAssembly", m.Module)
		}
		// A local build leaves the raw module beside them: it must be the same.
		if raw, err := os.ReadFile("static/" + m.Module); err == nil && !bytes.Equal(raw, gz) {
			t.Errorf("web/static/%s is not the committed module: run go tool task build:wasm and commit web/static", m.Module)
		}
	}
}

// TestEveryStaticFileEmbedded: the embed patterns cover every file in
// static/ but the raw modules (served from their gzip forms).
func TestEveryStaticFileEmbedded(t *testing.T) {
	ents, err := os.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || (path.Ext(e.Name()) == ".wasm" && wasmmodule.IsModuleFile(e.Name()+".json")) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := staticFS.Open("static/" + e.Name()); err != nil {
			t.Errorf("static/%s is not embedded: add a pattern to the go:embed line in assets.go", e.Name())
		}
	}
}

// TestBootInlinable checks that boot.js, which the browse page inlines in
// a <script> element as it is, cannot end that element early or put the
// HTML parser in a script-data escape state, and is a classic script.
func TestBootInlinable(t *testing.T) {
	a, err := loadAssets(slog.New(slog.DiscardHandler), "")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ToLower(a.Source("boot.js"))
	if src == "" {
		t.Fatal("no static/boot.js")
	}
	for _, bad := range []string{"</script", "<!--", "<script"} {
		if strings.Contains(src, bad) {
			t.Errorf("boot.js contains %q: it cannot be inlined as it is", bad)
		}
	}
	if regexp.MustCompile(`(?m)^\s*(import|export)\b`).MatchString(src) {
		t.Errorf("boot.js imports or exports: the page runs it as a classic script")
	}
}

func TestHashedName(t *testing.T) {
	for in, want := range map[string]string{
		"app.css":        "app.0123.css",
		"querylens.d.ts": "querylens.0123.d.ts",
		"querylens.wasm": "querylens.0123.wasm",
		"noext":          "noext.0123",
		"dir/browse.js":  "dir/browse.0123.js",
	} {
		if got := hashedName(in, "0123"); got != want {
			t.Errorf("hashedName(%q) = %q, want %q", in, got, want)
		}
	}
}

func decodeBody(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(b)
	switch coding {
	case "br":
		r = brotli.NewReader(r)
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "":
	default:
		t.Fatalf("unexpected Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s body: %v", coding, err)
	}
	return out
}

// TestModuleServed: the browser module goes out as brotli to clients that
// take it, else gzip, else uncompressed, always the same module, with the
// headers a cache and WebAssembly.instantiateStreaming need.
func TestModuleServed(t *testing.T) {
	a, err := loadAssets(slog.Default(), "")
	if err != nil {
		t.Fatal(err)
	}
	mux := staticMux(t, a)
	url := a.URL("querylens.wasm")
	if url != "/static/querylens."+a.module.SHA256[:12]+".wasm" {
		t.Fatalf("URL = %q, want the module's hash in it", url)
	}
	sub, _ := fs.Sub(staticFS, "static")
	m, _ := wasmmodule.Load(sub)
	want, err := m.Gunzip()
	if err != nil {
		t.Fatal(err)
	}
	etags := map[string]string{}
	for _, tc := range []struct {
		accept string
		coding string
	}{
		{"gzip, deflate, br, zstd", "br"}, // Chromium's
		{"br", "br"},
		{"gzip", "gzip"},
		{"br;q=0, gzip", "gzip"},
		{"gzip;q=1, br;q=0.5", "gzip"},
		{"br;q=0.5, gzip;q=0.5", "br"}, // a tie goes to the smaller
		{"*", "br"},
		{"", ""},
		{"identity", ""},
		{"gzip;q=0, br;q=0", ""},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Accept-Encoding", tc.accept)
			mux.ServeHTTP(rec, req)
			h := rec.Header()
			if rec.Code != 200 || h.Get("Content-Encoding") != tc.coding {
				t.Fatalf("%d, Content-Encoding %q; want 200, %q", rec.Code, h.Get("Content-Encoding"), tc.coding)
			}
			if h.Get("Content-Type") != "application/wasm" || h.Get("Vary") != "Accept-Encoding" ||
				h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("headers %v", h)
			}
			if got := decodeBody(t, tc.coding, rec.Body.Bytes()); !bytes.Equal(got, want) {
				t.Errorf("the %q body does not decode to the module", tc.coding)
			}
			if e, ok := etags[tc.coding]; ok && e != h.Get("ETag") {
				t.Errorf("ETag %s, earlier %s for the same form", h.Get("ETag"), e)
			}
			etags[tc.coding] = h.Get("ETag")

			// The same request revalidated: 304, no body.
			req.Header.Set("If-None-Match", h.Get("ETag"))
			rec = httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
				t.Errorf("If-None-Match: %d with %d bytes", rec.Code, rec.Body.Len())
			}
		})
	}
	if len(etags) != 3 || etags["br"] == etags["gzip"] || etags["gzip"] == etags[""] {
		t.Errorf("each form needs its own ETag: %v", etags)
	}

	// HEAD and a range of the brotli form.
	req := httptest.NewRequest("HEAD", url, nil)
	req.Header.Set("Accept-Encoding", "br")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != strconv.Itoa(len(m.Brotli)) {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %s", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
	req = httptest.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "br")
	req.Header.Set("Range", "bytes=0-9")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusPartialContent || !bytes.Equal(rec.Body.Bytes(), m.Brotli[:10]) {
		t.Errorf("Range: %d %x", rec.Code, rec.Body.Bytes())
	}
}

// TestStaticImports: a page script's preloads are the modules it imports
// statically and what they import (depth first, each once); dynamic
// imports, JSDoc type imports and comments do not count.
func TestStaticImports(t *testing.T) {
	got := staticImports([]byte("// @ts-check\n// import { no } from \"./comment.js\";\n" +
		"import { a, b } from \"./a.js\";\nimport {\n  c,\n} from './c.js';\nexport { d } from \"./d.js\";\n" +
		"export * from \"./a.js\";\nimport \"./side.js\";\nconst x = await import(\"./dyn.js\");\n" +
		"/** @type {import(\"./t.js\").T} */\nexport const s = \"./not.js\";\n"))
	if want := []string{"a.js", "c.js", "d.js", "side.js"}; !slices.Equal(got, want) {
		t.Errorf("staticImports = %q, want %q", got, want)
	}

	a, err := loadAssets(slog.New(slog.DiscardHandler), "")
	if err != nil {
		t.Fatal(err)
	}
	browse := a.Imports("browse.js")
	for _, m := range []string{"ql.js", "model.js", "live.js", "browse-table.js", "browse-asks.js", "browse-hold.js"} {
		if !slices.Contains(browse, m) {
			t.Errorf("Imports(browse.js) = %q: no %s", browse, m)
		}
	}
	if slices.Contains(browse, "relay.js") || slices.Contains(browse, "browse.js") {
		t.Errorf("Imports(browse.js) = %q: the worker's relay.js, or the script itself", browse)
	}
	// What a person uses once rows are shown loads after the page's start
	// (browse.js imports it dynamically): it is not preloaded.
	for _, m := range []string{"browse-input.js", "browse-picker.js", "browse-favourites.js", "browse-detail.js"} {
		if slices.Contains(browse, m) {
			t.Errorf("Imports(browse.js) = %q: %s is on the first rows' path", browse, m)
		}
	}
	relay := a.Imports("relay.js")
	for _, m := range []string{"model.js", "relay-client.js", "relay-converse.js", "relay-batch.js"} {
		if !slices.Contains(relay, m) {
			t.Errorf("Imports(relay.js) = %q: no %s", relay, m)
		}
	}
	for _, m := range browse {
		if a.files[m] == nil {
			t.Errorf("Imports(browse.js) lists %s, which is not a static file", m)
		}
	}
}

// TestModuleFor: the module a page of these protocols loads first is their
// family's when they are of one, else the combined one; every protocol of
// the registry has a family module, which the server sends.
func TestModuleFor(t *testing.T) {
	a, err := loadAssets(slog.Default(), "")
	if err != nil {
		t.Fatal(err)
	}
	x, err := Modules()
	if err != nil {
		t.Fatal(err)
	}
	mods := a.ModuleMap()
	for _, e := range x.Modules[1:] {
		for _, p := range e.Protocols {
			if mods[p] != e.Module {
				t.Errorf("ModuleMap()[%s] = %q, want %q", p, mods[p], e.Module)
			}
			if got := a.ModuleFor(p, p); got != e.Module {
				t.Errorf("ModuleFor(%s) = %q, want %q", p, got, e.Module)
			}
			if a.URL(e.Module) == "/static/"+e.Module {
				t.Errorf("%s has no hashed URL: it is not served", e.Module)
			}
		}
	}
	two := x.Modules[1:3]
	for _, tc := range []struct {
		protocols []string
		want      string
	}{
		{nil, wasmmodule.Name},
		{[]string{two[0].Protocols[0], two[1].Protocols[0]}, wasmmodule.Name},
		{[]string{two[0].Protocols[0], "no-such-protocol"}, wasmmodule.Name},
	} {
		if got := a.ModuleFor(tc.protocols...); got != tc.want {
			t.Errorf("ModuleFor(%q) = %q, want %q", tc.protocols, got, tc.want)
		}
	}
}

// TestLinkModules: a module imports the static/ modules by their hashed
// names, and its own hash changes with any module it imports, to the end,
// even where the imports go in a circle; a module that imports none keeps
// the hash of its text.
func TestLinkModules(t *testing.T) {
	table := func(b string) *assetTable {
		a := &assetTable{files: map[string]*asset{}, hashed: map[string]*asset{}}
		for name, body := range map[string]string{
			"a.js": "import { b } from \"./b.js\";\nimport \"./none.js\";\nconst u = import(\"./c.js\");\n",
			"b.js": "import { a } from \"./a.js\";\nexport * from \"./c.js\";\n" + b,
			"c.js": "export const c = 1;\n",
		} {
			sum := sha256.Sum256([]byte(body))
			x := &asset{name: name, hash: hex.EncodeToString(sum[:6]), ctype: contentType(name), imports: staticImports([]byte(body))}
			x.plain = func() ([]byte, error) { return []byte(body), nil }
			a.add(x)
		}
		a.linkModules()
		return a
	}
	one, two := table(""), table("// changed\n")
	body := func(a *assetTable, n string) string {
		b, _ := a.files[n].plain()
		return string(b)
	}
	c := hashedName("c.js", one.files["c.js"].hash)
	want := "import { b } from \"./" + hashedName("b.js", one.files["b.js"].hash) + "\";\nimport \"./none.js\";\nconst u = import(\"./c.js\");\n"
	if got := body(one, "a.js"); got != want {
		t.Errorf("a.js served as %q, want %q", got, want)
	}
	if got := body(one, "b.js"); !strings.Contains(got, "\"./"+c+"\"") || !strings.Contains(got, "\"./"+hashedName("a.js", one.files["a.js"].hash)+"\"") {
		t.Errorf("b.js served as %q, want its imports by hashed name", got)
	}
	if one.files["c.js"].hash != two.files["c.js"].hash {
		t.Error("c.js's hash changed with b.js, which it does not import")
	}
	for _, n := range []string{"a.js", "b.js"} {
		if one.files[n].hash == two.files[n].hash {
			t.Errorf("%s's hash did not change with b.js's text", n)
		}
		if one.hashed[hashedName(n, one.files[n].hash)] != one.files[n] || len(one.hashed) != len(one.files) {
			t.Errorf("%s is not served under its hashed name (or an old name is)", n)
		}
	}
}
