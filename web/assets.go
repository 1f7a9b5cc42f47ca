package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// The whole directory is embedded, not named files, so that the package
// compiles before scripts/build-wasm.sh has produced querylens.wasm and
// wasm_exec.js (both gitignored).
//
//go:embed static
var staticFS embed.FS

// builtByScript are the files scripts/build-wasm.sh writes; without them the
// pages cannot decode, and the server says so instead of a bare 404.
var builtByScript = map[string]bool{"querylens.wasm": true, "wasm_exec.js": true}

// asset is one embedded file, ready to serve.
type asset struct {
	name  string // "browse.js"
	body  []byte
	hash  string // first 12 hex digits of the SHA-256 of body
	ctype string
	// gz is the gzip of body once compressed (empty when gzip would not be
	// smaller); nil while compression is still running.
	gz atomic.Pointer[[]byte]
}

// assets serves /static/. Each file is reachable under two names: its plain
// name ("browse.js", answered with an ETag and no-cache, so a browser always
// revalidates) and its content-hashed name ("browse.<hash>.js", immutable for
// a year, since a change of content changes the name). Pages link the hashed
// names; an import map sends the modules' own relative imports there too.
type assets struct {
	files  map[string]*asset // by plain name
	hashed map[string]*asset // by hashed name
	logger *slog.Logger
}

func loadAssets(logger *slog.Logger) (*assets, error) {
	a := &assets{files: map[string]*asset{}, hashed: map[string]*asset{}, logger: logger}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".gz") {
			return err // a .gz is the precompressed form of its file, below
		}
		body, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		x := &asset{name: strings.TrimPrefix(p, "static/"), body: body, hash: hex.EncodeToString(sum[:6]), ctype: contentType(p)}
		a.files[x.name] = x
		a.hashed[hashedName(x.name, x.hash)] = x
		if gz, ok := precompressed(p, body, logger); ok {
			x.gz.Store(&gz)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Compress in the background, small files first. Until a file's gzip
	// is ready it is served uncompressed: a response never waits for the
	// compressor (the wasm module takes a few hundred ms).
	list := make([]*asset, 0, len(a.files))
	for _, x := range a.files {
		list = append(list, x)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i].body) < len(list[j].body) })
	go func() {
		for _, x := range list {
			if x.gz.Load() != nil {
				continue // precompressed at build time
			}
			gz := gzipped(x.body)
			x.gz.Store(&gz)
		}
	}()
	return a, nil
}

// hashedName inserts the hash before the extension: "browse.js" →
// "browse.0123abcd4567.js".
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	if strings.HasSuffix(name, ".d.ts") {
		ext = ".d.ts"
	}
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".ts":
		return "text/plain; charset=utf-8" // a .d.ts is for reading
	case ".css":
		return "text/css; charset=utf-8"
	case ".wasm":
		return "application/wasm" // required by WebAssembly.instantiateStreaming
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

// precompressed returns the build's gzip of the file at p (p + ".gz", made
// by scripts/build-wasm.sh with zopfli or gzip -9, smaller than the
// server's own gzip), if it exists and decompresses to exactly body; a
// stale one is ignored and logged.
func precompressed(p string, body []byte, logger *slog.Logger) ([]byte, bool) {
	gz, err := staticFS.ReadFile(p + ".gz")
	if err != nil {
		return nil, false
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err == nil {
		var plain []byte
		plain, err = io.ReadAll(io.LimitReader(zr, int64(len(body))+1))
		if err == nil && !bytes.Equal(plain, body) {
			err = errors.New("it does not decompress to the file (stale)")
		}
	}
	if err != nil {
		logger.Warn("ignoring precompressed asset", "file", p+".gz", "err", err)
		return nil, false
	}
	return gz, true
}

// gzipped compresses body, or returns nil when that does not make it
// smaller. The default level: BestCompression saves under 1% on the wasm
// module and takes three times as long.
func gzipped(body []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	zw.Write(body)
	zw.Close()
	if buf.Len() >= len(body) {
		return nil
	}
	return buf.Bytes()
}

// URL returns the path pages should use for a static file: the hashed name
// when the file exists, else the plain one (which then answers 503 or 404).
func (a *assets) URL(name string) string {
	if x, ok := a.files[name]; ok {
		return "/static/" + hashedName(name, x.hash)
	}
	return "/static/" + name
}

// ImportMap maps each module's plain URL to its hashed URL, for the page's
// <script type="importmap">.
func (a *assets) ImportMap() map[string]string {
	m := map[string]string{}
	for name, x := range a.files {
		if strings.HasSuffix(name, ".js") {
			m["/static/"+name] = "/static/" + hashedName(name, x.hash)
		}
	}
	return m
}

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	x, immutable := a.hashed[name]
	if !immutable {
		x = a.files[name]
	}
	if x == nil {
		if builtByScript[name] {
			// A clear answer for a server built without the browser module.
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Retry-After", "60")
			http.Error(w, name+" is not built into this server: run `bash scripts/build-wasm.sh`, then rebuild querylens", http.StatusServiceUnavailable)
			return
		}
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", x.ctype)
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	etag := `"` + x.hash + `"`
	h.Set("ETag", etag)
	if immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := x.body
	if acceptsGzip(r) {
		if gz := x.gz.Load(); gz != nil && len(*gz) > 0 {
			h.Set("Content-Encoding", "gzip")
			body = *gz
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip
// (present and not with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.TrimSpace(coding) != "*" {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		if q, ok := strings.CutPrefix(params, "q="); ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}
