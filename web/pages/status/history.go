package status

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/internal/ttlcache"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/card"
	"github.com/querylens/querylens/web/layout"
)

// track records a view of the server of rep, when it may be tracked.
func (h *Handler) track(ctx context.Context, rep server.Report) {
	if h.Tracker == nil {
		return
	}
	k := rep.Ref.Key()
	if server.Trackable(rep.State, h.Tracker.IsTracked(k)) {
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
	ref, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	if h.History == nil {
		h.Error(w, r, http.StatusNotFound, "No history here", "This site does not record server history (serve --data).")
		return
	}
	k := ref.Key()
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
	ref, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	if h.History == nil {
		http.Error(w, "no history on this site", http.StatusNotFound)
		return
	}
	path, q := ref.PathBase(), server.QueryString(ref.Options)
	v := view{HistoryURL: path + "/history.json" + q, FragmentURL: path + "/history.html" + q}
	v.History = h.summary(r.Context(), ref.Key())
	if v.History == nil {
		http.Error(w, "history unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	layout.Render(w, r, http.StatusOK, historyCharts(v))
}

// historyJSON is the document history.json serves (docs/api.md, "history.json").
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
	ref, ok := h.lookup(w, r, false)
	if !ok {
		return
	}
	ttl := h.cardTTL()
	b, err := h.cardCache().Get(ref.String(), ttl, func() ([]byte, error) {
		// Other requests may be waiting for this render: the asker hanging
		// up must not cut the query short (it is bounded by its timeout).
		r := r.WithContext(context.WithoutCancel(r.Context()))
		rep := h.report(r, ref)
		h.track(r.Context(), rep)
		v := newView(rep, h.Base(r))
		return card.Render(h.cardOf(v, h.summary(r.Context(), ref.Key())))
	})
	if err != nil {
		h.Logger.Error("card", "server", ref.String(), "err", err)
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
	c := card.Card{Name: v.Name, State: v.State.Label(), Online: v.State == server.Online,
		Warn: v.State == server.RateLimited || v.State == server.Malformed, Map: v.Map, Mode: v.GameType,
		Protocol: v.Protocol.Title(), Address: v.Target, Icon: faviconImage(v.Favicon)}
	if s, ok := server.Sample(v.Report); ok && v.Msg != nil && v.Msg.Info != nil && v.State == server.Online {
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

func (h *Handler) cardCache() *ttlcache.Cache[[]byte] {
	h.cardOnce.Do(func() {
		if h.cards == nil {
			h.cards = ttlcache.New(MaxCardBytes, func(b []byte) int { return len(b) }, nil)
		}
	})
	return h.cards
}
