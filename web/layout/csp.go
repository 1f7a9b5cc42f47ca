package layout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/a-h/templ"
)

// RenderPage renders the page p (whose body is c) like Render, with the
// page's security headers: its Content-Security-Policy (SecurityPolicy),
// X-Frame-Options for browsers that know no frame-ancestors, and the two
// that isolate it from other origins (Cross-Origin-Opener-Policy: no
// other site's window shares its browsing context group;
// Cross-Origin-Embedder-Policy: it loads nothing another origin has not
// allowed, and it loads only this site's files). An isolated page on a
// secure origin may share memory with its workers (SharedArrayBuffer):
// the browse page reads each new order from its view worker's memory at
// the frame it draws (browse.js takeShared).
func RenderPage(w http.ResponseWriter, r *http.Request, status int, p Page, c templ.Component) {
	w.Header().Set("Content-Security-Policy", p.SecurityPolicy())
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
	w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
	Render(w, r, status, c)
}

// SecurityPolicy is the Content-Security-Policy of p. Scripts come only
// from this site's static files, plus the inline scripts that execute,
// allowed by their hashes: the import map, and boot.js on pages that start
// a decoding worker (the ql-config JSON block is data, never run). WebAssembly compilation ('wasm-unsafe-eval') is allowed only
// for pages that decode (WASM). Workers come from this site; connections
// (the relay's WebSocket, the module fetch) go to this site. style-src-attr
// allows style attributes, which cannot run script, for the row spacers
// the browser page writes; style elements stay refused. No page may be
// framed: only the badge, which sends its own policy, may be embedded.
func (p Page) SecurityPolicy() string {
	var b strings.Builder
	b.WriteString("default-src 'none'; script-src 'self'")
	if p.Script != "" {
		b.WriteString(" '" + p.importMapHash() + "'")
		if p.Worker {
			b.WriteString(" '" + scriptHash(p.bootScript()) + "'")
		}
		if p.WASM {
			b.WriteString(" 'wasm-unsafe-eval'")
		}
	}
	b.WriteString("; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
		"worker-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	return b.String()
}

// FragmentPolicy is the Content-Security-Policy of HTML sent without a
// Page: the fragments a page fetches and swaps in (the status page's live
// article and history section). They run no script and load nothing but
// this site's styles and images; like every page they may not be framed.
const FragmentPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// importMapHash is the CSP source ("sha256-…") of the import map exactly
// as Base renders it.
func (p Page) importMapHash() string {
	var buf bytes.Buffer
	if err := importMapScript(p).Render(context.Background(), &buf); err != nil {
		return "sha256-"
	}
	s := buf.String()
	start := strings.IndexByte(s, '>') + 1
	end := strings.LastIndex(s, "</script>")
	if start <= 0 || end < start {
		return "sha256-"
	}
	return scriptHash(s[start:end])
}

// scriptHash is the CSP source ("sha256-…") of an inline script whose
// text is s.
func scriptHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// importMapScript is the import map's script element; Base renders it.
func importMapScript(p Page) templ.Component {
	return templ.JSONScript("", p.importMap()).WithType("importmap")
}
