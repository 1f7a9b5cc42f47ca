package probe

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/layout"
)

// EmbedRefresh is how often, in seconds, the embedded card reloads itself:
// twice the status page's live refresh, since a card sits on pages read
// for a long time.
const EmbedRefresh = 30

// embedCSS is the card's whole style, inlined and allowed by its hash: a
// frame should cost one request.
const embedCSS = `html,body{margin:0;height:100%;font:14px/1.35 system-ui,sans-serif}` +
	`body{background:Canvas;color:CanvasText}` +
	`.card{box-sizing:border-box;display:flex;flex-direction:column;gap:4px;height:100%;padding:10px 12px;` +
	`border:1px solid #8886;border-radius:8px;color:inherit;text-decoration:none}` +
	`.card:hover{border-color:#888}` +
	`.top{display:flex;justify-content:space-between;gap:8px;font-size:12px}` +
	`.state{font-weight:600}.state-online{color:#2a8a2a}.state-rate-limited{color:#c25e00}.state-malformed{color:#c0392b}` +
	`.proto{opacity:.7}` +
	`.name{font-size:16px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}` +
	`.facts{display:flex;flex-wrap:wrap;gap:4px 12px;opacity:.85}`

// EmbedPolicy is the embedded card's Content-Security-Policy: no script,
// its one inline style by hash, and framing by any site, which is the
// card's purpose (every other page of the site refuses it).
var EmbedPolicy = "default-src 'none'; style-src 'sha256-" + cssHash() + "'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors *"

func cssHash() string {
	sum := sha256.Sum256([]byte(embedCSS))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// embedView is what the card shows.
type embedView struct {
	server.Summary
	Title   string // the protocol's title
	PageURL string // the status page, absolute
}

// Embed serves GET /s/{protocol}/{target}/embed: a small card sized for
// an iframe (about 320×110), which other sites may frame.
func (h *Handler) Embed(w http.ResponseWriter, r *http.Request) {
	ref, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	s := h.summary(r, ref)
	v := embedView{Summary: s, Title: ref.Protocol, PageURL: s.Status}
	if p, ok := server.LookupProtocol(ref.Protocol); ok {
		v.Title = p.Title
	}
	if v.Name == "" {
		v.Name = ref.Addr
	}
	if h.Base != nil {
		v.PageURL = h.Base(r) + s.Status
	}
	w.Header().Set("Content-Security-Policy", EmbedPolicy)
	// Reloaded every EmbedRefresh seconds by each reader; the relay's
	// cache answers those, and a proxy may share one for a few seconds.
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(EmbedRefresh/3))
	layout.Render(w, r, http.StatusOK, embedPage(v))
}
