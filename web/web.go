// Package web serves the querylens pages: the server browser (/), the
// status page and badge of one server (/s/{protocol}/{host:port}), the packet
// inspector (/inspect), and their static files (/static/…), with the wasm
// decoder the pages run; and, for monitoring (package web/probe), the
// probe endpoint (/probe), the shields.io endpoint and the embeddable card
// of a server (/s/{protocol}/{host:port}/shields.json, …/embed);
// and the JSON API (/api/v1/, package api).
//
// The handler does not serve the relay: the command mounts relay.Server at
// Config.RelayPath next to it, and the pages connect there.
//
// Every HTML page is sent with a Content-Security-Policy built from its
// layout.Page (layout.Page.SecurityPolicy): scripts only from /static plus
// the import map by hash, WebAssembly only on pages that decode, and no
// framing; any other HTML (the fragments the status page swaps in) gets
// layout.FragmentPolicy from securityHeaders, so that no HTML route can
// be sent without one. The badge, shields.json and the embeddable card send
// their own policies and may be embedded.
//
// Layout: layout/ is the shared frame and error page; pages/<page>/ holds
// each page's handler and templ view; static/ is embedded (the browser
// module is committed there precompressed, with its JS glue, by
// scripts/build-wasm.sh; see assets.go). The inspector's capture files are
// written in the browser by the top-level pcapng package.
package web

//go:generate go run ../internal/cmd/genmodel -o static/model.js

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/querylens/querylens/codecs/all"

	"github.com/querylens/querylens/alerts/manage"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/api"
	"github.com/querylens/querylens/web/layout"
	"github.com/querylens/querylens/web/pages/browse"
	"github.com/querylens/querylens/web/pages/inspect"
	"github.com/querylens/querylens/web/pages/status"
	"github.com/querylens/querylens/web/probe"
)

// Config configures the pages.
type Config struct {
	// Exchanger runs the status page's and the badge's own queries. Pass
	// the relay (relay.Server), so that shared links go through its cache
	// and policy; if it is a VisitorLimiter (the relay is), its limit per
	// visitor applies to them. Required.
	Exchanger netquery.Exchanger
	// Masters are the master servers whose lists the browser page loads:
	// a Kept one's (Steam's, Quake III's, GameSpy v1's, Zandronum's) from
	// MasterLists, any other (Quake II's, QuakeWorld's) by asking it
	// through the relay.
	Masters []server.MasterSpec
	// MasterLists, if set, serves the kept masters' lists (package
	// masters), mounted at GET /api/v1/masters/. If it is a KeptLister
	// too, the browser page comes with the first servers of each.
	MasterLists http.Handler
	// Servers are listed on the browser page without a master, in any
	// protocol (for example the demo's GameSpy v2, OGP and Bloodmasters
	// servers).
	Servers []server.Ref
	// RelayPath is where the relay's WebSocket is mounted. Default "/relay".
	RelayPath string
	// PublicURL is the site's absolute base URL ("https://ql.example.org"),
	// used for og:url and og:image. Default: "http://" + Addr.
	PublicURL string
	// Addr is the address the site listens on ("127.0.0.1:8080"), for
	// absolute URLs when PublicURL is empty; an unspecified host (0.0.0.0,
	// ::) becomes localhost. The Host header of a request is never used:
	// any client may send any Host, and the URLs end up in link previews
	// and caches. Default (neither set): http://localhost.
	Addr string
	// StatusTimeout bounds the status page's query. Default 2 s.
	StatusTimeout time.Duration
	// Logger receives request errors. Default slog.Default().
	Logger *slog.Logger
	// History, if set, gives status pages their charts and serves
	// history.json; Tracker, if set, tracks the servers whose page, card or
	// badge is requested.
	History history.Store
	Tracker *history.Tracker
	// CardTTL is how long a preview card is reused: pass the relay's
	// cache period. Default 10 s.
	CardTTL time.Duration

	// ProbeScrapers and ProbeToken name the monitoring systems (Prometheus,
	// Uptime Kuma) whose requests to GET /probe, shields.json and the
	// embedded card skip the limit per visitor: address ranges, and a
	// bearer token. The relay's per-target limits apply to them all the
	// same. See package web/probe.
	ProbeScrapers []netip.Prefix
	ProbeToken    string
	// AdminToken, when set, opens the admin API (watches, the failed
	// alerts) to requests carrying it; WatchOptions are its watches'
	// cap and destination check. See package web/api.
	AdminToken   string
	WatchOptions manage.Options

	// ModulesDir, if set, is a directory of browser modules for protocols
	// built into this binary outside this repository's codecs/all, one per
	// family, made by scripts/build-wasm.sh --family IMPORTPATH --out DIR.
	// The pages then load them as they load the embedded family modules.
	// New fails on a module whose protocols the binary does not register.
	ModulesDir string
}

