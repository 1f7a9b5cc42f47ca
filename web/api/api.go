package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/querylens/querylens/alerts/manage"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/internal/ttlcache"
	"github.com/querylens/querylens/netquery"
)

// Prefix is where the API lives.
const Prefix = "/api/v1/"

// MaxBatch bounds the servers of one POST /api/v1/servers.
const MaxBatch = 100

// MaxBodyBytes bounds a batch's body: MaxBatch servers of generous length.
const MaxBodyBytes = 64 << 10

// Parallel bounds the probes one batch runs at once, so that a batch of
// silent servers takes a few timeouts, not one per server, without one
// request holding a hundred exchanges open.
const Parallel = 16

// CacheExchanger is implemented by an Exchanger that can answer from its
// cache alone (relay.Server.ExchangeCached): the API answers the servers
// asked past a visitor's limit with it.
type CacheExchanger interface {
	ExchangeCached(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error)
}

// Config configures the API.
type Config struct {
	// Exchanger asks the game servers: the relay, as for the status page.
	// If it is a CacheExchanger, servers past the visitor's limit are
	// answered from its cache. Required.
	Exchanger netquery.Exchanger
	// Timeout bounds one server's query. 0: server.DefaultTimeout.
	Timeout time.Duration
	// Allow, if set, takes one of the visitor's tokens (the relay's
	// AllowVisitor) and reports whether it had one.
	Allow func(r *http.Request) bool
	// History and Tracker, if set, serve GET /api/v1/tracked.
	History history.Store
	Tracker *history.Tracker
	// Logger receives store errors. Default slog.Default().
	Logger *slog.Logger

	// AdminToken, when set, serves /api/v1/watches and
	// /api/v1/outbox/failed to requests that carry it (Authorization:
	// Bearer); without it those paths do not exist (404). watches.go.
	AdminToken string
	// Watches is where those endpoints keep watches; nil: History's
	// store, when it keeps them.
	Watches manage.Store
	// WatchOptions are manage.Add's: the cap (default 1,000), the
	// destinations' URL check (default: a deliver.Sender's, https only).
	WatchOptions manage.Options
}

// Handler serves /api/v1/. Make it with New.
type Handler struct {
	cfg     Config
	mux     *http.ServeMux
	tracked *ttlcache.Cache[[]byte]
	now     func() time.Time

	watches  manage.Store // the admin endpoints' store (watches.go)
	adminSum []byte       // SHA-256 of Config.AdminToken
}

// New returns the API's handler, to mount at Prefix. It panics if
// cfg.Exchanger is nil, as web.New checks it first.
func New(cfg Config) *Handler {
	if cfg.Exchanger == nil {
		panic("api: Config.Exchanger is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), now: time.Now}
	h.tracked = ttlcache.New(8<<20, func(b []byte) int { return len(b) }, nil)
	h.mux.HandleFunc("GET /api/v1/servers/{protocol}/{target}", h.server)
	h.mux.HandleFunc("POST /api/v1/servers", h.batch)
	h.mux.HandleFunc("GET /api/v1/tracked", h.trackedList)
	h.mux.HandleFunc("GET /api/v1/openapi.yaml", serveOpenAPI)
	h.routeAdmin()
	h.mux.HandleFunc("OPTIONS /api/v1/", preflight)
	h.mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no API endpoint "+r.Method+" "+r.URL.Path+"; see /api/v1/openapi.yaml")
	})
	return h
}

// ServeHTTP serves the API with its cross-origin headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	CORS(h.mux).ServeHTTP(w, r)
}

// CORS adds the API's cross-origin headers to h's responses: any origin,
// no credentials. Wrap every /api/v1 handler mounted outside this package
// (the masters' lists) in it.
func CORS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		hd.Set("Access-Control-Expose-Headers", "Retry-After")
		h.ServeHTTP(w, r)
	})
}

// preflight answers OPTIONS for any API path: GET and POST with a JSON
// body may be sent from any origin.
func preflight(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "Content-Type")
	hd.Set("Access-Control-Max-Age", "86400")
	hd.Set("Allow", "GET, POST, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}

// Error is the body of every error response.
type Error struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"` // what was wrong: "protocol", "address", "options", "body", "servers[3]"
}

func writeError(w http.ResponseWriter, status int, field, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, Error{Error: msg, Field: field})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		// Only a bug gets here (every body is plain data): say so in
		// the API's own shape.
		b, _ = marshal(Error{Error: "api: encoding the response failed: " + err.Error()})
		status = http.StatusInternalServerError
	}
	writeRaw(w, status, b)
}

func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
