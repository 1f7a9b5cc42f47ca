// Package layout is the frame every querylens page shares: the document
// head (title, description, OpenGraph and Twitter card tags, stylesheet,
// import map, module preloads), the header with its navigation, and the
// error pages.
package layout

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a-h/templ"
)

// Assets resolves static files to the URLs pages link to.
type Assets interface {
	// URL returns the path of a static file, content-hashed when it exists.
	URL(name string) string
	// ImportMap maps each module's plain URL to the URL to load.
	ImportMap() map[string]string
	// Source returns the content of a static file ("" when there is
	// none), for the one script a page inlines (boot.js).
	Source(name string) string
}

// Head is what a page says about itself to browsers, search engines and the
// link unfurlers of chat apps.
type Head struct {
	Title       string
	Description string
	// URL is the canonical absolute URL (og:url); empty leaves it out.
	URL string
	// Image is an absolute URL for og:image and twitter:image; empty leaves
	// the image tags out.
	Image     string
	ImageType string // e.g. "image/svg+xml"
	ImageAlt  string
	ImageW    int
	ImageH    int
	Type      string // og:type, "website" when empty
	// TwitterCard is twitter:card: "summary" when empty,
	// "summary_large_image" for a wide preview image.
	TwitterCard string
}

func (h Head) twitterCard() string {
	if h.TwitterCard == "" || h.Image == "" {
		return "summary"
	}
	return h.TwitterCard
}

// Page is one page of the site.
type Page struct {
	Head
	Nav    string // the active navigation entry: "browse", "inspect" or ""
	Script string // the page's module entry in static/, e.g. "browse.js"; "" for none
	// WASM preloads the browser module, for pages that decode on load, and
	// the relay client and the module's JS glue where the page's own thread
	// imports them (not Worker pages: the worker imports them, and a
	// modulepreload would only compile them on the page too).
	WASM bool
	// Worker starts the decoding worker (worker.js) while the page is
	// parsed, for pages that decode off their main thread: boot.js, inlined
	// at the top of <head>, creates it, fetches and compiles the browser
	// module for it, and tells it Boot; live.js, preloaded, adopts it.
	Worker bool
	// View starts, with the decoding worker, the worker that filters and
	// sorts the page's rows (view.js, which browse-order.js adopts): made
	// by the page's script, it would start only once the page's modules
	// have loaded, and its start would hold back the first rows drawn.
	View bool
	// Boot is what the worker is told at its creation.
	Boot Boot
	// Protocols are the protocols a Worker page decodes first (its
	// configured masters' and servers'): it preloads the one browser
	// module that holds them all (Modules.ModuleFor), a family's module or
	// the combined one, and its worker loads the others' when a row needs
	// them. The other pages that decode (the inspector) load the combined
	// module.
	Protocols []string
	Config    any // JSON handed to the script as <script id="ql-config">
	Assets    Assets
}

// Boot is what a page's decoding worker is told when boot.js creates it,
// before any of the page's modules have loaded: where the relay is, so that
// it connects at once, and the conversations the page will ask for first
// (a master's list), so that they start as soon as the relay and the
// decoder are ready. When the page's script asks for them too, the worker
// drops those asks, by key (web/static/worker.js).
type Boot struct {
	Relay string `json:"relay,omitempty"`
	// Subprotocols are the WebSocket subprotocols the worker offers the
	// relay, in order of preference, when it opens the relay's socket as
	// its script starts (before its relay client is imported); none
	// leaves the socket to the relay client.
	Subprotocols []string  `json:"subprotocols,omitempty"`
	Asks         []BootAsk `json:"asks,omitempty"`
	// Lists are the servers asked after Asks, grouped by how they are
	// asked: a page of a thousand servers says each server's address once.
	Lists []BootList `json:"lists,omitempty"`
}

// BootList is servers Boot asks alike: each is worker.js's Ask with the key
// Protocol + "/" + its target.
type BootList struct {
	Protocol  string            `json:"protocol"`
	Options   map[string]string `json:"options"`
	TimeoutMs int               `json:"timeoutMs"`
	// Query is the first request of every target's conversation (hex
	// datagrams), when the server built it: the worker sends it to each
	// target as the relay's HELLO arrives, without waiting for its decoder.
	Query   []string `json:"query,omitempty"`
	Targets []string `json:"targets"`
}

