package relay

import (
	"strconv"

	"github.com/querylens/querylens/relay/shared"
)

// The relay's part in the application's health checks (package
// internal/health serves /healthz and /readyz): the state of each shared
// store, and whether the relay is shutting down. Its own metrics count
// the stores' errors and how the shared cache served exchanges.

// StoreHealth is one shared store's health as this relay sees it: up
// until an operation fails, then down until a probe answers (see
// shared.Health).
type StoreHealth struct{ x *shared.Health }

// Name names the store ("redis").
func (h StoreHealth) Name() string { return h.x.Name() }

// Healthy reports whether the store is up, and "up" or "down since
// 2026-01-02T15:04:05Z: " and the last error.
func (h StoreHealth) Healthy() (bool, string) { return h.x.Healthy() }

// Probe pings the store now (bounded by Config.SharedTimeout) and records
// the result.
func (h StoreHealth) Probe() { h.x.Probe() }

// Stores returns the health of each distinct shared store
// (Config.SharedCache, Config.SharedLimiter); none without.
func (s *Server) Stores() []StoreHealth {
	if s.shared == nil {
		return nil
	}
	hs := make([]StoreHealth, len(s.shared.Deps()))
	for i, x := range s.shared.Deps() {
		hs[i] = StoreHealth{x}
	}
	return hs
}

// ShuttingDown reports whether Shutdown has begun: the relay refuses new
// connections and queries.
func (s *Server) ShuttingDown() bool { return s.isClosing() }

// appendDependencyMetrics writes the shared stores' metrics.
func (s *Server) appendDependencyMetrics(b []byte) []byte {
	sh := s.shared
	if sh == nil {
		return b
	}
	const p = "querylens_relay_"
	b = append(b, "# HELP "+p+"dependency_errors_total Failed or timed-out shared store operations.\n# TYPE "+p+"dependency_errors_total counter\n"...)
	for _, x := range sh.Deps() {
		b = append(b, p+`dependency_errors_total{name="`+x.Name()+`"} `+strconv.FormatUint(x.Errors(), 10)+"\n"...)
	}
	b = append(b, "# HELP "+p+"shared_total Exchanges by how the shared cache served them (hit, coalesced, owner, local, fallback).\n# TYPE "+p+"shared_total counter\n"...)
	labels, values := sh.outcomes.snapshot()
	for i, l := range labels {
		b = append(b, p+`shared_total{result="`+l+`"} `+strconv.FormatUint(values[i], 10)+"\n"...)
	}
	return b
}
