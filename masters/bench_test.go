package masters

import (
	"net/http/httptest"
	"testing"

	"github.com/querylens/querylens/demo"
)

// BenchmarkHandler20k measures GET /api/v1/masters/… for a list of 20,000
// servers, each looked up in a relay cache that holds none of them (the
// usual case: a page asks a few hundred at a time).
//
//	go test ./masters -run X -bench Handler20k -benchtime 20x
func BenchmarkHandler20k(b *testing.B) {
	fn := newFakeNet(newFakeClock())
	fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(20000), demo.Normal)
	k := newKeeper(b, fn, func(c *Config) { c.States = &CacheStates{Relay: &cachePeeker{}} }, "a2s="+steamAddr)
	listOf(b, k, "a2s", steamAddr, nil)
	b.ReportAllocs()
	b.ResetTimer()
	size := 0
	for range b.N {
		rec := httptest.NewRecorder()
		k.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/masters/a2s/"+steamAddr, nil))
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/body")
}
