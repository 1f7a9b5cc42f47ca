package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/buildinfo"
	"github.com/querylens/querylens/internal/wasmmodule"
	"github.com/querylens/querylens/web/layout"
)

// staticFS holds the pages' files and the browser module, committed in its
// precompressed forms (querylens.wasm.br, .gz and the manifest .json, made
// by scripts/build-wasm.sh), so that any build of the command serves pages
// that decode, with no build step of ours. The raw querylens.wasm a local
// build leaves in static/ is deliberately not embedded: every binary then
// carries the same bytes, and the identity form is made from the gzip.
// A new kind of static file needs its pattern here
// (TestEveryStaticFileEmbedded says so).
//
//go:embed static/*.js static/*.css static/*.svg static/*.d.ts
//go:embed static/querylens.wasm.br static/querylens.wasm.gz static/querylens.wasm.json static/querylens.modules.json
//go:embed static/querylens-*.wasm.br static/querylens-*.wasm.gz static/querylens-*.wasm.json
var staticFS embed.FS

// ErrNoModule is returned (wrapped) by New when the binary lacks the
// browser module or carries an inconsistent one: its pages could not
// decode anything.
var ErrNoModule = errors.New("web: this binary has no usable browser module (web/static/querylens.wasm.*): " +
	"run `go tool task build:wasm` (or bash scripts/build-wasm.sh), then rebuild querylens")

// asset is one static file, ready to serve in up to three forms.
type asset struct {
	name string // "browse.js"
	// hash is the first 12 hex digits of the SHA-256 of the uncompressed
	// file; for a module that imports others, of its text and theirs
	// (linkModules).
	hash  string
	ctype string
	// plain returns the uncompressed file. For the browser module it is
	// made from the gzip form on first use and kept.
	plain func() ([]byte, error)
	br    []byte // brotli form; only the browser module has one
	// gz is the gzip form once compressed (empty when gzip would not be
	// smaller); nil while compression is still running.
	gz atomic.Pointer[[]byte]
	// imports are the static files a module imports statically, by
	// relative name ("./ql.js" → "ql.js"), in the order written.
	imports []string
}

// assets serves /static/. Each file is reachable under two names: its plain
// name ("browse.js", answered with an ETag and no-cache, so a browser always
// revalidates) and its content-hashed name ("browse.<hash>.js", immutable for
// a year, since a change of content changes the name). Pages link the hashed
// names; an import map sends the modules' own relative imports there too.
type assets struct {
	*assetTable
	logger *slog.Logger
}

// assetTable is the static files, loaded once: the embedded ones once per
// process (embeddedAssets), however many servers New makes.
type assetTable struct {
	files  map[string]*asset  // by plain name
	hashed map[string]*asset  // by hashed name
	module *wasmmodule.Module // the combined one
	// byProtocol names the family module of each protocol that has one
	// (querylens.modules.json).
	byProtocol map[string]string
	// outside are the protocols of the modules served beside the embedded
	// ones (withModules), which the combined module does not decode.
	outside []string
}

// embeddedAssets loads the embedded files once: they cannot change while
// the process runs, so checking the module against its manifest, hashing
// the files and compressing them is done once, not for each New.
var embeddedAssets = sync.OnceValues(func() (*assetTable, error) {
	sub, _ := fs.Sub(staticFS, "static") // "static" is a valid path
	return loadAssetTable(sub)
})

// loadAssets returns the embedded files, and the family modules in the
// directory modules if it is not "", logging to logger.
func loadAssets(logger *slog.Logger, modules string) (*assets, error) {
	t, err := embeddedAssets()
	if err != nil {
		return nil, err
	}
	if modules != "" {
		if t, err = t.withModules(os.DirFS(modules), modules); err != nil {
			return nil, err
		}
	}
	return &assets{assetTable: t, logger: logger}, nil
}

// loadAssetsFS loads the static files at the root of fsys; it fails with
// ErrNoModule when the browser module is missing or its files disagree
// with the manifest.
func loadAssetsFS(fsys fs.FS, logger *slog.Logger) (*assets, error) {
	t, err := loadAssetTable(fsys)
	if err != nil {
		return nil, err
	}
	return &assets{assetTable: t, logger: logger}, nil
}

