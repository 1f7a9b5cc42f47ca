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
// period (a ttlcache.Cache). Viewing the page, card or badge of a server
// that answers tracks it (server.Trackable). What a server is, how it is
// asked and what its answer means are package server's; this package is
// HTTP and HTML only.
package status

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/internal/ttlcache"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/server/ident"
	"github.com/querylens/querylens/web/card"
	"github.com/querylens/querylens/web/layout"
)

// Handler serves the status page and the badge.
type Handler struct {
	Exchanger netquery.Exchanger
	Timeout   time.Duration // of the server-side query; 0: server.DefaultTimeout
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

	// Watches, if set, lists the alerts' watches: the page shows that a
	// server is watched and its last alert (watched.go).
	Watches WatchLister

	cardOnce     sync.Once
	cards        *ttlcache.Cache[[]byte]
	watchedCache watchedCache
}

// lookup reads the server from the URL ({protocol}, {target} and the
// query options), answering the error page itself when it is not usable.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, svg bool) (server.Ref, bool) {
	ref, ok := h.lookupNoLimit(w, r, svg)
	if !ok {
		return server.Ref{}, false
	}
	if h.Allow != nil && !h.Allow(r) {
		w.Header().Set("Retry-After", "5")
		h.fail(w, r, svg, http.StatusTooManyRequests, "Too many requests", "This address asked for many server statuses in a short time. Try again in a few seconds.")
		return server.Ref{}, false
	}
	return ref, true
}

// lookupNoLimit is lookup without the per-visitor limit, for what only
// reads the history store.
func (h *Handler) lookupNoLimit(w http.ResponseWriter, r *http.Request, svg bool) (server.Ref, bool) {
	// Query options ride in the query string (?version=0.04), for servers
	// the protocol's defaults do not reach.
	ref, err := server.FromPath(r.PathValue("protocol"), r.PathValue("target"), r.URL.RawQuery)
	switch {
	case err == nil:
		return ref, true
	case errors.Is(err, server.ErrProtocol):
		h.fail(w, r, svg, http.StatusNotFound, "Unknown protocol", "querylens does not speak "+strconv.Quote(r.PathValue("protocol"))+". It knows "+ident.Known()+".")
	case errors.Is(err, server.ErrAddr):
		h.fail(w, r, svg, http.StatusBadRequest, "Not a server address", strconv.Quote(r.PathValue("target"))+" is not host:port (for example 203.0.113.7:10666).")
	default:
		h.fail(w, r, svg, http.StatusBadRequest, "Bad query option", optionText(err))
	}
	return server.Ref{}, false
}

// optionText is the message of a bad query option: the codec's own error
// when it has one.
func optionText(err error) string {
	var ce *codecs.Error
	if errors.As(err, &ce) {
		return ce.Error()
	}
	return err.Error()
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

func (h *Handler) report(r *http.Request, ref server.Ref) server.Report {
	rep := server.Probe(r.Context(), h.Exchanger, ref, h.Timeout)
	h.Logger.Debug("status query", "server", ref.String(), "state", rep.State.String(), "rtt", rep.RTT, "cached", rep.Cached)
	return rep
}

// Page serves GET /s/{protocol}/{target}.
func (h *Handler) Page(w http.ResponseWriter, r *http.Request) {
	ref, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	rep := h.report(r, ref)
	h.track(r.Context(), rep)
	v := newView(rep, h.Base(r))
	v.History = h.summary(r.Context(), ref.Key())
	v.Watched = h.watched(r.Context(), ref)
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
			Relay: h.RelayPath, Protocol: ref.Protocol, Target: ref.Addr, Options: ref.Options, State: v.State.String(),
			Title: v.Protocol.Title(), Page: v.PageURL,
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
		return v.Target + " · " + v.Protocol.Title() + " · " + v.State.Label() + " · querylens"
	}
	return v.Name + " · " + v.State.Label() + " · querylens"
}

// Live serves GET /s/{protocol}/{target}/live: the page's article alone,
// from a fresh report (the relay's cache and limits apply as for the
// page), which static/status.js swaps in.
func (h *Handler) Live(w http.ResponseWriter, r *http.Request) {
	ref, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	v := newView(h.report(r, ref), h.Base(r))
	v.Watched = h.watched(r.Context(), ref)
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
	ref, ok := h.lookup(w, r, true)
	if !ok {
		return
	}
	rep := h.report(r, ref)
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
	// An SVG opened directly runs no script from here; any site may
	// frame it.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
