package relay

import (
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

type fakeReporter struct{ up atomic.Bool }

func (f *fakeReporter) Name() string { return "postgres" }
func (f *fakeReporter) Healthy() (bool, string) {
	if f.up.Load() {
		return true, "up"
	}
	return false, "down since 2026-01-02T03:04:05Z: connection refused"
}

// TestReportHealth: a dependency outside the relay shows in /healthz,
// /readyz and /metrics, and never takes the relay out of service.
func TestReportHealth(t *testing.T) {
	s := New(testConfig(), nil)
	body := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		switch path {
		case "/healthz":
			s.HealthHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		case "/readyz":
			s.ReadyHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		default:
			s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		}
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		path, want string
	}{{"/healthz", "ok\n"}, {"/readyz", "ready\n"}} {
		if code, b := body(tc.path); code != 200 || b != tc.want {
			t.Errorf("%s without dependencies: %d %q, want %q", tc.path, code, b, tc.want)
		}
	}
	if _, m := body("/metrics"); strings.Contains(m, "dependency_up") {
		t.Error("dependency_up without dependencies")
	}
	r := &fakeReporter{}
	s.ReportHealth(r)
	for _, path := range []string{"/healthz", "/readyz"} {
		code, b := body(path)
		if code != 200 || !strings.HasPrefix(b, "degraded\n") || !strings.Contains(b, "postgres: down since 2026-01-02T03:04:05Z: connection refused") {
			t.Errorf("%s with postgres down: %d %q", path, code, b)
		}
	}
	if _, m := body("/metrics"); !strings.Contains(m, `querylens_relay_dependency_up{name="postgres"} 0`) {
		t.Errorf("metrics with postgres down lack dependency_up 0:\n%s", m)
	}
	r.up.Store(true)
	if code, b := body("/readyz"); code != 200 || b != "ready\npostgres: up\n" {
		t.Errorf("/readyz with postgres back: %d %q", code, b)
	}
}
