package probe

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/internal/health"
)

// Tracked keeps the last sample of every tracked server, for /metrics
// (serve --metrics-servers): one series per server and metric, labelled
// with its protocol and address (and options, when it has any). It holds
// at most Max servers, and only tracked ones, so the series are bounded by
// the tracker's own bound (--track-max).
//
// It learns the samples by wrapping the sampler's history.Probe (Wrap), so
// it asks no server itself.
type Tracked struct {
	// Max bounds the servers kept (the tracker's Max).
	Max int
	// IsTracked reports whether a server is still tracked
	// (history.Tracker.IsTracked); one that is not is dropped. Nil: every
	// server sampled is.
	IsTracked func(history.Key) bool

	mu   sync.Mutex
	last map[history.Key]history.Sample
}

// Wrap returns p recording each sample that says something about the
// server (State not 0).
func (t *Tracked) Wrap(p history.Probe) history.Probe {
	return func(ctx context.Context, k history.Key) history.Sample {
		s := p(ctx, k)
		if s.State != 0 {
			t.record(k, s)
		}
		return s
	}
}

func (t *Tracked) record(k history.Key, s history.Sample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil {
		t.last = map[history.Key]history.Sample{}
	}
	if _, ok := t.last[k]; !ok && len(t.last) >= max(t.Max, 1) {
		t.sweepLocked()
		if len(t.last) >= max(t.Max, 1) {
			return // every kept server is still tracked: the newest waits
		}
	}
	t.last[k] = s
}

// sweepLocked drops the servers no longer tracked (the caller holds mu).
func (t *Tracked) sweepLocked() {
	if t.IsTracked == nil {
		return
	}
	for k := range t.last {
		if !t.IsTracked(k) {
			delete(t.last, k)
		}
	}
}

// Len is how many servers are kept.
func (t *Tracked) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.last)
}

// Metric names of the tracked servers.
const (
	metricServerUp      = "querylens_server_up"
	metricServerPlayers = "querylens_server_players"
	metricServerMax     = "querylens_server_max_players"
	metricServerBots    = "querylens_server_bots"
	metricServerRTT     = "querylens_server_rtt_seconds"
)

// AppendMetrics appends the text exposition of the tracked servers' last
// samples, sorted by key so that a scrape is stable.
func (t *Tracked) AppendMetrics(b []byte) []byte {
	t.mu.Lock()
	t.sweepLocked()
	keys := make([]history.Key, 0, len(t.last))
	for k := range t.last {
		keys = append(keys, k)
	}
	samples := make([]history.Sample, len(keys))
	slices.SortFunc(keys, func(a, b history.Key) int { return strings.Compare(a.String(), b.String()) })
	for i, k := range keys {
		samples[i] = t.last[k]
	}
	t.mu.Unlock()
	if len(keys) == 0 {
		return b
	}
	families := []struct {
		name, help string
		value      func(history.Sample) (string, bool)
	}{
		{metricServerUp, "Whether the tracked server answered its last sample with its status (1) or not (0).", func(s history.Sample) (string, bool) {
			return boolValue(s.State == history.StateOnline), true
		}},
		{metricServerPlayers, "Players on the tracked server at its last sample, bots included.", func(s history.Sample) (string, bool) {
			return strconv.Itoa(s.Players), s.State == history.StateOnline
		}},
		{metricServerMax, "The tracked server's player capacity at its last sample.", func(s history.Sample) (string, bool) {
			return strconv.Itoa(s.MaxPlayers), s.State == history.StateOnline
		}},
		{metricServerBots, "Bots on the tracked server at its last sample.", func(s history.Sample) (string, bool) {
			return strconv.Itoa(s.Bots), s.State == history.StateOnline
		}},
		{metricServerRTT, "Round trip of the tracked server's last sample, in seconds.", func(s history.Sample) (string, bool) {
			return strconv.FormatFloat(s.RTT.Seconds(), 'g', -1, 64), s.RTT > 0
		}},
	}
	for _, f := range families {
		b = appendHeader(b, f.name, f.help)
		for i, k := range keys {
			v, ok := f.value(samples[i])
			if !ok {
				continue
			}
			b = append(b, f.name+"{"...)
			b = appendKeyLabels(b, k)
			b = append(b, "} "+v+"\n"...)
		}
	}
	return b
}

// appendKeyLabels appends protocol="…",address="…" and, for a server
// asked with query options, options="k=v&…".
func appendKeyLabels(b []byte, k history.Key) []byte {
	addr, opts, _ := strings.Cut(k.Addr, "?")
	b = appendLabel(b, "protocol", k.Protocol, false)
	b = appendLabel(b, "address", addr, true)
	if opts != "" {
		b = appendLabel(b, "options", opts, true)
	}
	return b
}

// Metrics serves next (a text exposition, such as the relay's
// MetricsHandler) followed by the tracked servers' metrics.
func (t *Tracked) Metrics(next http.Handler) http.Handler {
	return health.Extend(next, t.AppendMetrics)
}
