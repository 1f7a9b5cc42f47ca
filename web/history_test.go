package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"image"
	"image/png"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/internal/fakeserver"
	ht "github.com/querylens/querylens/web/internal/htmltest"
	"golang.org/x/net/html"
)

type historySite struct {
	h       http.Handler
	store   history.Store
	tracker *history.Tracker
	ex      *fakeserver.Exchanger
}

func newHistorySite(t *testing.T) historySite {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	tr, err := history.NewTracker(context.Background(), history.TrackerConfig{Store: store, Max: 50})
	if err != nil {
		t.Fatal(err)
	}
	replies := map[string][]byte{
		// A hostile name: colour codes, controls, a bidi override, a
		// script the font lacks, and far too long.
		"10.0.0.9:7777": []byte("R\x1cgEvil\x07\u202e" + strings.Repeat("服务器 שרת ", 60) + "|\x1bMAP\u202e01|3|8|a,b"),
	}
	for k, v := range fakes.Replies {
		replies[k] = v
	}
	ex := &fakeserver.Exchanger{Replies: replies, Refuse: fakes.Refuse}
	h, err := web.New(web.Config{
		Exchanger: ex, PublicURL: "https://ql.example.org", StatusTimeout: 100 * time.Millisecond,
		History: store, Tracker: tr, CardTTL: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return historySite{h, store, tr, ex}
}

// fill records a day of history for the server at 10.0.0.1:7777.
func (s historySite) fill(t *testing.T, synthetic bool) history.Key {
	k := history.Key{Protocol: fakeserver.Protocol, Addr: "10.0.0.1:7777"}
	now := time.Now()
	var in []history.Sample
	for i := range 24 * 60 / 5 {
		sm := history.Sample{Key: k, At: now.Add(-time.Duration(i) * 5 * time.Minute), State: history.StateOnline,
			Players: i % 9, MaxPlayers: 8, Map: "MAP0" + string(rune('1'+i/100)), Synthetic: synthetic}
		if i%50 == 7 {
			sm = history.Sample{Key: k, At: sm.At, State: history.StateOffline, Synthetic: synthetic}
		}
		in = append(in, sm)
	}
	if err := s.store.Record(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCardFromOGImage follows what a chat app does: read og:image from
// the raw HTML, fetch it, decode the PNG.
func TestCardFromOGImage(t *testing.T) {
	for _, tc := range []struct {
		name, target string
		fill         bool
	}{
		{"online with history", "10.0.0.1:7777", true},
		{"online without history", "10.0.0.6:7777", false},
		{"offline", "10.0.0.2:7777", false},
		{"refused", "10.0.0.7:7777", false},
		{"hostile name", "10.0.0.9:7777", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newHistorySite(t)
			if tc.fill {
				s.fill(t, false)
			}
			rec := get(t, s.h, "/s/webtest/"+tc.target)
			d := ht.Parse(t, rec.Body.Bytes())
			img, _ := d.Meta("og:image")
			u, err := url.Parse(img)
			if err != nil || u.Host != "ql.example.org" || !strings.HasSuffix(u.Path, "/card.png") {
				t.Fatalf("og:image = %q", img)
			}
			for k, want := range map[string]string{"og:image:type": "image/png", "og:image:width": "1200", "og:image:height": "630", "twitter:card": "summary_large_image"} {
				if got, _ := d.Meta(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if alt, _ := d.Meta("og:image:alt"); alt == "" || strings.ContainsAny(alt, "\u202e\x07\x1b") || len(alt) > 600 {
				t.Errorf("og:image:alt %q", alt)
			}
			crec := get(t, s.h, u.RequestURI())
			if crec.Code != 200 || crec.Header().Get("Content-Type") != "image/png" {
				t.Fatalf("card: %d %q", crec.Code, crec.Header().Get("Content-Type"))
			}
			if cc := crec.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
				t.Errorf("card Cache-Control %q", cc)
			}
			m, err := png.Decode(bytes.NewReader(crec.Body.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if m.Bounds() != image.Rect(0, 0, 1200, 630) {
				t.Fatalf("card is %v", m.Bounds())
			}
			if n := distinct(m, m.Bounds()); n < 10 {
				t.Errorf("card has %d colours: blank", n)
			}
			// The chart panel has a drawn chart only with history.
			if n := distinct(m, image.Rect(200, 440, 1100, 560)); (n > 2) != tc.fill {
				t.Errorf("chart area: %d colours, history %v", n, tc.fill)
			}
		})
	}
}

func distinct(m image.Image, r image.Rectangle) int {
	seen := map[[4]uint32]bool{}
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			a, b, c, d := m.At(x, y).RGBA()
			seen[[4]uint32{a, b, c, d}] = true
		}
	}
	return len(seen)
}

// TestCardCached: many fetches of one card within its TTL cost one query
// and one render; the visitor limit still applies to each.
func TestCardCached(t *testing.T) {
	s := newHistorySite(t)
	var first []byte
	for i := range 20 {
		rec := get(t, s.h, "/s/webtest/10.0.0.1:7777/card.png")
		if rec.Code != 200 {
			t.Fatalf("fetch %d: %d", i, rec.Code)
		}
		if i == 0 {
			first = rec.Body.Bytes()
		} else if !bytes.Equal(first, rec.Body.Bytes()) {
			t.Fatalf("fetch %d differs from the first", i)
		}
	}
	if s.ex.Calls != 1 {
		t.Errorf("%d queries for 20 fetches of a cached card", s.ex.Calls)
	}

	limited, err := web.New(web.Config{Exchanger: &visitorLimited{Exchanger: s.ex, allow: 2}, History: s.store})
	if err != nil {
		t.Fatal(err)
	}
	codes := []int{}
	for range 4 {
		codes = append(codes, get(t, limited, "/s/webtest/10.0.0.1:7777/card.png").Code)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 || codes[3] != 429 {
		t.Errorf("card status codes under a limit of 2: %v", codes)
	}
	// history.json and history.html share the limit; spark.svg does not.
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/s/webtest/10.0.0.1:7777/history.json", 429},
		{"/s/webtest/10.0.0.1:7777/history.html", 429},
		{"/s/webtest/10.0.0.1:7777/spark.svg", 200},
	} {
		if got := get(t, limited, tc.path).Code; got != tc.code {
			t.Errorf("%s beyond the limit: %d, want %d", tc.path, got, tc.code)
		}
	}
}

type visitorLimited struct {
	*fakeserver.Exchanger
	allow int
}

func (v *visitorLimited) AllowVisitor(*http.Request) bool {
	v.allow--
	return v.allow >= 0
}

// TestTracking: the page, the badge and the card track a server that
// answers; a refused target, an unreachable one, and a new silent one are
// never tracked; history.json does not track.
func TestTracking(t *testing.T) {
	s := newHistorySite(t)
	for _, tc := range []struct {
		path    string
		key     string
		tracked bool
	}{
		{"/s/webtest/10.0.0.7:7777", "10.0.0.7:7777", false}, // policy refuses
		{"/s/webtest/10.0.0.7:7777/card.png", "10.0.0.7:7777", false},
		{"/s/webtest/10.0.0.7:7777/badge.svg", "10.0.0.7:7777", false},
		{"/s/webtest/10.0.0.2:7777", "10.0.0.2:7777", false}, // silent, never answered
		{"/s/webtest/10.0.0.1:7777/history.json", "10.0.0.1:7777", false},
		{"/s/webtest/10.0.0.1:7777", "10.0.0.1:7777", true},
		{"/s/webtest/10.0.0.3:7777/badge.svg", "10.0.0.3:7777", true}, // rate-limited: it answered
		{"/s/webtest/10.0.0.6:7777/card.png", "10.0.0.6:7777", true},
	} {
		get(t, s.h, tc.path)
		k := history.Key{Protocol: fakeserver.Protocol, Addr: tc.key}
		if got := s.tracker.IsTracked(k); got != tc.tracked {
			t.Errorf("after GET %s: tracked = %v, want %v", tc.path, got, tc.tracked)
		}
	}
	got, err := s.store.Tracked(context.Background())
	if err != nil || len(got) != 3 {
		t.Errorf("store tracks %+v, %v; want 3", got, err)
	}
}

// TestMadeUpNeverTracked: only a reply from the server makes a new target
// trackable. A target the relay limits (its own rate limits, or busy) has
// not answered, so no page, card or badge of it tracks it; and a probe of
// it gives the sampler nothing to record.
func TestMadeUpNeverTracked(t *testing.T) {
	s := newHistorySite(t)
	s.ex.Refuse = map[string]wire.Code{"10.0.0.8:7777": wire.CodeRateLimited, "10.0.0.10:7777": wire.CodeBusy}
	for _, target := range []string{"10.0.0.8:7777", "10.0.0.10:7777"} {
		for _, suffix := range []string{"", "/card.png", "/badge.svg"} {
			get(t, s.h, "/s/webtest/"+target+suffix)
		}
		if s.tracker.IsTracked(history.Key{Protocol: fakeserver.Protocol, Addr: target}) {
			t.Errorf("%s (refused by the relay's limits) is tracked", target)
		}
	}
	if n := s.tracker.Len(); n != 0 {
		t.Errorf("%d servers tracked, want 0", n)
	}
	probe := server.Sampler(s.ex, 100*time.Millisecond)
	if sm := probe(context.Background(), history.Key{Protocol: fakeserver.Protocol, Addr: "10.0.0.8:7777"}); sm.State.Valid() {
		t.Errorf("the sampler would record %v for a target the relay limited", sm.State)
	}
}

// TestEchoOptionsOneKey: options that only echo (Zandronum's time) do not
// make separate history keys: viewing one server with two time values
// tracks one server.
func TestEchoOptionsOneKey(t *testing.T) {
	s := newHistorySite(t)
	s.ex.Replies["10.0.0.11:10666"] = []byte("not zandronum") // it answered: malformed
	for _, q := range []string{"", "?time=1", "?time=2", "?time=3"} {
		get(t, s.h, "/s/zandronum/10.0.0.11:10666"+q)
	}
	got, err := s.store.Tracked(context.Background())
	if err != nil || len(got) != 1 || s.tracker.Len() != 1 {
		t.Errorf("tracked %d in memory, %+v in the store (%v); want one server", s.tracker.Len(), got, err)
	}
}

// TestRefusedNeverTrackedByRelayPolicy uses the real relay's policy: a
// status page for a private address (refused by default) is never tracked,
// and nothing is sent (the refusal is decided before sending).
func TestRefusedNeverTrackedByRelayPolicy(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tr, err := history.NewTracker(context.Background(), history.TrackerConfig{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	rs := relay.New(relay.Config{}, slog.New(slog.DiscardHandler))
	defer rs.Shutdown(context.Background())
	h, err := web.New(web.Config{Exchanger: rs, History: store, Tracker: tr, StatusTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"10.1.2.3:10666", "192.168.0.9:10666", "127.0.0.1:10666", "[::1]:10666", "169.254.1.1:10666"} {
		rec := get(t, h, "/s/zandronum/"+target, "X-Forwarded-For", "")
		d := ht.Parse(t, rec.Body.Bytes())
		if st := ht.Attr(d.TestID(t, "status"), "data-state"); st != "refused" {
			t.Errorf("%s: state %q, want refused", target, st)
		}
		get(t, h, "/s/zandronum/"+target+"/card.png")
		if tr.IsTracked(history.Key{Protocol: "zandronum", Addr: target}) {
			t.Errorf("%s is tracked", target)
		}
	}
	if n := tr.Len(); n != 0 {
		t.Errorf("%d servers tracked", n)
	}
}

func TestHistoryJSON(t *testing.T) {
	s := newHistorySite(t)
	s.fill(t, true)
	rec := get(t, s.h, "/s/webtest/10.0.0.1:7777/history.json")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=60" {
		t.Errorf("Cache-Control %q", cc)
	}
	var doc struct {
		Protocol  string `json:"protocol"`
		Address   string `json:"address"`
		Synthetic bool   `json:"synthetic"`
		Ranges    []struct {
			Name    string   `json:"name"`
			Step    int      `json:"step_seconds"`
			Samples int      `json:"samples"`
			Uptime  *float64 `json:"uptime"`
			Peak    int      `json:"peak"`
			Points  []struct {
				T       int64    `json:"t"`
				Players *float64 `json:"players"`
			} `json:"points"`
		} `json:"ranges"`
		Maps []struct {
			Map string `json:"map"`
		} `json:"maps"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Protocol != "webtest" || doc.Address != "10.0.0.1:7777" || !doc.Synthetic || len(doc.Ranges) != 3 {
		t.Fatalf("document %+v", doc)
	}
	day := doc.Ranges[0]
	if day.Name != "24h" || day.Step != 300 || len(day.Points) != 288 || day.Samples < 285 || day.Peak != 8 || day.Uptime == nil || *day.Uptime > 0.99 {
		t.Errorf("24h range: name %s step %d points %d samples %d peak %d uptime %v", day.Name, day.Step, len(day.Points), day.Samples, day.Peak, day.Uptime)
	}
	if len(doc.Maps) == 0 {
		t.Error("no maps")
	}
	// An unknown server has an empty history, not an error.
	rec = get(t, s.h, "/s/webtest/10.9.9.9:7777/history.json")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"uptime":null`) {
		t.Errorf("unknown server: %d %s", rec.Code, rec.Body.String()[:min(rec.Body.Len(), 200)])
	}
	// Without a store: 404.
	if rec := get(t, newHandler(t), "/s/webtest/10.0.0.1:7777/history.json"); rec.Code != 404 {
		t.Errorf("without history: %d", rec.Code)
	}
}

// TestStatusPageCharts: the raw HTML carries the three SVG charts, the
// figures, the maps and the synthetic mark.
func TestStatusPageCharts(t *testing.T) {
	s := newHistorySite(t)
	s.fill(t, true)
	rec := get(t, s.h, "/s/webtest/10.0.0.1:7777")
	d := ht.Parse(t, rec.Body.Bytes())
	d.TestID(t, "history")
	d.TestID(t, "history-synthetic")
	for _, r := range []string{"24h", "7d", "30d"} {
		fig := d.TestID(t, "chart-"+r)
		if len(ht.All(fig, func(n *html.Node) bool { return n.Data == "svg" })) != 1 {
			t.Errorf("chart %s has no svg", r)
		}
		area := ht.Attr(d.TestID(t, "chart-area-"+r), "d")
		if !strings.HasPrefix(area, "M") || strings.Count(area, "V") < 5 {
			t.Errorf("chart %s area path %q", r, area)
		}
		if got := ht.Text(d.TestID(t, "uptime-"+r)); !strings.Contains(got, "%") {
			t.Errorf("uptime %s = %q", r, got)
		}
		if got := ht.Text(d.TestID(t, "peak-"+r)); !strings.Contains(got, "8") {
			t.Errorf("peak %s = %q", r, got)
		}
	}
	if got := ht.Text(d.TestID(t, "history-maps")); !strings.Contains(got, "MAP01") {
		t.Errorf("maps = %q", got)
	}
	// A server with no samples says so.
	rec = get(t, s.h, "/s/webtest/10.0.0.6:7777")
	d = ht.Parse(t, rec.Body.Bytes())
	d.TestID(t, "history-empty")
}

func TestSparkAndTracked(t *testing.T) {
	s := newHistorySite(t)
	k := s.fill(t, false)
	s.tracker.View(context.Background(), k, history.SourceView)
	rec := get(t, s.h, "/s/webtest/10.0.0.1:7777/spark.svg")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "image/svg+xml") {
		t.Fatalf("spark: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	if n := strings.Count(body, `fill="#22c55e"`); n < 40 {
		t.Errorf("spark has %d online columns, want about 48:\n%s", n, body)
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), new(struct{})); err != nil {
		t.Errorf("spark is not well-formed XML: %v", err)
	}
	// An unknown server: an empty chart, still 200.
	if rec := get(t, s.h, "/s/webtest/10.9.9.9:7777/spark.svg"); rec.Code != 200 || strings.Contains(rec.Body.String(), "<rect") {
		t.Errorf("unknown server spark: %d %s", rec.Code, rec.Body.String())
	}
	rec = get(t, s.h, "/history/tracked.json")
	if rec.Code != 200 || rec.Body.String() != `{"servers":["/s/webtest/10.0.0.1:7777"]}` {
		t.Errorf("tracked.json: %d %s", rec.Code, rec.Body.String())
	}
	// The browse page loads spark.js only when the site has history.
	if b := get(t, s.h, "/").Body.String(); !strings.Contains(b, `<script type="module" src="/static/spark`) {
		t.Error("browse page without spark.js")
	}
	if b := get(t, newHandler(t), "/").Body.String(); strings.Contains(b, `<script type="module" src="/static/spark`) {
		t.Error("browse page loads spark.js without history")
	}
}

func TestHistoryFragment(t *testing.T) {
	s := newHistorySite(t)
	s.fill(t, false)
	rec := get(t, s.h, "/s/webtest/10.0.0.1:7777/history.html")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	if !strings.HasPrefix(strings.TrimSpace(body), "<section") || strings.Contains(body, "<head") || strings.Count(body, "<svg") != 3 {
		t.Errorf("fragment is not the history section alone:\n%.300s", body)
	}
	if s.ex.Calls != 0 || s.tracker.Len() != 0 {
		t.Errorf("the fragment queried (%d) or tracked (%d)", s.ex.Calls, s.tracker.Len())
	}
}

// TestTrackingFlood requests the status pages of 500 distinct servers that
// all answer, with --track-max 50: the tracked set never passes 50, in
// memory or in the store.
func TestTrackingFlood(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tr, err := history.NewTracker(context.Background(), history.TrackerConfig{Store: store, Max: 50})
	if err != nil {
		t.Fatal(err)
	}
	replies := map[string][]byte{}
	for i := range 500 {
		replies["10.2."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250)+":7777"] = []byte("Rflood|MAP01|1|8|a")
	}
	h, err := web.New(web.Config{Exchanger: &fakeserver.Exchanger{Replies: replies}, History: store, Tracker: tr})
	if err != nil {
		t.Fatal(err)
	}
	for target := range replies {
		if rec := get(t, h, "/s/webtest/"+target+"/badge.svg"); rec.Code != 200 {
			t.Fatalf("%s: %d", target, rec.Code)
		}
		if tr.Len() > 50 {
			t.Fatalf("tracked set grew to %d", tr.Len())
		}
	}
	got, err := store.Tracked(context.Background())
	if err != nil || len(got) != 50 || tr.Len() != 50 {
		t.Errorf("tracked %d in memory, %d in the store (%v); want 50", tr.Len(), len(got), err)
	}
}