func loadAssetTable(fsys fs.FS) (*assetTable, error) {
	idx, mods, err := wasmmodule.LoadAll(fsys)
	if err != nil {
		return nil, errors.Join(ErrNoModule, err)
	}
	a := &assetTable{files: map[string]*asset{}, hashed: map[string]*asset{}, module: mods[0], byProtocol: map[string]string{}}
	for _, e := range idx.Modules[1:] {
		for _, p := range e.Protocols {
			a.byProtocol[p] = e.Module
		}
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if wasmmodule.IsModuleFile(p) || (path.Ext(p) == ".wasm" && wasmmodule.IsModuleFile(p+".json")) {
			return nil // the modules, below
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		x := &asset{name: p, hash: hex.EncodeToString(sum[:6]), ctype: contentType(p),
			plain: func() ([]byte, error) { return body, nil }}
		if path.Ext(p) == ".js" {
			x.imports = staticImports(body)
		}
		a.add(x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, mod := range mods {
		a.addModule(mod)
	}
	a.linkModules()

	// Compress the other files in the background, small ones first. Until a
	// file's gzip is ready it is served uncompressed: a response never
	// waits for the compressor.
	var jobs []gzipJob
	for _, x := range a.files {
		if x.gz.Load() == nil {
			body, _ := x.plain() // in memory: cannot fail
			jobs = append(jobs, gzipJob{x, body})
		}
	}
	sort.Slice(jobs, func(i, j int) bool { return len(jobs[i].body) < len(jobs[j].body) })
	go gzipAll(jobs)
	return a, nil
}

// gzipJob is one static file for gzipAll to compress.
type gzipJob struct {
	x    *asset
	body []byte
}

// gzipAll compresses each file once, smallest first, and ends: its work
// is bounded by the files embedded.
func gzipAll(jobs []gzipJob) {
	for _, j := range jobs {
		gz := gzipped(j.body)
		j.x.gz.Store(&gz)
	}
}

// linkModules makes every module that imports others (statically, from
// static/) import them by their hashed names, and gives it a hash of
// everything it loads: its own text and that of each module it imports,
// to the end. A module imported by its hashed name is immutable, so a
// module worker, which has no import map, loads its imports from the
// cache without asking the server again, and can import a whole graph at
// once (Imports lists it) rather than one level of imports a round trip
// after the other. The hash covers the imports' text, not only their
// names, because the imports of a graph may go in a circle.
func (a *assetTable) linkModules() {
	raw := map[string][]byte{}
	for name, x := range a.files {
		if len(x.imports) > 0 {
			raw[name], _ = x.plain() // in memory: cannot fail
		}
	}
	hashes := map[string]string{}
	for name := range raw {
		h := sha256.New()
		for _, n := range a.closure(name) {
			body, _ := a.files[n].plain()
			h.Write([]byte(n + "\x00" + strconv.Itoa(len(body)) + "\x00"))
			h.Write(body)
		}
		hashes[name] = hex.EncodeToString(h.Sum(nil)[:6])
	}
	hashOf := func(n string) string {
		if h, ok := hashes[n]; ok {
			return h
		}
		return a.files[n].hash
	}
	for name, body := range raw {
		x := a.files[name]
		var out []byte
		last := 0
		for _, m := range staticImport.FindAllSubmatchIndex(body, -1) {
			n := string(body[m[2]:m[3]])
			if a.files[n] == nil {
				continue
			}
			out = append(append(out, body[last:m[2]]...), hashedName(n, hashOf(n))...)
			last = m[3]
		}
		out = append(out, body[last:]...)
		delete(a.hashed, hashedName(name, x.hash))
		x.hash = hashes[name]
		x.plain = func() ([]byte, error) { return out, nil }
		a.add(x)
	}
}

// closure is name and every static/ module it imports, to the end, sorted.
func (a *assetTable) closure(name string) []string {
	seen := map[string]bool{name: true}
	todo := []string{name}
	for len(todo) > 0 {
		x := a.files[todo[0]]
		todo = todo[1:]
		for _, m := range x.imports {
			if !seen[m] && a.files[m] != nil {
				seen[m] = true
				todo = append(todo, m)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// addModule serves a browser module in its precompressed forms.
func (a *assetTable) addModule(mod *wasmmodule.Module) {
	m := &asset{name: mod.Module, hash: mod.SHA256[:12], ctype: contentType(mod.Module), br: mod.Brotli,
		plain: sync.OnceValues(mod.Gunzip)}
	m.gz.Store(&mod.Gzip)
	a.add(m)
}

// withModules returns a copy of the table that also serves the family
// modules in fsys (the directory dir, named in errors): the modules of
// protocols built into this binary from codec packages outside
// codecs/all, each built by scripts/build-wasm.sh --family. It refuses a
// module that decodes a protocol this binary does not register (a page
// could list no server of it), or registers from another package, or
// that another module already decodes.
func (a *assetTable) withModules(fsys fs.FS, dir string) (*assetTable, error) {
	fail := func(msg string) (*assetTable, error) {
		return nil, errors.New("web: browser modules in " + dir + ": " + msg)
	}
	names, err := fs.Glob(fsys, "querylens-*.wasm.json")
	if err != nil {
		return fail(err.Error())
	}
	if len(names) == 0 {
		return fail("no module (querylens-<family>.wasm.json, made by scripts/build-wasm.sh --family)")
	}
	b := &assetTable{files: maps.Clone(a.files), hashed: maps.Clone(a.hashed), module: a.module, byProtocol: maps.Clone(a.byProtocol),
		outside: slices.Clone(a.outside)}
	for _, n := range names {
		mod, err := wasmmodule.LoadNamed(fsys, strings.TrimSuffix(n, ".json"))
		if err != nil {
			return fail(err.Error())
		}
		if len(mod.Families) != 1 || mod.Module != wasmmodule.FamilyName(mod.Families[0]) || len(mod.Protocols) == 0 {
			return fail(mod.Module + " is not the module of one protocol family")
		}
		fam := mod.Families[0]
		for _, p := range mod.Protocols {
			c, err := codecs.Lookup(p)
			if err != nil {
				return fail(mod.Module + " decodes protocol " + strconv.Quote(p) + ", which this binary does not know: " +
					"serve it from a querylens built with " + fam)
			}
			if got := wasmmodule.FamilyOf(c); got != fam {
				return fail(mod.Module + " decodes protocol " + strconv.Quote(p) + " from " + fam + ", but this binary's comes from " + got)
			}
			if other, ok := b.byProtocol[p]; ok {
				return fail(mod.Module + " decodes protocol " + strconv.Quote(p) + ", which " + other + " already decodes")
			}
			b.byProtocol[p] = mod.Module
			b.outside = append(b.outside, p)
		}
		b.addModule(mod)
	}
	slices.Sort(b.outside)
	return b, nil
}

func (a *assetTable) add(x *asset) {
	a.files[x.name] = x
	a.hashed[hashedName(x.name, x.hash)] = x
}

// BuildInfo is the line of the pages' footer: the server's version and the
// browser module it sends (short SHA-256 of the uncompressed module).
func (a *assets) BuildInfo() string {
	return "querylens " + buildinfo.Version() + " · module " + a.module.SHA256[:12]
}

// ModuleFor names the browser module a page that decodes the given
// protocols loads first: the family module holding them all when they are
// of one family, else the combined one (which is smaller than two family
// modules: docs/architecture.md, "The browser modules").
func (a *assets) ModuleFor(protocols ...string) string {
	one := ""
	for _, p := range protocols {
		m := a.byProtocol[p]
		if m == "" || (one != "" && m != one) {
			return wasmmodule.Name
		}
		one = m
	}
	if one == "" {
		return wasmmodule.Name
	}
	return one
}

// ModuleMap names, for each protocol that has one, its family's module,
// for the decoding worker to load when a row first needs it.
func (a *assets) ModuleMap() map[string]string {
	return a.byProtocol
}

// OutsideCombined lists the protocols whose modules are served from
// Config.ModulesDir: the combined module does not decode them.
func (a *assets) OutsideCombined() []string {
	return a.outside
}

// ModuleInfo describes the browser module built into this binary.
type ModuleInfo = wasmmodule.Manifest

// Module returns the manifest of the browser module built into this binary,
// or an error wrapping ErrNoModule.
func Module() (ModuleInfo, error) {
	sub, _ := fs.Sub(staticFS, "static")
	m, err := wasmmodule.Load(sub)
	if err != nil {
		return ModuleInfo{}, errors.Join(ErrNoModule, err)
	}
	return m.Manifest, nil
}

// ModuleIndex lists the browser modules: the combined one and each
// protocol family's.
type ModuleIndex = wasmmodule.Index

// Modules returns the index of the browser modules built into this
// binary, each checked against its manifest, or an error wrapping
// ErrNoModule.
func Modules() (ModuleIndex, error) {
	sub, _ := fs.Sub(staticFS, "static")
	x, _, err := wasmmodule.LoadAll(sub)
	if err != nil {
		return ModuleIndex{}, errors.Join(ErrNoModule, err)
	}
	return x, nil
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

// gzipped compresses body, or returns nil when that does not make it
// smaller. The default level: the pages' files are small, and the browser
// module, where every byte counts, comes precompressed.
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
// when the file exists, else the plain one (which then answers 404).
func (a *assets) URL(name string) string {
	if x, ok := a.files[name]; ok {
		return "/static/" + hashedName(name, x.hash)
	}
	return "/static/" + name
}

// Source returns the content of a static file ("" when there is none), for
// a script a page inlines.
func (a *assets) Source(name string) string {
	x, ok := a.files[name]
	if !ok {
		return ""
	}
	b, err := x.plain()
	if err != nil {
		return ""
	}
	return string(b)
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

// staticImport is an import or re-export statement of a module in
// static/, at the start of a line: `import { a } from "./x.js";`,
// `export * from "./x.js";`, `import "./x.js";` (never a dynamic import(),
// nor one in a comment, which starts otherwise).
var staticImport = regexp.MustCompile(`(?m)^(?:(?:import|export)\b[^;"'` + "`" + `]*?\bfrom\s*|import\s*)["']\./([A-Za-z0-9_.-]+\.js)["']`)

// staticImports lists the static/ modules a module imports, in the
// order written, once each.
func staticImports(body []byte) []string {
	var names []string
	for _, m := range staticImport.FindAllSubmatch(body, -1) {
		if n := string(m[1]); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// Imports returns the modules a page script loads with it: what it
// imports statically, and what those import, to the end, each once, in
// the order the browser meets them (depth first). The layout preloads
// them (<link rel="modulepreload">), so that they download with the
// script rather than a round trip after it.
func (a *assets) Imports(name string) []string {
	var out []string
	seen := map[string]bool{name: true}
	var walk func(string)
	walk = func(n string) {
		x := a.files[n]
		if x == nil {
			return
		}
		for _, m := range x.imports {
			if seen[m] || a.files[m] == nil {
				continue
			}
			seen[m] = true
			out = append(out, m)
			walk(m)
		}
	}
	walk(name)
	return out
}

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	x, immutable := a.hashed[name]
	if !immutable {
		x = a.files[name]
	}
	if x == nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	coding, body := "", []byte(nil)
	switch br, gz := layout.AcceptedCodings(r.Header.Get("Accept-Encoding")); {
	case x.br != nil && br > 0 && br >= gz:
		coding, body = "br", x.br
	case gz > 0:
		if b := x.gz.Load(); b != nil && len(*b) > 0 {
			coding, body = "gzip", *b
		}
	}
	if body == nil {
		b, err := x.plain()
		if err != nil {
			a.logger.Error("static file", "file", x.name, "err", err)
			http.Error(w, "querylens: "+x.name+" is damaged in this binary", http.StatusInternalServerError)
			return
		}
		body = b
	}
	h := w.Header()
	h.Set("Content-Type", x.ctype) // set, so ServeContent does not sniff
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	// A worker started by a cross-origin isolated page (layout.RenderPage)
	// must be isolated too: its script says so.
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	// Each form is its own representation, with its own entity tag.
	etag := x.hash
	if coding != "" {
		h.Set("Content-Encoding", coding)
		etag += "-" + coding
	}
	h.Set("ETag", `"`+etag+`"`)
	if immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	// ServeContent leaves Content-Length out when a Content-Encoding is set
	// (for handlers that compress as they write); these bytes are final,
	// so say their length, except for a range request, whose length
	// ServeContent decides (and the server adds for a small part).
	if coding != "" && r.Header.Get("Range") == "" {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	// ServeContent answers conditional (If-None-Match) and range requests
	// and HEAD; no Last-Modified: the entity tag is exact.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}
