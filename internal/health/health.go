// Package health serves the application's /healthz and /readyz and its
// dependencies' querylens_relay_dependency_up gauge, from the states of
// what querylens depends on: the relay's shared stores (relay.Server.Stores)
// and the history database (history.Buffered).
//
// A dependency that is down never takes the instance out of service: it
// serves without it (the relay with its local cache and limits, history
// buffered), and taking every instance out of a load balancer would turn
// one dependency's outage into a site outage. Both endpoints then answer
// 200 with "degraded" and a line naming it; only a shutdown answers 503.
package health

import (
	"net/http"
	"strings"
	"sync"
)

// Reporter is one dependency.
type Reporter interface {
	// Name identifies it in the lines and the metric's label ("redis").
	Name() string
	// Healthy reports whether it works, and a short detail: "up", or why
	// not and since when.
	Healthy() (ok bool, detail string)
}

// Prober is a Reporter that can check itself now rather than report what
// its last use found. /readyz probes before it reports.
type Prober interface {
	Reporter
	Probe()
}

// Checks is the set of dependencies an instance reports.
type Checks struct {
	closing func() bool

	mu        sync.Mutex
	reporters []Reporter
}

// New returns an empty set; closing (may be nil) reports whether the
// instance is shutting down.
func New(closing func() bool) *Checks {
	return &Checks{closing: closing}
}

// Add adds reporters, reported in the order added. Call it before serving.
func (c *Checks) Add(rs ...Reporter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reporters = append(c.reporters, rs...)
}

func (c *Checks) list() []Reporter {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reporters
}

// Status lists each dependency's state, one line each ("redis: up",
// "postgres: down since 2026-01-02T15:04:05Z: ..."), the names of those
// that are down, and whether all are up. Without any it is empty and true.
func (c *Checks) Status() (lines, down []string, ok bool) {
	ok = true
	for _, r := range c.list() {
		up, detail := r.Healthy()
		lines = append(lines, r.Name()+": "+detail)
		if !up {
			down = append(down, r.Name())
			ok = false
		}
	}
	return lines, down, ok
}

// Healthz serves /healthz: "ok" (or "degraded", with 200 too) and the
// dependencies' lines; 503 "shutting-down" once the instance shuts down.
func (c *Checks) Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.write(w, false) })
}

// Readyz serves /readyz: like Healthz, but every Prober checks itself
// first, so that it is current even on an instance whose traffic has not
// needed a store lately. The first line is "ready", "degraded" or
// "shutting-down" (503).
func (c *Checks) Readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.write(w, true) })
}

func (c *Checks) write(w http.ResponseWriter, probe bool) {
	if probe {
		for _, r := range c.list() {
			if p, ok := r.(Prober); ok {
				p.Probe()
			}
		}
	}
	lines, down, ok := c.Status()
	head, code := "ok", http.StatusOK
	switch {
	case c.closing != nil && c.closing():
		head, code = "shutting-down", http.StatusServiceUnavailable
	case !ok:
		head = "degraded"
	case probe:
		head = "ready"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.Header().Set("X-Querylens-Degraded", strings.Join(down, ","))
	}
	w.WriteHeader(code)
	w.Write([]byte(head + "\n" + strings.Join(append(lines, ""), "\n")))
}

// AppendMetrics appends the querylens_relay_dependency_up gauge, one
// sample per dependency, in the Prometheus text format; nothing without
// dependencies. (The name predates this package; dashboards read it.)
func (c *Checks) AppendMetrics(b []byte) []byte {
	rs := c.list()
	if len(rs) == 0 {
		return b
	}
	const name = "querylens_relay_dependency_up"
	b = append(b, "# HELP "+name+" Whether a shared store or the history database answers (1) or the instance works without it (0).\n# TYPE "+name+" gauge\n"...)
	for _, r := range rs {
		v := "0"
		if ok, _ := r.Healthy(); ok {
			v = "1"
		}
		b = append(b, name+`{name="`+r.Name()+`"} `+v+"\n"...)
	}
	return b
}

// Metrics serves next (a Prometheus text exposition, such as the relay's
// MetricsHandler) followed by AppendMetrics.
func (c *Checks) Metrics(next http.Handler) http.Handler { return Extend(next, c.AppendMetrics) }

// Extend serves next (a Prometheus text exposition) followed by what more
// appends to it; an answer of next other than 200 is passed on unchanged.
// Every part of the binary that adds series to /metrics wraps it so.
func Extend(next http.Handler, more func([]byte) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		if rec.code != 0 && rec.code != http.StatusOK {
			w.WriteHeader(rec.code)
			w.Write(rec.body)
			return
		}
		w.Header().Del("Content-Length") // the body grows
		w.Write(more(rec.body))
	})
}

// recorder keeps what next wrote.
type recorder struct {
	header http.Header
	code   int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body = append(r.body, b...)
	return len(b), nil
}
