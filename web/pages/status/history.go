package status

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/web/card"
	"github.com/querylens/querylens/web/layout"
)

// HistoryKey is the history key of a server: its protocol, and its target
// with the query options as the status page's URL carries them, so that
// the sampler asks exactly what the page asks.
func HistoryKey(protocol, target string, opts map[string]string) history.Key {
	return history.Key{Protocol: protocol, Addr: target + queryString(opts)}
}

// parseKey is HistoryKey's inverse.
func parseKey(k history.Key) (codecs.Codec, string, map[string]string, error) {
	c, err := codecs.Lookup(k.Protocol)
	if err != nil {
		return nil, "", nil, err
	}
	addr, raw, _ := strings.Cut(k.Addr, "?")
	target, ok := ParseTarget(addr)
	if !ok {
		return nil, "", nil, &url.Error{Op: "parse", URL: k.Addr, Err: errNotHostPort}
	}
	var opts map[string]string
	if raw != "" {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return nil, "", nil, err
		}
		opts = map[string]string{}
		for name, vs := range q {
			opts[name] = vs[len(vs)-1]
		}
	}
	if _, err := c.NewQuery(opts); err != nil {
		return nil, "", nil, err
	}
	return c, target, opts, nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errNotHostPort = constError("not host:port")

// Probe returns the sampler's probe: one status query through ex (the
// relay's Exchange, so that its policy, cache and limits apply), made into
// a sample.
func Probe(ex netquery.Exchanger, timeout time.Duration) history.Probe {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return func(ctx context.Context, k history.Key) history.Sample {
		c, target, opts, err := parseKey(k)
		if err != nil {
			return history.Sample{State: history.StateMalformed}
		}
		return SampleOf(query(ctx, ex, c, target, opts, timeout))
	}
}

// SampleOf turns a status query's report into a history sample. A target
// the relay refuses or cannot reach counts as offline: it did not answer.
func SampleOf(rep Report) history.Sample {
	s := history.Sample{At: rep.At, RTT: rep.RTT}
	switch rep.State {
	case Online:
		s.State = history.StateOnline
	case RateLimited:
		s.State = history.StateRateLimited
	case Banned:
		s.State = history.StateBanned
	case Malformed:
		s.State = history.StateMalformed
	default:
		s.State = history.StateOffline
	}
	if rep.Msg != nil && rep.Msg.Info != nil && s.State == history.StateOnline {
		in := rep.Msg.Info
		if in.Has&codecs.HasName != 0 {
			s.Name = StripColors(in.Name)
		}
		s.Map = StripColors(in.Map)
		s.Players = in.NumPlayers
		if in.Has&codecs.HasNumPlayers == 0 {
			s.Players = len(in.Players)
		}
		for _, p := range in.Players {
			if p.Bot {
				s.Bots++
			}
		}
		s.Bots = min(s.Bots, s.Players)
		s.MaxPlayers = maxPlayers(in)
		s.Players = min(max(s.Players, 0), history.MaxPlayers)
		s.MaxPlayers = min(max(s.MaxPlayers, 0), history.MaxPlayers)
	}
	return s
}

// trackable reports whether a view that found state may track the server:
// never one the relay refuses or cannot reach; a new one only once it has
// answered (a flood of made-up addresses finds nothing that answers); one
// already tracked whatever it answered, so that its downtime is recorded.
func trackable(state State, tracked bool) bool {
	switch state {
	case Refused, Unreachable:
		return false
	case Offline:
		return tracked
	}
	return true
}

// track records a view of the server of rep.
func (h *Handler) track(ctx context.Context, rep Report) {
	if h.Tracker == nil {
		return
	}
	k := HistoryKey(rep.Protocol.Name(), rep.Target, rep.Options)
	if trackable(rep.State, h.Tracker.IsTracked(k)) {
		// Written even if the visitor has gone: the view happened.
		h.Tracker.View(context.WithoutCancel(ctx), k, history.SourceView)
	}
}

// summary reads the server's history, or nil without a store or on error
// (logged: the page still shows the present).
func (h *Handler) summary(ctx context.Context, k history.Key) *history.Summary {
	if h.History == nil {
		return nil
	}
	s, err := history.Summarize(ctx, h.History, k, time.Now())
	if err != nil {
		h.Logger.Warn("history summary", "key", k.String(), "err", err)
		return nil
	}
	return &s
}

