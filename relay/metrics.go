package relay

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Drop reasons: why a datagram or frame the relay had was not delivered.
const (
	DropQueueFull = "queue-full" // the client's send queue was full (slow reader)
	// DropRelayQueueFull: the send queues of all connections together
	// held MaxQueuedBytes.
	DropRelayQueueFull = "relay-queue-full"
	DropClosed         = "closed"       // the connection had gone
	DropWrongSource    = "wrong-source" // a datagram came from another address than the one queried
	DropOversize       = "oversize"     // a reply larger than MaxDatagram
	DropReplyCap       = "reply-cap"    // a reply beyond the per-query cap
	DropBadFrame       = "bad-frame"    // a client frame that did not parse
)

// rttBuckets are the upper bounds (seconds) of the upstream RTT histogram.
var rttBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// counterSet is a family of counters keyed by a label value from a small,
// fixed vocabulary (frame types, rule names, drop reasons).
type counterSet struct {
	mu sync.RWMutex
	m  map[string]*atomic.Uint64
}

func (c *counterSet) add(label string, n uint64) {
	c.mu.RLock()
	v := c.m[label]
	c.mu.RUnlock()
	if v == nil {
		c.mu.Lock()
		if c.m == nil {
			c.m = make(map[string]*atomic.Uint64)
		}
		if v = c.m[label]; v == nil {
			v = new(atomic.Uint64)
			c.m[label] = v
		}
		c.mu.Unlock()
	}
	v.Add(n)
}

func (c *counterSet) snapshot() (labels []string, values []uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for k := range c.m {
		labels = append(labels, k)
	}
	slices.Sort(labels)
	for _, k := range labels {
		values = append(values, c.m[k].Load())
	}
	return labels, values
}

type histogram struct {
	counts [14]atomic.Uint64 // len(rttBuckets)+1, the last is +Inf
	sumUS  atomic.Uint64
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(rttBuckets) && s > rttBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumUS.Add(uint64(d / time.Microsecond))
}

type metrics struct {
	conns        atomic.Int64
	connsTotal   atomic.Uint64
	upstreamOpen atomic.Int64
	framesIn     counterSet
	framesOut    counterSet
	forwarded    atomic.Uint64
	refusals     counterSet
	cacheHits    atomic.Uint64
	cacheMisses  atomic.Uint64
	coalesced    atomic.Uint64
	drops        counterSet
	replies      atomic.Uint64
	replyBytes   atomic.Uint64
	timeouts     counterSet
	rtt          histogram
	streams      atomic.Uint64 // stream exchanges started (TCP connections attempted)
	streamsOpen  atomic.Int64  // stream exchanges in progress
	streamBytes  atomic.Uint64 // stream reply bytes accepted
	streamEnds   counterSet    // stream exchanges ended, by END reason
	cacheEntries func() (entries, bytes int)
	shared       func(b []byte) []byte // the shared stores' metrics
}

// exposition writes the Prometheus text format (version 0.0.4).
func (m *metrics) exposition() []byte {
	var b []byte
	head := func(name, typ, help string) {
		b = append(b, "# HELP "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, help...)
		b = append(b, "\n# TYPE "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, typ...)
		b = append(b, '\n')
	}
	sample := func(name, labelName, labelValue string, v float64) {
		b = append(b, name...)
		if labelName != "" {
			b = append(b, '{')
			b = append(b, labelName...)
			b = append(b, `="`...)
			b = append(b, labelValue...)
			b = append(b, `"}`...)
		}
		b = append(b, ' ')
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		b = append(b, '\n')
	}
	single := func(name, typ, help string, v float64) {
		head(name, typ, help)
		sample(name, "", "", v)
	}
	family := func(name, help, label string, c *counterSet) {
		head(name, "counter", help)
		labels, values := c.snapshot()
		for i, l := range labels {
			sample(name, label, l, float64(values[i]))
		}
	}
	const p = "querylens_relay_"
	single(p+"connections", "gauge", "Open WebSocket connections.", float64(m.conns.Load()))
	single(p+"connections_total", "counter", "WebSocket connections accepted.", float64(m.connsTotal.Load()))
	single(p+"upstream_open", "gauge", "Upstream exchanges (UDP sockets) open.", float64(m.upstreamOpen.Load()))
	family(p+"frames_in_total", "Frames received from clients, by type.", "type", &m.framesIn)
	family(p+"frames_out_total", "Frames sent to clients, by type.", "type", &m.framesOut)
	single(p+"queries_forwarded_total", "counter", "Query datagrams sent upstream.", float64(m.forwarded.Load()))
	family(p+"refusals_total", "Queries and connections refused, by rule.", "rule", &m.refusals)
	single(p+"cache_hits_total", "counter", "Queries answered from the cache.", float64(m.cacheHits.Load()))
	single(p+"cache_misses_total", "counter", "Queries that needed an upstream exchange.", float64(m.cacheMisses.Load()))
	single(p+"cache_coalesced_total", "counter", "Queries that joined an upstream exchange already in flight.", float64(m.coalesced.Load()))
	if m.cacheEntries != nil {
		n, size := m.cacheEntries()
		single(p+"cache_entries", "gauge", "Cached replies.", float64(n))
		single(p+"cache_bytes", "gauge", "Bytes held by cached replies.", float64(size))
	}
	family(p+"timeouts_total", "Queries that got no reply, by cause (timeout, unreachable).", "rule", &m.timeouts)
	family(p+"drops_total", "Datagrams or frames not delivered, by reason.", "reason", &m.drops)
	single(p+"replies_total", "counter", "Reply datagrams received from upstream and accepted.", float64(m.replies.Load()))
	single(p+"reply_bytes_total", "counter", "Bytes of reply datagrams received from upstream and accepted.", float64(m.replyBytes.Load()))

	single(p+"tcp_exchanges_total", "counter", "Stream (TCP) exchanges started.", float64(m.streams.Load()))
	single(p+"tcp_exchanges_open", "gauge", "Stream (TCP) exchanges in progress.", float64(m.streamsOpen.Load()))
	single(p+"tcp_reply_bytes_total", "counter", "Bytes of stream replies received from upstream and accepted.", float64(m.streamBytes.Load()))
	family(p+"tcp_exchange_ends_total", "Stream (TCP) exchanges ended, by END reason (slow-client: per asker).", "reason", &m.streamEnds)

	name := p + "upstream_rtt_seconds"
	head(name, "histogram", "Time from sending a query upstream to its first reply.")
	var cum uint64
	for i, le := range rttBuckets {
		cum += m.rtt.counts[i].Load()
		sample(name+"_bucket", "le", strconv.FormatFloat(le, 'g', -1, 64), float64(cum))
	}
	cum += m.rtt.counts[len(rttBuckets)].Load()
	sample(name+"_bucket", "le", "+Inf", float64(cum))
	sample(name+"_sum", "", "", float64(m.rtt.sumUS.Load())/1e6)
	sample(name+"_count", "", "", float64(cum))
	if m.shared != nil {
		b = m.shared(b)
	}
	return b
}

// MetricsHandler serves the relay's counters in the Prometheus text format.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(s.metrics.exposition())
	})
}