// ClientAddresser is implemented by an Exchanger that knows a visitor's
// address behind trusted proxies (relay.Server.ClientAddr): ProbeScrapers
// are matched against it.
type ClientAddresser interface {
	ClientAddr(r *http.Request) (netip.Addr, error)
}

// VisitorLimiter is implemented by an Exchanger that also limits how many
// server-side queries one visitor may cause (relay.Server.AllowVisitor).
// When Config.Exchanger has it, status pages and badges beyond the limit
// answer 429: each may make the relay query a game server, and the relay
// limits targets, not this site's visitors.
type VisitorLimiter interface {
	AllowVisitor(r *http.Request) bool
}

// KeptLister is a Config.MasterLists that says a kept list as it stands,
// without waiting (masters.Keeper): the browser page lists the first
// servers of each kept master from its first paint and its worker asks
// them as the relay's HELLO arrives, rather than once the page's script
// has read the list.
type KeptLister interface {
	Current(ctx context.Context, protocol, addr string, limit int) (server.MasterList, bool)
}

// New returns the handler for every page and static file.
func New(cfg Config) (http.Handler, error) {
	if cfg.Exchanger == nil {
		return nil, errors.New("web: Config.Exchanger is required (the relay's in-process Exchange)")
	}
	if cfg.RelayPath == "" {
		cfg.RelayPath = "/relay"
	}
	if !strings.HasPrefix(cfg.RelayPath, "/") {
		return nil, errors.New("web: Config.RelayPath must start with /")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	base, err := publicBase(cfg.PublicURL, cfg.Addr)
	if err != nil {
		return nil, err
	}
	bc := browse.Config{Relay: cfg.RelayPath, Masters: []browse.Master{}, Servers: []browse.Server{}, Protocols: browse.Protocols(), DefaultProtocol: server.DefaultProtocol,
		Games: browse.Games(), Sparks: cfg.History != nil}
	for _, m := range cfg.Masters {
		addr, ok := server.CanonicalAddr(m.Addr)
		if !ok {
			return nil, errors.New("web: Config.Masters: " + m.String() + ": " + strconv.Quote(m.Addr) + " is not host:port")
		}
		if m.Protocol == "" {
			return nil, errors.New("web: Config.Masters: " + m.Addr + " has no protocol")
		}
		m.Addr = addr
		bm, err := browse.NewMaster(m)
		if err != nil {
			return nil, errors.New("web: Config.Masters: " + m.String() + ": " + err.Error())
		}
		bc.Masters = append(bc.Masters, bm)
	}
	for _, s := range cfg.Servers {
		ref, err := server.New(s.Protocol, s.Addr, s.Options)
		if err != nil {
			return nil, errors.New("web: Config.Servers: " + err.Error())
		}
		bc.Servers = append(bc.Servers, browse.Server{Ref: ref, Status: ref.Path()})
	}
	a, err := loadAssets(cfg.Logger, cfg.ModulesDir)
	if err != nil {
		return nil, err
	}
	s := &site{assets: a, base: base, logger: cfg.Logger}
	st := &status.Handler{
		Exchanger: cfg.Exchanger, Timeout: cfg.StatusTimeout, Assets: a, Base: base,
		RelayPath: cfg.RelayPath, Logger: cfg.Logger, Error: s.errorPage,
		History: cfg.History, Tracker: cfg.Tracker, CardTTL: cfg.CardTTL,
	}
	if wl, ok := unbuffered(cfg.History).(status.WatchLister); ok {
		st.Watches = wl
	}
	if v, ok := cfg.Exchanger.(VisitorLimiter); ok {
		st.Allow = v.AllowVisitor
	}
	pr := &probe.Handler{
		Exchanger: cfg.Exchanger, Timeout: cfg.StatusTimeout, Allow: st.Allow, Scrapers: cfg.ProbeScrapers,
		Token: cfg.ProbeToken, Tracker: cfg.Tracker, Base: base, Logger: cfg.Logger,
	}
	if c, ok := cfg.Exchanger.(ClientAddresser); ok {
		pr.ClientAddr = c.ClientAddr
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /probe", pr.Probe)
	mux.HandleFunc("GET /s/{protocol}/{target}/shields.json", pr.ShieldsJSON)
	mux.HandleFunc("GET /s/{protocol}/{target}/embed", pr.Embed)
	bh := &browse.Handler{Assets: a, Config: bc, Base: base}
	if kl, ok := cfg.MasterLists.(KeptLister); ok {
		bh.Kept = kl.Current
	}
	mux.Handle("GET /{$}", bh)
	mux.HandleFunc("GET /s/{protocol}/{target}", st.Page)
	mux.HandleFunc("GET /s/{protocol}/{target}/badge.svg", st.Badge)
	mux.HandleFunc("GET /s/{protocol}/{target}/card.png", st.Card)
	mux.HandleFunc("GET /s/{protocol}/{target}/history.json", st.HistoryJSON)
	mux.HandleFunc("GET /s/{protocol}/{target}/history.html", st.HistoryFragment)
	mux.HandleFunc("GET /s/{protocol}/{target}/spark.svg", st.Spark)
	mux.HandleFunc("GET /s/{protocol}/{target}/live", st.Live)
	mux.HandleFunc("GET /history/tracked.json", st.TrackedJSON)
	// The JSON API (package api): the same queries as the status page,
	// under the same per-visitor limit.
	mux.Handle("/api/v1/", api.New(api.Config{Exchanger: cfg.Exchanger, Timeout: cfg.StatusTimeout, Allow: st.Allow,
		History: cfg.History, Tracker: cfg.Tracker, Logger: cfg.Logger, AdminToken: cfg.AdminToken, WatchOptions: cfg.WatchOptions}))
	mux.Handle("GET /inspect", &inspect.Handler{Assets: a, RelayPath: cfg.RelayPath, Base: base, Error: s.errorPage})
	mux.Handle("GET /static/{file...}", a)
	if cfg.MasterLists != nil {
		mux.Handle("GET /api/v1/masters/", cfg.MasterLists)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.errorPage(w, r, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+".")
	})
	return securityHeaders(mux), nil
}

// site holds what every page shares.
type site struct {
	assets *assets
	base   func(r *http.Request) string
	logger *slog.Logger
}

func (s *site) errorPage(w http.ResponseWriter, r *http.Request, status int, heading, detail string) {
	p := layout.Page{Head: layout.Head{Title: heading + " · querylens", Description: detail}, Assets: s.assets}
	w.Header().Set("Cache-Control", "no-cache")
	layout.RenderPage(w, r, status, p, layout.ErrorPage(p, status, heading, detail))
}

// publicBase returns the function giving the absolute URL prefix of the
// site: the configured public URL, or one made from the listen address.
func publicBase(public, addr string) (func(r *http.Request) string, error) {
	b := "http://localhost"
	switch {
	case public != "":
		u, err := url.Parse(public)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, errors.New("web: Config.PublicURL must be an absolute http(s) URL without a path, like https://ql.example.org")
		}
		b = u.Scheme + "://" + u.Host
	case addr != "":
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, errors.New("web: Config.Addr must be host:port, got " + strconv.Quote(addr))
		}
		if a, err := netip.ParseAddr(host); err == nil && a.IsUnspecified() || host == "" {
			host = "localhost"
		}
		b = "http://" + net.JoinHostPort(host, port)
	}
	return func(*http.Request) string { return b }, nil
}

