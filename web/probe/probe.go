// Package probe serves querylens to monitoring systems: the blackbox-style
// probe endpoint Prometheus scrapes (GET /probe?protocol=P&target=HOST:PORT),
// the same answer as JSON for Uptime Kuma and scripts (&format=json),
// shields.io's endpoint badge (/s/{protocol}/{target}/shields.json), the
// live card other sites embed in an iframe (/s/{protocol}/{target}/embed),
// and, on the operator's request, the numbers of every tracked server on
// /metrics (Tracked).
//
// Every answer asks the game server through the relay's Exchange with
// server.Probe, as the status page does: the relay's policy, cache and
// per-target limits apply, so a scrape every few seconds by any number of
// Prometheus servers costs a game server one query per cache period. A
// scraper is a visitor like any other (the relay's limit per visitor)
// unless the operator names it, by address range (Handler.Scrapers) or by
// bearer token (Handler.Token); naming lifts the limit per visitor only,
// never the relay's per-target limits.
//
// Flow of one scrape:
//
//	Prometheus --GET /probe?protocol=zandronum&target=…--> Handler.Probe
//	  parameters checked (400 naming the parameter)
//	  named scraper? else Allow (429 with Retry-After)
//	  server.Probe --> relay Exchange --(cache hit, or one UDP query)--> game server
//	  server.SummaryOf --> text exposition (or JSON)
package probe

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/server/ident"
)

// Handler serves the probe endpoint, the shields.io endpoint and the
// embeddable card.
type Handler struct {
	// Exchanger asks the game servers: the relay (relay.Server), so that
	// its policy, cache and per-target limits apply. Required.
	Exchanger netquery.Exchanger
	// Timeout bounds one query; 0: server.DefaultTimeout.
	Timeout time.Duration
	// Allow, if set, is the limit per visitor (relay.Server.AllowVisitor):
	// false answers 429. Named scrapers skip it.
	Allow func(r *http.Request) bool
	// ClientAddr is the visitor's address as the relay sees it (behind a
	// trusted proxy, from X-Forwarded-For: relay.Server.ClientAddr).
	// Default: the request's RemoteAddr.
	ClientAddr func(r *http.Request) (netip.Addr, error)
	// Scrapers are address ranges whose requests skip Allow.
	Scrapers []netip.Prefix
	// Token, if not empty, is a bearer token (Authorization: Bearer …)
	// whose requests skip Allow.
	Token string
	// Tracker, if set, tracks the servers asked for, as the status page
	// and the badge do (server.Trackable).
	Tracker *history.Tracker
	// Base returns the site's absolute URL prefix ("https://example.org"),
	// for the embedded card's link to the status page.
	Base func(r *http.Request) string
	// Logger receives debug lines of the queries. Default slog.Default().
	Logger *slog.Logger
}

// Parameters of GET /probe that are not query options of the protocol.
const (
	paramProtocol = "protocol"
	paramTarget   = "target"
	paramFormat   = "format"
)

