// Package status serves the page people share for one server
// (/s/{protocol}/{host:port}) and its embeddable SVG badge.
//
// Both are rendered on the server from a query the server makes itself,
// through the relay's Exchange (its cache and policy), so that a link posted
// in a busy chat costs the game server one query per cache period however
// many unfurlers and readers fetch it. The page then keeps itself live:
// static/status.js fetches the same article, rendered by the same template,
// from GET /s/{protocol}/{target}/live and swaps it in, so there is one
// renderer and the reader's browser decodes nothing.
//
// A server that is offline, refusing, rate-limiting or answering garbage is
// not an error of this page: it answers 200 with the state shown, because
// chat apps drop the preview of a non-2xx page, and "offline" is exactly what
// the person sharing the link should see unfurled. Bad requests get 400 (an
// address that is not host:port) or 404 (an unknown protocol).
//
// With a history store (Handler.History, Handler.Tracker) the page also
// carries the server's history as server-rendered SVG charts
// (history.templ, chart.go), and the same data is served as history.json,
// history.html (the section alone, for the live refresh) and spark.svg (the
// browse page's sparkline); these only read the store. card.png is the
// og:image preview (package card), cached per server for the relay's cache
// period (cardCache). Viewing the page, card or badge of a server that
// answers tracks it (trackable); Probe is the sampler's query.
package status

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/web/card"
	"github.com/querylens/querylens/web/layout"
)

// DefaultTimeout bounds the server-side query: long enough for a slow
// server on another continent, short enough for an unfurler's patience.
const DefaultTimeout = 2 * time.Second

// Handler serves the status page and the badge.
type Handler struct {
	Exchanger netquery.Exchanger
	Timeout   time.Duration
	Assets    layout.Assets
	// Base returns the absolute URL prefix ("https://example.org") for
	// og:url and og:image, from the configuration or the request.
	Base      func(r *http.Request) string
	RelayPath string
	Logger    *slog.Logger
	// Error renders the site's error page.
	Error func(w http.ResponseWriter, r *http.Request, status int, heading, detail string)
	// Allow, if set, reports whether this visitor may have another status
	// page or badge now; each one may make the relay query a server.
	Allow func(r *http.Request) bool

	// History, if set, is read for the page's charts, history.json and the
	// card's chart.
	History history.Store
	// Tracker, if set, tracks the servers whose page, card or badge is
	// requested (never one the relay refuses).
	Tracker *history.Tracker
	// CardTTL is how long a rendered card is reused: the relay's cache
	// period. Default 10 s.
	CardTTL time.Duration

	cardOnce  sync.Once
	cardCache *cardCache
}

// lookup reads {protocol}, {target} and the query options from the URL,
// answering the error page itself when they are not usable.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, svg bool) (codecs.Codec, string, map[string]string, bool) {
	c, target, opts, ok := h.lookupNoLimit(w, r, svg)
	if !ok {
		return nil, "", nil, false
	}
	if h.Allow != nil && !h.Allow(r) {
		w.Header().Set("Retry-After", "5")
		h.fail(w, r, svg, http.StatusTooManyRequests, "Too many requests", "This address asked for many server statuses in a short time. Try again in a few seconds.")
		return nil, "", nil, false
	}
	return c, target, opts, true
}

// lookupNoLimit is lookup without the per-visitor limit, for what only
// reads the history store.
func (h *Handler) lookupNoLimit(w http.ResponseWriter, r *http.Request, svg bool) (codecs.Codec, string, map[string]string, bool) {
	name := r.PathValue("protocol")
	c, err := codecs.Lookup(name)
	if err != nil {
		h.fail(w, r, svg, http.StatusNotFound, "Unknown protocol", "querylens does not speak "+strconv.Quote(name)+". It knows "+known()+".")
		return nil, "", nil, false
	}
	target, ok := ParseTarget(r.PathValue("target"))
	if !ok {
		h.fail(w, r, svg, http.StatusBadRequest, "Not a server address", strconv.Quote(r.PathValue("target"))+" is not host:port (for example 203.0.113.7:10666).")
		return nil, "", nil, false
	}
	// Query options ride in the query string (?version=0.04), for servers
	// the protocol's defaults do not reach.
	var opts map[string]string
	for k, v := range r.URL.Query() {
		if opts == nil {
			opts = map[string]string{}
		}
		opts[k] = v[0]
	}
	if _, err := c.NewQuery(opts); err != nil {
		h.fail(w, r, svg, http.StatusBadRequest, "Bad query option", err.Error())
		return nil, "", nil, false
	}
	return c, target, opts, true
}

