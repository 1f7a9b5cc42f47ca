// Package layout is the frame every querylens page shares: the document
// head (title, description, OpenGraph and Twitter card tags, stylesheet,
// import map, module preloads), the header with its navigation, and the
// error pages.
package layout

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
)

// Assets resolves static files to the URLs pages link to.
type Assets interface {
	// URL returns the path of a static file, content-hashed when it exists.
	URL(name string) string
	// ImportMap maps each module's plain URL to the URL to load.
	ImportMap() map[string]string
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
	// WASM preloads the browser module, for pages that decode on load.
	WASM   bool
	Config any // JSON handed to the script as <script id="ql-config">
	Assets Assets
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
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}