// Probe serves GET /probe?protocol=P&target=HOST:PORT[&format=json][&option=value…]:
// the Prometheus text exposition of one server's state (by default), or
// its server.Summary as JSON. The server's state is never an HTTP error:
// an offline server answers 200 with querylens_probe_success 0, as
// blackbox_exporter does, so that Prometheus records it.
func (h *Handler) Probe(w http.ResponseWriter, r *http.Request) {
	ref, format, err := probeParams(r.URL.RawQuery)
	if err != nil {
		textError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !h.allowed(r) {
		w.Header().Set("Retry-After", "5")
		textError(w, http.StatusTooManyRequests, "probe: too many requests from this address; try again in a few seconds, "+
			"or ask the operator to name this scraper (--probe-allow, --probe-token)")
		return
	}
	sum := h.summary(r, ref)
	w.Header().Set("Cache-Control", "no-store")
	switch format {
	case formatJSON:
		writeJSON(w, sum)
	default:
		w.Header().Set("Content-Type", ContentType)
		w.Write(AppendExposition(nil, sum))
	}
}

// Formats of GET /probe.
const (
	formatPrometheus = "prometheus"
	formatJSON       = "json"
)

// probeParams reads GET /probe's query string: protocol and target, the
// format, and the rest as the protocol's query options. Each error names
// the parameter.
func probeParams(raw string) (server.Ref, string, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return server.Ref{}, "", errors.New("probe: the query string does not parse: " + err.Error())
	}
	one := func(name string) (string, error) {
		vs := q[name]
		delete(q, name)
		switch len(vs) {
		case 0:
			return "", nil
		case 1:
			return vs[0], nil
		}
		return "", errors.New("probe: parameter " + name + " given more than once")
	}
	proto, err := one(paramProtocol)
	if err != nil {
		return server.Ref{}, "", err
	}
	target, err := one(paramTarget)
	if err != nil {
		return server.Ref{}, "", err
	}
	format, err := one(paramFormat)
	if err != nil {
		return server.Ref{}, "", err
	}
	switch format {
	case "", formatPrometheus:
		format = formatPrometheus
	case formatJSON:
	default:
		return server.Ref{}, "", errors.New("probe: parameter format: " + strconv.Quote(format) + " is not prometheus or json")
	}
	switch {
	case proto == "":
		return server.Ref{}, "", errors.New("probe: parameter protocol is missing (one of " + ident.Known() + ")")
	case target == "":
		return server.Ref{}, "", errors.New("probe: parameter target is missing (HOST:PORT, e.g. 203.0.113.7:10666)")
	}
	opts, err := server.FromValues(q)
	if err != nil {
		var re *server.RefError
		if errors.As(err, &re) {
			return server.Ref{}, "", errors.New("probe: parameter " + re.Input + " given more than once")
		}
		return server.Ref{}, "", errors.New("probe: " + err.Error())
	}
	ref, err := server.New(proto, target, opts)
	if err != nil {
		return server.Ref{}, "", refError(err)
	}
	return ref, format, nil
}

// refError says which parameter server.New refused.
func refError(err error) error {
	switch {
	case errors.Is(err, server.ErrProtocol):
		return errors.New("probe: parameter protocol: querylens does not speak it (it knows " + ident.Known() + ")")
	case errors.Is(err, server.ErrAddr):
		return errors.New("probe: parameter target: not HOST:PORT with a port above 0 (e.g. 203.0.113.7:10666)")
	}
	var ce *codecs.Error
	if errors.As(err, &ce) {
		return errors.New("probe: query option " + ce.Field + ": " + ce.Message())
	}
	return errors.New("probe: query options: " + err.Error())
}

// allowed reports whether r may cause a query now: a named scraper always
// may (the relay's per-target limits still apply to what it causes);
// anyone else within the limit per visitor.
func (h *Handler) allowed(r *http.Request) bool {
	if h.named(r) {
		return true
	}
	return h.Allow == nil || h.Allow(r)
}

// named reports whether r comes from a scraper the operator named: the
// bearer token (compared in constant time), or an address in Scrapers.
func (h *Handler) named(r *http.Request) bool {
	if h.Token != "" {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok &&
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(h.Token)) == 1 {
			return true
		}
	}
	if len(h.Scrapers) == 0 {
		return false
	}
	ip, ok := h.clientAddr(r)
	if !ok {
		return false
	}
	for _, p := range h.Scrapers {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func (h *Handler) clientAddr(r *http.Request) (netip.Addr, bool) {
	if h.ClientAddr != nil {
		ip, err := h.ClientAddr(r)
		return ip, err == nil && ip.IsValid()
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// summary asks ref's server through the relay and tracks it when the
// answer allows.
func (h *Handler) summary(r *http.Request, ref server.Ref) server.Summary {
	rep := server.Probe(r.Context(), h.Exchanger, ref, h.Timeout)
	if h.Logger != nil {
		h.Logger.Debug("probe", "server", ref.String(), "state", rep.State.String(), "rtt", rep.RTT, "cached", rep.Cached)
	}
	if h.Tracker != nil {
		k := ref.Key()
		if server.Trackable(rep.State, h.Tracker.IsTracked(k)) {
			// Written even if the scraper has gone: the view happened.
			h.Tracker.View(context.WithoutCancel(r.Context()), k, history.SourceView)
		}
	}
	return server.SummaryOf(rep)
}

func textError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(msg + "\n"))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		textError(w, http.StatusInternalServerError, "probe: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

// writeJSONBody writes v's JSON after the header was sent.
func writeJSONBody(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return // the types written here marshal without error
	}
	w.Write(append(b, '\n'))
}