func known() string {
	var names []string
	for _, c := range codecs.Protocols() {
		names = append(names, c.Name())
	}
	if len(names) == 0 {
		return "no protocols"
	}
	return strings.Join(names, ", ")
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, svg bool, status int, heading, detail string) {
	if svg {
		cc := "public, max-age=300"
		if ra := w.Header().Get("Retry-After"); ra != "" {
			// A refusal for now and for this visitor: shared caches
			// must not keep it for others, nor the visitor's after the
			// moment it tells the client to come back.
			cc = "private, max-age=" + ra
		}
		w.Header().Set("Cache-Control", cc)
		h.writeBadge(w, r, status, badge{Label: "querylens", Message: strings.ToLower(heading), Color: colorGrey})
		return
	}
	h.Error(w, r, status, heading, detail)
}

func (h *Handler) report(r *http.Request, c codecs.Codec, target string, opts map[string]string) Report {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rep := query(r.Context(), h.Exchanger, c, target, opts, timeout)
	h.Logger.Debug("status query", "protocol", c.Name(), "target", target, "state", rep.State, "rtt", rep.RTT, "cached", rep.Cached)
	return rep
}

// Page serves GET /s/{protocol}/{target}.
func (h *Handler) Page(w http.ResponseWriter, r *http.Request) {
	c, target, opts, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	rep := h.report(r, c, target, opts)
	h.track(r.Context(), rep)
	v := newView(rep, h.Base(r))
	v.History = h.summary(r.Context(), HistoryKey(c.Name(), target, opts))
	v.HistoryScript = h.Assets.URL("history.js")
	p := layout.Page{
		Head: layout.Head{
			Title:       title(v),
			Description: v.Description,
			URL:         v.PageURL,
			// Chat apps do not render SVG previews: og:image is the PNG
			// card; the SVG badge is for READMEs.
			Image:       v.CardURL,
			ImageType:   "image/png",
			ImageAlt:    cardAlt(v),
			ImageW:      card.Width,
			ImageH:      card.Height,
			TwitterCard: "summary_large_image",
		},
		Script: "status.js",
		Config: liveConfig{
			Relay: h.RelayPath, Protocol: c.Name(), Target: target, Options: opts, State: string(v.State),
			Title: c.Title(), Page: v.PageURL,
		},
		Assets: h.Assets,
	}
	// Short: the page refreshes itself, and a shared link should not show
	// an old player count to the next reader.
	w.Header().Set("Cache-Control", "public, max-age=10")
	layout.RenderPage(w, r, http.StatusOK, p, Page(p, v))
}

// title is the document title of the page in v's state.
func title(v view) string {
	if v.Name == v.Target {
		return v.Target + " · " + v.Protocol.Title() + " · " + stateLabel(v.State) + " · querylens"
	}
	return v.Name + " · " + stateLabel(v.State) + " · querylens"
}

// Live serves GET /s/{protocol}/{target}/live: the page's article alone,
// from a fresh report (the relay's cache and limits apply as for the
// page), which static/status.js swaps in.
func (h *Handler) Live(w http.ResponseWriter, r *http.Request) {
	c, target, opts, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	v := newView(h.report(r, c, target, opts), h.Base(r))
	w.Header().Set("Cache-Control", "no-store")
	layout.Render(w, r, http.StatusOK, Article(v, title(v)))
}

// liveConfig is what static/status.js needs to keep the page live.
type liveConfig struct {
	Relay    string            `json:"relay"`
	Protocol string            `json:"protocol"`
	Target   string            `json:"target"`
	Options  map[string]string `json:"options,omitempty"`
	State    string            `json:"state"`
	Title    string            `json:"title"`
	Page     string            `json:"page"`
}

// Badge serves GET /s/{protocol}/{target}/badge.svg.
func (h *Handler) Badge(w http.ResponseWriter, r *http.Request) {
	c, target, opts, ok := h.lookup(w, r, true)
	if !ok {
		return
	}
	rep := h.report(r, c, target, opts)
	h.track(r.Context(), rep)
	v := newView(rep, h.Base(r))
	// Short enough that a README shows a fresh count, long enough that
	// image proxies do not ask every time.
	w.Header().Set("Cache-Control", "public, max-age=60, stale-while-revalidate=60")
	h.writeBadge(w, r, http.StatusOK, newBadge(v))
}

func (h *Handler) writeBadge(w http.ResponseWriter, r *http.Request, status int, b badge) {
	var buf bytes.Buffer
	if err := badgeSVG(b).Render(r.Context(), &buf); err != nil {
		http.Error(w, "badge: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// An SVG opened directly runs no script from here.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
