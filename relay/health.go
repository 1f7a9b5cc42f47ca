package relay

import (
	"net/http"
	"strconv"
	"strings"
)

// HealthReporter is a dependency outside the relay (the history database)
// whose state the relay's /healthz, /readyz and /metrics report along with
// its shared stores.
type HealthReporter interface {
	Name() string
	// Healthy reports whether it works, and a short detail ("up", or why
	// not and since when).
	Healthy() (ok bool, detail string)
}

// ReportHealth adds h to what Health, /healthz, /readyz and /metrics
// report. Call it before serving.
func (s *Server) ReportHealth(h HealthReporter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reporters = append(s.reporters, h)
}

func (s *Server) healthReporters() []HealthReporter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reporters
}

// Health lists the shared stores' and reporters' states, one line each,
// and whether all are up. Without any it is empty and true.
func (s *Server) Health() (lines []string, ok bool) {
	ok = true
	if s.shared != nil {
		for _, x := range s.shared.deps {
			line, up := x.status()
			lines = append(lines, line)
			ok = ok && up
		}
	}
	for _, h := range s.healthReporters() {
		up, detail := h.Healthy()
		lines = append(lines, h.Name()+": "+detail)
		ok = ok && up
	}
	return lines, ok
}

// HealthHandler serves /healthz: 200 while the relay serves, listing each
// shared store ("redis: up", or "redis: down since ...: error"). A store
// that is down does not make the relay unhealthy: it serves with its local
// cache and limits.
func (s *Server) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeHealth(w, false)
	})
}

// ReadyHandler serves /readyz: like /healthz, but it pings every shared
// store first (bounded by SharedTimeout), so that it is current even on an
// instance whose traffic has not needed the store lately, and it answers
// 503 while the relay shuts down. The first line is "ready", "degraded" (a store is down; the relay
// still serves) or "shutting-down".
func (s *Server) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeHealth(w, true)
	})
}

func (s *Server) writeHealth(w http.ResponseWriter, probe bool) {
	if probe && s.shared != nil {
		for _, x := range s.shared.deps {
			x.probe()
		}
	}
	lines, ok := s.Health()
	head, code := "ok", http.StatusOK
	switch {
	case s.isClosing():
		head, code = string(RuleShuttingDown), http.StatusServiceUnavailable
	case !ok:
		head = "degraded"
	case probe:
		head = "ready"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.Header().Set("X-Querylens-Degraded", strings.Join(s.downNames(), ","))
	}
	w.WriteHeader(code)
	w.Write([]byte(head + "\n" + strings.Join(append(lines, ""), "\n")))
}

func (s *Server) downNames() []string {
	var names []string
	if s.shared != nil {
		for _, x := range s.shared.deps {
			if !x.up.Load() {
				names = append(names, x.d.Name())
			}
		}
	}
	for _, h := range s.healthReporters() {
		if up, _ := h.Healthy(); !up {
			names = append(names, h.Name())
		}
	}
	return names
}

// appendDependencyMetrics writes the shared stores' and reporters'
// metrics.
func (s *Server) appendDependencyMetrics(b []byte) []byte {
	sh := s.shared
	reporters := s.healthReporters()
	if sh == nil && len(reporters) == 0 {
		return b
	}
	const p = "querylens_relay_"
	b = append(b, "# HELP "+p+"dependency_up Whether a shared store or the history database answers (1) or the instance works without it (0).\n# TYPE "+p+"dependency_up gauge\n"...)
	up := func(name string, ok bool) {
		v := "0"
		if ok {
			v = "1"
		}
		b = append(b, p+`dependency_up{name="`+name+`"} `+v+"\n"...)
	}
	for _, h := range reporters {
		ok, _ := h.Healthy()
		up(h.Name(), ok)
	}
	if sh == nil {
		return b
	}
	for _, x := range sh.deps {
		up(x.d.Name(), x.up.Load())
	}
	b = append(b, "# HELP "+p+"dependency_errors_total Failed or timed-out shared store operations.\n# TYPE "+p+"dependency_errors_total counter\n"...)
	for _, x := range sh.deps {
		b = append(b, p+`dependency_errors_total{name="`+x.d.Name()+`"} `+strconv.FormatUint(x.errors.Load(), 10)+"\n"...)
	}
	b = append(b, "# HELP "+p+"shared_total Exchanges by how the shared cache served them (hit, coalesced, owner, local, fallback).\n# TYPE "+p+"shared_total counter\n"...)
	labels, values := sh.outcomes.snapshot()
	for i, l := range labels {
		b = append(b, p+`shared_total{result="`+l+`"} `+strconv.FormatUint(values[i], 10)+"\n"...)
	}
	return b
}
