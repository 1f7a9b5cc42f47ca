package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMissingWasm: a server built without scripts/build-wasm.sh says so.
func TestMissingWasm(t *testing.T) {
	a, err := loadAssets(slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	delete(a.files, "querylens.wasm")
	delete(a.files, "wasm_exec.js")
	mux := http.NewServeMux()
	mux.Handle("GET /static/{file...}", a)
	for _, name := range []string{"querylens.wasm", "wasm_exec.js"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/static/"+name, nil))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "build-wasm.sh") {
			t.Errorf("%s: %d %q", name, rec.Code, rec.Body)
		}
		if got := a.URL(name); got != "/static/"+name {
			t.Errorf("URL(%s) = %q, want the plain name", name, got)
		}
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

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"":                    false,
		"gzip":                true,
		"deflate, gzip;q=1.0": true,
		"gzip;q=0":            false,
		"br, GZIP":            true,
		"*":                   true,
		"identity":            false,
		"gzip; q=0, deflate":  false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", h)
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}

// TestPrecompressedWasm: the build's querylens.wasm.gz is what a gzip
// client receives, and a stale one is not served.
func TestPrecompressedWasm(t *testing.T) {
	gz, err := staticFS.ReadFile("static/querylens.wasm.gz")
	if err != nil {
		t.Skip("querylens.wasm.gz not built; run bash scripts/build-wasm.sh")
	}
	a, err := loadAssets(slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/{file...}", a)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/static/querylens.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	mux.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(rec.Body.Bytes(), gz) {
		t.Errorf("served %d bytes (%q), want the %d precompressed bytes", rec.Body.Len(), rec.Header().Get("Content-Encoding"), len(gz))
	}
	if _, ok := precompressed("static/querylens.wasm", []byte("not the module"), slog.Default()); ok {
		t.Error("a .gz that does not match its file was accepted")
	}
	if _, ok := precompressed("static/ql.js", []byte("x"), slog.Default()); ok {
		t.Error("a file without .gz reported one")
	}
}
