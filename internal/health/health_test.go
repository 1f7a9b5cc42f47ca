package health

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

type fakeReporter struct {
	name   string
	up     atomic.Bool
	probes atomic.Int32
}

func (f *fakeReporter) Name() string { return f.name }
func (f *fakeReporter) Healthy() (bool, string) {
	if f.up.Load() {
		return true, "up"
	}
	return false, "down since 2026-01-02T03:04:05Z: connection refused"
}

type fakeProber struct{ fakeReporter }

func (f *fakeProber) Probe() { f.probes.Add(1); f.up.Store(true) }

func serve(h http.Handler) (int, http.Header, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	return rec.Code, rec.Header(), rec.Body.String()
}

// metricsBase stands in for the relay's exposition.
var metricsBase = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte("querylens_relay_connections 0\n"))
})

// TestChecks: a dependency that is down shows in /healthz, /readyz and the
// metrics and never takes the instance out of service; a shutdown does.
func TestChecks(t *testing.T) {
	var closing atomic.Bool
	c := New(closing.Load)
	pg := &fakeReporter{name: "postgres"}
	for _, tc := range []struct {
		name    string
		setup   func()
		h       http.Handler
		code    int
		body    string
		header  string // X-Querylens-Degraded
		metrics []string
	}{
		{name: "healthz without dependencies", h: c.Healthz(), code: 200, body: "ok\n"},
		{name: "readyz without dependencies", h: c.Readyz(), code: 200, body: "ready\n"},
		{name: "healthz with postgres down", setup: func() { c.Add(pg) }, h: c.Healthz(), code: 200,
			body: "degraded\npostgres: down since 2026-01-02T03:04:05Z: connection refused\n", header: "postgres",
			metrics: []string{`querylens_relay_dependency_up{name="postgres"} 0`}},
		{name: "readyz with postgres down", h: c.Readyz(), code: 200,
			body: "degraded\npostgres: down since 2026-01-02T03:04:05Z: connection refused\n", header: "postgres"},
		{name: "readyz with postgres back", setup: func() { pg.up.Store(true) }, h: c.Readyz(), code: 200,
			body: "ready\npostgres: up\n", metrics: []string{`querylens_relay_dependency_up{name="postgres"} 1`}},
		{name: "healthz while shutting down", setup: func() { closing.Store(true) }, h: c.Healthz(), code: 503,
			body: "shutting-down\npostgres: up\n"},
		{name: "readyz while shutting down", h: c.Readyz(), code: 503, body: "shutting-down\npostgres: up\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			code, h, body := serve(tc.h)
			if code != tc.code || body != tc.body || h.Get("X-Querylens-Degraded") != tc.header || h.Get("Cache-Control") != "no-store" {
				t.Errorf("got %d %q (degraded %q, cache %q), want %d %q (degraded %q)", code, body, h.Get("X-Querylens-Degraded"), h.Get("Cache-Control"), tc.code, tc.body, tc.header)
			}
			_, _, m := serve(c.Metrics(metricsBase))
			if !strings.HasPrefix(m, "querylens_relay_connections 0\n") {
				t.Errorf("metrics lost the base exposition:\n%s", m)
			}
			if len(c.list()) == 0 && strings.Contains(m, "dependency_up") {
				t.Errorf("dependency_up without dependencies:\n%s", m)
			}
			for _, want := range tc.metrics {
				if !strings.Contains(m, want+"\n") {
					t.Errorf("metrics lack %s:\n%s", want, m)
				}
			}
		})
	}
}

// TestReadyzProbes: /readyz asks a Prober to check itself before it
// reports; /healthz reports what is known.
func TestReadyzProbes(t *testing.T) {
	c := New(nil)
	p := &fakeProber{fakeReporter{name: "redis"}}
	c.Add(p)
	if _, _, body := serve(c.Healthz()); body != "degraded\nredis: down since 2026-01-02T03:04:05Z: connection refused\n" || p.probes.Load() != 0 {
		t.Fatalf("healthz: %q, %d probes", body, p.probes.Load())
	}
	if _, _, body := serve(c.Readyz()); body != "ready\nredis: up\n" || p.probes.Load() != 1 {
		t.Fatalf("readyz: %q, %d probes", body, p.probes.Load())
	}
}