// BootAsk is one conversation Boot starts: worker.js's Ask.
type BootAsk struct {
	Key       string            `json:"key"`
	Protocol  string            `json:"protocol"`
	Target    string            `json:"target"`
	Options   map[string]string `json:"options"`
	TimeoutMs int               `json:"timeoutMs"`
	// Query is the conversation's first request (hex datagrams), when
	// the server built it: the worker sends it as soon as the relay's
	// HELLO arrives, without waiting for its decoder.
	Query []string `json:"query,omitempty"`
}

// Modules chooses among the browser modules: the combined one
// ("querylens.wasm") and one per protocol family. web's assets implement
// it; Assets that do not (the tests' fakes) have the combined module only.
type Modules interface {
	// ModuleFor names the module to load first for a page decoding these
	// protocols.
	ModuleFor(protocols ...string) string
	// ModuleMap names, for each protocol that has one, its family's module.
	ModuleMap() map[string]string
}

// combinedModule is the browser module with every protocol family.
const combinedModule = "querylens.wasm"

// firstModule is the browser module the page preloads (and boot.js
// compiles): the inspector's is the combined one; a Worker page's is the
// one that holds its Protocols.
func (p Page) firstModule() string {
	if m, ok := p.Assets.(Modules); ok && p.Worker {
		return m.ModuleFor(p.Protocols...)
	}
	return combinedModule
}

// compileIn says where a Worker page's first module is fetched and
// compiled: "worker" for a protocol family's module, which the decoding
// worker fetches and compiles as its script starts, so that the page's
// thread, busy with its first parse, layout and modules, does not pump
// the download into the compiler; "" (the page) for the combined module,
// which the page preloads and compiles while it downloads.
func (p Page) compileIn() string {
	if p.Worker && p.firstModule() != combinedModule {
		return "worker"
	}
	return ""
}

// Decoders is what the decoding worker is told of the modules: the URL of
// the combined one and of each protocol's family module.
type Decoders struct {
	Combined  string            `json:"combined"`
	Protocols map[string]string `json:"protocols"`
	// Outside are the protocols the combined module does not decode
	// (built in from outside this repository, served with their family
	// modules by web.Config.ModulesDir): only their own module does.
	Outside []string `json:"outside,omitempty"`
}

// OutsideModules is implemented by Assets serving family modules of
// protocols the combined module does not decode.
type OutsideModules interface {
	OutsideCombined() []string
}

func (p Page) decoders() Decoders {
	d := Decoders{Combined: p.Assets.URL(combinedModule), Protocols: map[string]string{}}
	if m, ok := p.Assets.(OutsideModules); ok {
		d.Outside = m.OutsideCombined()
	}
	if m, ok := p.Assets.(Modules); ok {
		for proto, name := range m.ModuleMap() {
			d.Protocols[proto] = p.Assets.URL(name)
		}
	}
	return d
}

// bootJSON is <html data-boot>: Boot and the hashed URLs boot.js needs (a
// classic script cannot use the import map): wasm is the module it
// compiles first, decoders every module the worker may load later,
// imports what the worker's modules import (workerImports).
func (p Page) bootJSON() string {
	b, err := json.Marshal(struct {
		Boot
		Worker   string            `json:"worker"`
		View     string            `json:"view,omitempty"`
		Glue     string            `json:"glue"`
		WASM     string            `json:"wasm"`
		Compile  string            `json:"compile,omitempty"`
		Decoders Decoders          `json:"decoders"`
		Modules  map[string]string `json:"modules"`
		Imports  []string          `json:"imports,omitempty"`
	}{p.Boot, p.Assets.URL("worker.js"), p.viewURL(), p.Assets.URL("wasm_exec.js"), p.Assets.URL(p.firstModule()), p.compileIn(), p.decoders(),
		map[string]string{"ql": p.Assets.URL("ql.js"), "relay": p.Assets.URL("relay.js")}, p.workerImports()})
	if err != nil {
		return "{}" // maps of strings and a struct of them: cannot fail
	}
	return string(b)
}

// viewURL is the view worker's script boot.js starts (View), "" for none.
func (p Page) viewURL() string {
	if !p.View {
		return ""
	}
	return p.Assets.URL("view.js")
}

