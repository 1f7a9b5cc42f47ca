package probe_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/web/pages/status"
	"github.com/querylens/querylens/web/probe"
)

// cachedStage is a relay whose cache holds the answer of one loopback
// server (the relay's clock stands still, so it never expires), and the
// path of that server.
func cachedStage(b *testing.B) (*relay.Server, string) {
	srv := startServers(b, 1)[0]
	rs := newRelay(b, newClock(), relay.Config{})
	h := routes(&probe.Handler{Exchanger: rs, Logger: discard})
	// Until the answer is served from the cache (the first asks the
	// server, the next may join its reply window while it is open).
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec := get(h, "/probe?format=json&protocol=webtest&target="+srv.Addr, "192.0.2.1:5000")
		if strings.Contains(rec.Body.String(), `"source":"cache"`) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the answer never came from the cache: %s", rec.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := srv.Queries(); n != 1 {
		b.Fatalf("warming up asked the server %d times", n)
	}
	return rs, srv.Addr
}

// benchCPU runs h on path b.N times and reports the process's CPU time per
// request (user and system, every goroutine: the relay's too), which the
// machine's other load does not inflate as it does wall time.
func benchCPU(b *testing.B, h http.Handler, path string) time.Duration {
	b.ReportAllocs()
	start := bench.ProcessCPU()
	for b.Loop() {
		if rec := get(h, path, "192.0.2.1:5000"); rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
	}
	cpu := (bench.ProcessCPU() - start) / time.Duration(b.N)
	b.ReportMetric(float64(cpu.Nanoseconds()), "cpu-ns/op")
	return cpu
}

// BenchmarkProbeCached is a Prometheus scrape of GET /probe answered from
// the relay's cache; it must cost at most 1 ms of CPU.
//
//	go test ./web/probe -run '^$' -bench Cached -benchtime 2000x
func BenchmarkProbeCached(b *testing.B) {
	rs, addr := cachedStage(b)
	h := routes(&probe.Handler{Exchanger: rs, Logger: discard})
	if cpu := benchCPU(b, h, "/probe?protocol=webtest&target="+addr); cpu > time.Millisecond {
		b.Errorf("a cached probe took %v of CPU, over the 1 ms budget", cpu)
	}
}

// BenchmarkProbeCachedJSON is the same scrape as Uptime Kuma's JSON query.
func BenchmarkProbeCachedJSON(b *testing.B) {
	rs, addr := cachedStage(b)
	h := routes(&probe.Handler{Exchanger: rs, Logger: discard})
	benchCPU(b, h, "/probe?format=json&protocol=webtest&target="+addr)
}

// BenchmarkShieldsCached is the shields.io endpoint from the cache.
func BenchmarkShieldsCached(b *testing.B) {
	rs, addr := cachedStage(b)
	h := routes(&probe.Handler{Exchanger: rs, Logger: discard})
	benchCPU(b, h, "/s/webtest/"+addr+"/shields.json")
}

// BenchmarkBadgeCached is the baseline: the status page's SVG badge of
// the same server, from the same cache.
func BenchmarkBadgeCached(b *testing.B) {
	rs, addr := cachedStage(b)
	st := &status.Handler{Exchanger: rs, Logger: discard, Base: func(*http.Request) string { return "https://ql.example.org" }}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /s/{protocol}/{target}/badge.svg", st.Badge)
	benchCPU(b, mux, "/s/webtest/"+addr+"/badge.svg")
}