// HistoryJSON serves GET /s/{protocol}/{target}/history.json: the charts,
// figures and maps of the status page as data. It reads the store only
// and never queries the server nor tracks it; the per-visitor limit still
// applies, as reading a month of history is not free.
func (h *Handler) HistoryJSON(w http.ResponseWriter, r *http.Request) {
	c, target, opts, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	if h.History == nil {
		h.Error(w, r, http.StatusNotFound, "No history here", "This site does not record server history (serve --data).")
		return
	}
	k := HistoryKey(c.Name(), target, opts)
	sum := h.summary(r.Context(), k)
	if sum == nil {
		h.Error(w, r, http.StatusServiceUnavailable, "History unavailable", "The history store could not be read; try again later.")
		return
	}
	out := newHistoryJSON(*sum, h.Tracker != nil && h.Tracker.IsTracked(k))
	b, err := json.Marshal(out)
	if err != nil {
		http.Error(w, "history: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// Samples come once a minute at most.
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.Write(b)
}

// HistoryFragment serves GET /s/{protocol}/{target}/history.html: the
// status page's history section alone, which static/history.js swaps in
// once a minute so that an open page's charts stay current. Like
// history.json it reads the store only, within the per-visitor limit.
func (h *Handler) HistoryFragment(w http.ResponseWriter, r *http.Request) {
	c, target, opts, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	if h.History == nil {
		http.Error(w, "no history on this site", http.StatusNotFound)
		return
	}
	path := Path(c.Name(), target, nil)
	v := view{HistoryURL: path + "/history.json" + queryString(opts), FragmentURL: path + "/history.html" + queryString(opts)}
	v.History = h.summary(r.Context(), HistoryKey(c.Name(), target, opts))
	if v.History == nil {
		http.Error(w, "history unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	layout.Render(w, r, http.StatusOK, historyCharts(v))
}

// historyJSON is the document history.json serves (README "History").
type historyJSON struct {
	Protocol  string      `json:"protocol"`
	Address   string      `json:"address"` // host:port and ?options, as in the page URL
	Tracked   bool        `json:"tracked"`
	Synthetic bool        `json:"synthetic"` // some of the data is made up (demo)
	Generated time.Time   `json:"generated"`
	Ranges    []rangeJSON `json:"ranges"`
	Maps      []mapJSON   `json:"maps"`
}

type rangeJSON struct {
	Name        string      `json:"name"`
	From        time.Time   `json:"from"`
	To          time.Time   `json:"to"`
	StepSeconds int         `json:"step_seconds"`
	Samples     int         `json:"samples"`
	Online      int         `json:"online"`
	Uptime      *float64    `json:"uptime"` // null without samples
	Peak        int         `json:"peak"`
	Capacity    int         `json:"capacity"`
	Synthetic   int         `json:"synthetic_samples"`
	Points      []pointJSON `json:"points"`
}

type pointJSON struct {
	T         int64    `json:"t"`       // period start, Unix seconds
	Players   *float64 `json:"players"` // mean over online samples; null: no answer
	Max       int      `json:"max"`
	Up        *float64 `json:"up"` // fraction of samples online; null: no sample
	Synthetic bool     `json:"synthetic,omitempty"`
}

type mapJSON struct {
	Map     string    `json:"map"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Samples int       `json:"samples"`
}

func newHistoryJSON(s history.Summary, tracked bool) historyJSON {
	out := historyJSON{Protocol: s.Protocol, Address: s.Addr, Tracked: tracked, Synthetic: s.Synthetic(),
		Generated: s.At, Ranges: []rangeJSON{}, Maps: []mapJSON{}}
	for _, r := range s.Ranges {
		rj := rangeJSON{Name: r.Name, From: r.From, To: r.To, StepSeconds: int(r.Step / time.Second), Samples: r.Samples,
			Online: r.Online, Peak: r.Peak, Capacity: r.Capacity, Synthetic: r.Synthetic, Points: make([]pointJSON, len(r.Points))}
		if r.Samples > 0 {
			rj.Uptime = ptr(round(r.Uptime, 4))
		}
		for i, p := range r.Points {
			pj := pointJSON{T: p.Start.Unix(), Max: p.PlayersMax, Synthetic: p.Synthetic}
			if p.Online > 0 {
				pj.Players = ptr(round(p.Players, 2))
			}
			if p.Samples > 0 {
				pj.Up = ptr(round(float64(p.Online)/float64(p.Samples), 4))
			}
			rj.Points[i] = pj
		}
		out.Ranges = append(out.Ranges, rj)
	}
	for _, m := range s.Maps {
		out.Maps = append(out.Maps, mapJSON{Map: m.Map, First: m.First, Last: m.Last, Samples: m.Samples})
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// Card serves GET /s/{protocol}/{target}/card.png, the preview image for
// og:image. Cards are cached per server for CardTTL (the relay's cache
// period), so one is rendered at most once per server per period however
// many unfurlers ask; the per-visitor limit applies before the cache.
func (h *Handler) Card(w http.ResponseWriter, r *http.Request) {
	c, target, opts, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	ttl := h.cardTTL()
	b, err := h.cards().get(c.Name()+"/"+target+queryString(opts), time.Now(), ttl, func() ([]byte, error) {
		// Other requests may be waiting for this render: the asker hanging
		// up must not cut the query short (it is bounded by its timeout).
		r := r.WithContext(context.WithoutCancel(r.Context()))
		rep := h.report(r, c, target, opts)
		h.track(r.Context(), rep)
		v := newView(rep, h.Base(r))
		return card.Render(h.cardOf(v, h.summary(r.Context(), HistoryKey(c.Name(), target, opts))))
	})
	if err != nil {
		h.Logger.Error("card", "protocol", c.Name(), "target", target, "err", err)
		http.Error(w, "card: rendering failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(ttl/time.Second)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

func (h *Handler) cardTTL() time.Duration {
	if h.CardTTL > 0 {
		return h.CardTTL
	}
	return 10 * time.Second
}

func (h *Handler) cardOf(v view, sum *history.Summary) card.Card {
	c := card.Card{Name: v.Name, State: stateLabel(v.State), Online: v.State == Online,
		Warn: v.State == RateLimited || v.State == Malformed, Map: v.Map, Mode: v.GameType,
		Protocol: v.Protocol.Title(), Address: v.Target}
	if v.Msg != nil && v.Msg.Info != nil && v.State == Online {
		s := SampleOf(v.Report)
		c.Players, c.Max, c.Counts = s.Players, s.MaxPlayers, v.Counts != ""
	}
	if sum != nil && !sum.Empty() && len(sum.Ranges) > 0 {
		day := sum.Ranges[0]
		if day.Samples > 0 {
			c.Chart = make([]float64, len(day.Points))
			for i, p := range day.Points {
				c.Chart[i] = math.NaN()
				if p.HasData() {
					c.Chart[i] = p.Players
				}
			}
			c.ChartMax = day.Capacity
			c.Synthetic = day.Synthetic > 0
		}
	}
	return c
}

// MaxCardBytes bounds the card cache (a card is about 50 KB).
const MaxCardBytes = 16 << 20

// cardCache holds rendered cards for their TTL. Concurrent requests for
// one card wait for a single render.
type cardCache struct {
	mu    sync.Mutex
	m     map[string]*cardEntry
	bytes int
	max   int
}

type cardEntry struct {
	done    chan struct{}
	png     []byte
	err     error
	expires time.Time
}

func (h *Handler) cards() *cardCache {
	h.cardOnce.Do(func() {
		if h.cardCache == nil {
			h.cardCache = &cardCache{m: make(map[string]*cardEntry), max: MaxCardBytes}
		}
	})
	return h.cardCache
}

// get returns key's card, rendering it with render when absent or expired.
func (c *cardCache) get(key string, now time.Time, ttl time.Duration, render func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	e := c.m[key]
	if e != nil {
		select {
		case <-e.done:
			if now.After(e.expires) || e.err != nil {
				c.bytes -= len(e.png)
				delete(c.m, key)
				e = nil
			}
		default: // being rendered: wait for it below
		}
	}
	if e != nil {
		c.mu.Unlock()
		<-e.done
		return e.png, e.err
	}
	e = &cardEntry{done: make(chan struct{})}
	c.m[key] = e
	c.mu.Unlock()

	e.png, e.err = render()
	e.expires = time.Now().Add(ttl)
	close(e.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += len(e.png)
	if c.bytes > c.max {
		c.evict(now)
	}
	return e.png, e.err
}

// evict drops expired cards, then the ones expiring soonest, until the
// cache fits its bound.
func (c *cardCache) evict(now time.Time) {
	for k, e := range c.m {
		select {
		case <-e.done:
			if now.After(e.expires) || e.err != nil {
				c.bytes -= len(e.png)
				delete(c.m, k)
			}
		default:
		}
	}
	for c.bytes > c.max {
		var oldest string
		var at time.Time
		for k, e := range c.m {
			select {
			case <-e.done:
				if oldest == "" || e.expires.Before(at) {
					oldest, at = k, e.expires
				}
			default:
			}
		}
		if oldest == "" {
			return
		}
		c.bytes -= len(c.m[oldest].png)
		delete(c.m, oldest)
	}
}
