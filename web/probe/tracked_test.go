package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/web/probe"
)

// TestTrackedMetrics checks the tracked servers' series on /metrics: they
// parse, carry protocol and address (and options when the server has
// any), come only from samples that say something of the server, drop the
// servers no longer tracked, and never exceed Max.
func TestTrackedMetrics(t *testing.T) {
	tracked := map[history.Key]bool{}
	tr := &probe.Tracked{Max: 3, IsTracked: func(k history.Key) bool { return tracked[k] }}
	samples := map[history.Key]history.Sample{
		{Protocol: "zandronum", Addr: "203.0.113.7:10666"}:           {State: history.StateOnline, Players: 5, Bots: 1, MaxPlayers: 16, RTT: 40 * time.Millisecond},
		{Protocol: "ogp", Addr: "203.0.113.8:27015?version=0.04"}:    {State: history.StateOffline},
		{Protocol: "a2s", Addr: "203.0.113.9:27015"}:                 {State: 0}, // the relay's doing: nothing recorded
		{Protocol: "quake3", Addr: "203.0.113.10:27960"}:             {State: history.StateOnline, Players: 2, MaxPlayers: 8, RTT: time.Millisecond},
		{Protocol: "quake3", Addr: "203.0.113.11:27960"}:             {State: history.StateOnline, Players: 1, MaxPlayers: 8},
		{Protocol: "gamespy1", Addr: "203.0.113.12:7778"}:            {State: history.StateRateLimited},
		{Protocol: "bloodmasters", Addr: "203.0.113.13:7777"}:        {State: history.StateOnline},
		{Protocol: "gamespy2", Addr: "203.0.113.14:7787?unused=yes"}: {State: history.StateMalformed},
	}
	probeFn := tr.Wrap(func(_ context.Context, k history.Key) history.Sample { return samples[k] })
	order := []history.Key{
		{Protocol: "zandronum", Addr: "203.0.113.7:10666"},
		{Protocol: "ogp", Addr: "203.0.113.8:27015?version=0.04"},
		{Protocol: "a2s", Addr: "203.0.113.9:27015"},
		{Protocol: "quake3", Addr: "203.0.113.10:27960"},
		{Protocol: "quake3", Addr: "203.0.113.11:27960"}, // over Max while the others are tracked
	}
	for _, k := range order {
		tracked[k] = true
		probeFn(context.Background(), k)
	}
	if n := tr.Len(); n != 3 {
		t.Fatalf("kept %d servers, want Max (3)", n)
	}
	fams := parse(t, tr.AppendMetrics(nil))
	up := fams["querylens_server_up"]
	if len(up.GetMetric()) != 3 {
		t.Fatalf("up series: %v", up)
	}
	want := map[string]float64{"zandronum 203.0.113.7:10666 ": 1, "ogp 203.0.113.8:27015 version=0.04": 0, "quake3 203.0.113.10:27960 ": 1}
	for _, m := range up.GetMetric() {
		l := labels(m)
		key := l["protocol"] + " " + l["address"] + " " + l["options"]
		if v, ok := want[key]; !ok || v != m.GetGauge().GetValue() {
			t.Errorf("up{%s} = %v", key, m.GetGauge().GetValue())
		}
	}
	if n := len(fams["querylens_server_players"].GetMetric()); n != 2 {
		t.Errorf("%d players series, want the 2 online servers'", n)
	}
	// Untracking frees a place; the next sample takes it.
	delete(tracked, order[0])
	tracked[order[4]] = true
	probeFn(context.Background(), order[4])
	body := string(tr.AppendMetrics(nil))
	if strings.Contains(body, "203.0.113.7:") || !strings.Contains(body, "203.0.113.11:") {
		t.Errorf("after untracking:\n%s", body)
	}
	parse(t, []byte(body))

	// Metrics appends to the relay's exposition.
	relayMetrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", probe.ContentType)
		w.Write([]byte("# HELP querylens_relay_x A counter.\n# TYPE querylens_relay_x counter\nquerylens_relay_x 7\n"))
	})
	rec := httptest.NewRecorder()
	tr.Metrics(relayMetrics).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	all := parse(t, rec.Body.Bytes())
	if _, ok := all["querylens_relay_x"]; !ok || len(all["querylens_server_up"].GetMetric()) != 3 {
		t.Errorf("combined exposition:\n%s", rec.Body)
	}
}