// securityHeaders sets the headers every response carries, and gives an
// HTML response whose handler set no Content-Security-Policy (the
// fragments the status page swaps in) layout.FragmentPolicy and
// X-Frame-Options: a fragment opened directly is a page like any other,
// and no HTML of this site may be framed.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "strict-origin-when-cross-origin")
		h.ServeHTTP(&htmlPolicyWriter{ResponseWriter: w}, r)
	})
}

// htmlPolicyWriter adds the fragment policy to an HTML response that has
// none when its header is written.
type htmlPolicyWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *htmlPolicyWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		hdr := w.Header()
		if strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			if hdr.Get("Content-Security-Policy") == "" {
				hdr.Set("Content-Security-Policy", layout.FragmentPolicy)
			}
			if hdr.Get("X-Frame-Options") == "" && !framable(hdr.Get("Content-Security-Policy")) {
				hdr.Set("X-Frame-Options", "DENY")
			}
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

// framable reports whether a Content-Security-Policy lets other sites
// frame the page: a frame-ancestors directive other than 'none'.
func framable(csp string) bool {
	for d := range strings.SplitSeq(csp, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "frame-ancestors "); ok {
			return strings.TrimSpace(v) != "'none'"
		}
	}
	return false
}

func (w *htmlPolicyWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		if _, set := w.Header()["Content-Type"]; !set {
			// As net/http would sniff it, so that sniffed HTML is
			// covered too.
			w.Header().Set("Content-Type", http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *htmlPolicyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