// workerImports are the hashed URLs of the modules that the decoding
// worker's modules (ql.js, relay.js) import, to the end, when the Assets
// can say them (web's can: Imports; their modules import each other by
// hashed names, so these are the very URLs the imports load).
func (p Page) workerImports() []string {
	a, ok := p.Assets.(interface{ Imports(name string) []string })
	if !ok {
		return nil
	}
	var urls []string
	for _, top := range []string{"ql.js", "relay.js"} {
		for _, m := range a.Imports(top) {
			if u := p.Assets.URL(m); !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		}
	}
	return urls
}

// bootScript is the inlined boot.js, exactly as its CSP hash is computed.
func (p Page) bootScript() string {
	return p.Assets.Source("boot.js")
}

func (p Page) ogType() string {
	if p.Type == "" {
		return "website"
	}
	return p.Type
}

// buildInfo is the footer line (server version, browser module hash) when
// the Assets can say it (web's can; the tests' fakes need not).
func (p Page) buildInfo() string {
	if b, ok := p.Assets.(interface{ BuildInfo() string }); ok {
		return b.BuildInfo()
	}
	return ""
}

// modulePreloads are the static files the page preloads as modules
// (<link rel="modulepreload">): the relay client and the module's JS glue
// where the page's own thread imports them (WASM, not Worker: on a Worker
// page the worker imports them), live.js on a Worker page, ql.js, and,
// when the Assets can say them (web's can: Imports), the modules the
// page's script imports, so that they download with it rather than a
// round trip after it.
func (p Page) modulePreloads() []string {
	var names []string
	if p.WASM && !p.Worker {
		names = append(names, "wasm_exec.js", "relay.js")
	}
	if p.Worker {
		names = append(names, "live.js")
	}
	names = append(names, "ql.js")
	if a, ok := p.Assets.(interface{ Imports(name string) []string }); ok {
		for _, m := range a.Imports(p.Script) {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}

// importMap is the JSON of <script type="importmap">.
func (p Page) importMap() map[string]any {
	return map[string]any{"imports": p.Assets.ImportMap()}
}

// Render renders c into a buffer and sends it with status, so that a
// template failure becomes a clean 500 instead of half a page.
func Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		http.Error(w, "querylens: rendering the page failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Add("Vary", "Accept-Encoding")
	body := buf.Bytes()
	if _, gz := AcceptedCodings(r.Header.Get("Accept-Encoding")); gz > 0 && len(body) >= gzipFrom {
		if z := gzipped(body); z != nil {
			body = z
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// gzipFrom is the size from which a page is sent gzipped to a client that
// takes it: the browser page of a thousand servers is ~400 KB of HTML,
// mostly their addresses, which gzip at its fastest brings to a tenth in
// a few milliseconds; a small page gains too little to be worth it.
const gzipFrom = 16 << 10

var gzipWriters = sync.Pool{New: func() any {
	z, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return z
}}

// gzipped is b gzipped, or nil when it would not be smaller.
func gzipped(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b) / 4)
	z := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(z)
	z.Reset(&out)
	if _, err := z.Write(b); err != nil {
		return nil
	}
	if err := z.Close(); err != nil || out.Len() >= len(b) {
		return nil
	}
	return out.Bytes()
}

// AcceptedCodings returns the quality values an Accept-Encoding header
// (RFC 9110 §12.5.3) gives brotli and gzip: 0 when not acceptable. A coding
// not listed takes the value of "*" if that is listed; "x-gzip" is gzip.
// An entry whose q is malformed counts as q=0, so a garbled header gets
// the uncompressed file rather than a coding the client may not decode.
func AcceptedCodings(header string) (br, gz float64) {
	brSet, gzSet := false, false
	star := 0.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(p, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(f >= 0 && f <= 1) { // also NaN
				f = 0
			}
			q = f
		}
		switch coding {
		case "br":
			br, brSet = q, true
		case "gzip", "x-gzip":
			if !gzSet || q > gz {
				gz = q
			}
			gzSet = true
		case "*":
			star = q
		}
	}
	if !brSet {
		br = star
	}
	if !gzSet {
		gz = star
	}
	return br, gz
}
