package web_test

import (
	"compress/gzip"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/internal/fakeserver"
	ht "github.com/querylens/querylens/web/internal/htmltest"
	"golang.org/x/net/html"
)

// The fake servers the handler tests query, by target.
var fakes = &fakeserver.Exchanger{
	Replies: map[string][]byte{
		"10.0.0.1:7777": []byte("R\x1cdCTF \x1cgNight|MAP01|3|8|alice,\x1cabob,bot:crash"),
		"10.0.0.2:7777": nil, // silent
		"10.0.0.3:7777": []byte("D"),
		"10.0.0.4:7777": []byte("B"),
		"10.0.0.5:7777": []byte("Rhalf a reply"),
		"10.0.0.6:7777": []byte("R<b>&\"quoted\"</b>|E1M1|0|4|"),
	},
	Refuse: map[string]wire.Code{"10.0.0.7:7777": wire.CodeDenied, "10.0.0.8:7777": wire.CodeRateLimited},
}

func newHandler(t *testing.T) http.Handler {
	t.Helper()
	h, err := web.New(web.Config{
		Exchanger:     fakes,
		Masters:       []server.MasterSpec{{Protocol: "quakeworld", Addr: "127.0.0.1:27000"}, {Protocol: "a2s", Addr: "127.0.0.1:27011", Filter: `\appid\440`, Kept: true}},
		Servers:       []server.Ref{{Protocol: fakeserver.Protocol, Addr: "10.0.0.1:7777"}},
		PublicURL:     "https://ql.example.org",
		StatusTimeout: 150 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestStatusPageOnline(t *testing.T) {
	h := newHandler(t)
	rec := get(t, h, "/s/webtest/10.0.0.1:7777")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
	d := ht.Parse(t, rec.Body.Bytes())
	if got := ht.Attr(d.TestID(t, "status"), "data-state"); got != "online" {
		t.Errorf("data-state = %q", got)
	}
	if got := ht.Text(d.TestID(t, "server-name")); got != "CTF Night" {
		t.Errorf("name = %q (colour codes must be stripped)", got)
	}
	if n := len(d.TestIDs("player-row")); n != 3 {
		t.Errorf("%d player rows, want 3", n)
	}
	if got := ht.Text(d.TestID(t, "fact-players")); !strings.Contains(got, "3 / 8") || !strings.Contains(got, "1 bots") {
		t.Errorf("players fact = %q", got)
	}
	if got := ht.Text(d.TestID(t, "status-country")); got != "NLD" {
		t.Errorf("country = %q", got)
	}
	if got := ht.Text(d.TestID(t, "mods")); !strings.Contains(got, "ctf-map.wad") {
		t.Errorf("mods = %q", got)
	}
	d.TestID(t, "rules")
	d.TestID(t, "fields")
	if got := ht.Attr(d.TestID(t, "inspect-link"), "href"); !strings.Contains(got, "#p=webtest") || !strings.Contains(got, "&h=52") {
		t.Errorf("inspect link %q does not carry the packets", got)
	}
	if len(d.TestIDs("join-link")) != 0 {
		t.Errorf("join link on a protocol without a URL scheme")
	}
	links := map[string]string{
		"embed-html": `<iframe src="https://ql.example.org/s/webtest/10.0.0.1:7777/embed" width="320" height="110" style="border:0" loading="lazy" title="CTF Night"></iframe>`,
		"api-link":   "https://ql.example.org/api/v1/servers/webtest/10.0.0.1:7777",
		"probe-link": "https://ql.example.org/probe?protocol=webtest&target=10.0.0.1%3A7777",
	}
	for id, want := range links {
		attr := "href"
		if id == "embed-html" {
			attr = "value"
		}
		if got := ht.Attr(d.TestID(t, id), attr); got != want {
			t.Errorf("%s %s = %q, want %q", id, attr, got, want)
		}
	}
	want := map[string]string{
		"og:title":        "CTF Night · Online · querylens",
		"og:type":         "website",
		"og:url":          "https://ql.example.org/s/webtest/10.0.0.1:7777",
		"og:image":        "https://ql.example.org/s/webtest/10.0.0.1:7777/card.png",
		"og:image:type":   "image/png",
		"og:image:width":  "1200",
		"og:image:height": "630",
		"og:image:alt":    "Web Test server CTF Night: Online, 3 / 8 players, map MAP01",
		"twitter:card":    "summary_large_image",
		"twitter:title":   "CTF Night · Online · querylens",
		"twitter:image":   "https://ql.example.org/s/webtest/10.0.0.1:7777/card.png",
		"og:description":  "MAP01 · 3 / 8 players (1 bots) · Capture the Flag · Web Test server at 10.0.0.1:7777",
	}
	for k, v := range want {
		if got, ok := d.Meta(k); !ok || got != v {
			t.Errorf("meta %s = %q, want %q", k, got, v)
		}
	}
	if got, _ := d.Meta("description"); !strings.Contains(got, "MAP01") {
		t.Errorf("description = %q", got)
	}
	if title := ht.Text(d.Tags("title")[0]); title != "CTF Night · Online · querylens" {
		t.Errorf("title = %q", title)
	}
}

func TestStatusPageStates(t *testing.T) {
	h := newHandler(t)
	for _, tc := range []struct {
		target, state, detail string
	}{
		{"10.0.0.2:7777", "offline", "No answer"},
		{"10.0.0.3:7777", "rate-limited", "asked too recently"},
		{"10.0.0.4:7777", "banned", "banned"},
		{"10.0.0.5:7777", "malformed", "offset"},
		{"10.0.0.7:7777", "refused", "does not query"},
		{"10.0.0.8:7777", "relay-limited", "limiting"}, // the relay's doing, not the server's
	} {
		t.Run(tc.state+"/"+tc.target, func(t *testing.T) {
			start := time.Now()
			rec := get(t, h, "/s/webtest/"+tc.target)
			if rec.Code != 200 {
				t.Fatalf("status %d, want 200 (the page describes the server)", rec.Code)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %v: the status query must be bounded", time.Since(start))
			}
			d := ht.Parse(t, rec.Body.Bytes())
			if got := ht.Attr(d.TestID(t, "status"), "data-state"); got != tc.state {
				t.Errorf("data-state = %q, want %q", got, tc.state)
			}
			if got := ht.Text(d.TestID(t, "status-detail")); !strings.Contains(got, tc.detail) {
				t.Errorf("detail = %q, want it to mention %q", got, tc.detail)
			}
			if got, _ := d.Meta("og:description"); got == "" {
				t.Errorf("no og:description for a %s server", tc.state)
			}
			if got, _ := d.Meta("og:image"); !strings.HasSuffix(got, "/card.png") {
				t.Errorf("og:image = %q", got)
			}
		})
	}
}

// TestStatusLive: GET …/live is the page's article alone, rendered by the
// same template from a fresh report, which the page swaps in; bad requests
// get the page's answers.
func TestStatusLive(t *testing.T) {
	h := newHandler(t)
	rec := get(t, h, "/s/webtest/10.0.0.1:7777/live")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	body := rec.Body.String()
	if strings.Contains(body, "<html") || strings.Contains(body, "<script") || !strings.HasPrefix(strings.TrimSpace(body), "<article") {
		t.Errorf("not a bare article: %.200s", body)
	}
	page := ht.Parse(t, get(t, h, "/s/webtest/10.0.0.1:7777").Body.Bytes())
	d := ht.Parse(t, rec.Body.Bytes())
	a := d.TestID(t, "status")
	if got := ht.Attr(a, "data-state"); got != "online" {
		t.Errorf("data-state = %q", got)
	}
	if got, want := ht.Attr(a, "data-title"), ht.Text(page.Tags("title")[0]); got != want {
		t.Errorf("data-title = %q, the page's title is %q", got, want)
	}
	if n := len(d.TestIDs("player-row")); n != 3 {
		t.Errorf("%d player rows, want 3", n)
	}
	if got, want := ht.Text(a), ht.Text(page.TestID(t, "status")); got != want {
		t.Errorf("the live article differs from the page's:\n%s\n%s", got, want)
	}
	off := ht.Parse(t, get(t, h, "/s/webtest/10.0.0.2:7777/live").Body.Bytes())
	if got := ht.Attr(off.TestID(t, "status"), "data-state"); got != "offline" {
		t.Errorf("silent server: data-state = %q", got)
	}
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/s/nosuch/10.0.0.1:7777/live", 404},
		{"/s/webtest/10.0.0.1/live", 400},
		{"/s/webtest/10.0.0.1:7777/live?bogus=1", 400},
	} {
		if got := get(t, h, tc.path).Code; got != tc.code {
			t.Errorf("GET %s: %d, want %d", tc.path, got, tc.code)
		}
	}
}

func TestStatusPageBadRequests(t *testing.T) {
	h := newHandler(t)
	before := fakes.CallCount() // the exchanger is the package's: count this test's calls only
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/s/nosuch/10.0.0.1:7777", 404},
		{"/s/webtest/10.0.0.1", 400},
		{"/s/webtest/10.0.0.1:0", 400},
		{"/s/webtest/10.0.0.1:70000", 400},
		{"/s/webtest/bad_host!:7777", 400},
		{"/s/webtest/:7777", 400},
		{"/s/webtest/10.0.0.1:7777?bogus=1", 400},
		{"/s/nosuch/10.0.0.1:7777/badge.svg", 404},
		{"/s/webtest/nonsense/badge.svg", 400},
		{"/nowhere", 404},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := get(t, h, tc.path)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if strings.HasSuffix(tc.path, ".svg") {
				if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
					t.Errorf("Content-Type %q", ct)
				}
				return
			}
			d := ht.Parse(t, rec.Body.Bytes())
			if got := ht.Attr(d.TestID(t, "error-page"), "data-status"); got != itoa(tc.status) {
				t.Errorf("error page says %q", got)
			}
		})
	}
	if n := fakes.CallCount() - before; n != 0 {
		t.Errorf("%d bad requests reached the exchanger", n)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// svgDoc is enough of the badge to check it.
type svgDoc struct {
	XMLName xml.Name `xml:"svg"`
	Width   string   `xml:"width,attr"`
	Label   string   `xml:"aria-label,attr"`
	Title   string   `xml:"title"`
	Rects   []struct {
		Fill string `xml:"fill,attr"`
	} `xml:"g>rect"`
	Texts []string `xml:"g>text"`
}

func badge(t *testing.T, h http.Handler, path string) svgDoc {
	t.Helper()
	rec := get(t, h, path)
	if rec.Code != 200 {
		t.Fatalf("%s: status %d", path, rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=60") {
		t.Errorf("Cache-Control %q", cc)
	}
	var doc svgDoc
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("badge is not well-formed XML: %v\n%s", err, rec.Body)
	}
	return doc
}

func TestBadge(t *testing.T) {
	h := newHandler(t)
	on := badge(t, h, "/s/webtest/10.0.0.1:7777/badge.svg")
	if on.Title != "webtest/CTF Night: 3/8 MAP01" {
		t.Errorf("title = %q", on.Title)
	}
	if len(on.Rects) < 2 || on.Rects[1].Fill != "#4c1" {
		t.Errorf("online badge is not green: %+v", on.Rects)
	}
	off := badge(t, h, "/s/webtest/10.0.0.2:7777/badge.svg")
	if !strings.HasSuffix(off.Title, ": offline") || off.Rects[1].Fill != "#9f9f9f" {
		t.Errorf("offline badge = %q %+v", off.Title, off.Rects)
	}
	// Markup in a server name is text, escaped, not elements.
	esc := badge(t, h, "/s/webtest/10.0.0.6:7777/badge.svg")
	if esc.Title != `webtest/<b>&"quoted"</b>: 0/4 E1M1` {
		t.Errorf("title = %q", esc.Title)
	}
}

func TestBrowsePage(t *testing.T) {
	h := newHandler(t)
	rec := get(t, h, "/")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	d := ht.Parse(t, rec.Body.Bytes())
	d.TestID(t, "server-table")
	d.TestID(t, "progress")
	var cfg struct {
		Relay   string
		Masters []server.MasterSpec
		Servers []struct{ Protocol, Addr, Status string }
		Games   []struct {
			ID, Name, Master, Filter string
			Port                     int
		}
	}
	scripts := ht.All(d.Root, func(n *html.Node) bool { return ht.Attr(n, "id") == "ql-config" })
	if len(scripts) != 1 {
		t.Fatalf("no #ql-config")
	}
	if err := json.Unmarshal([]byte(ht.Text(scripts[0])), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Relay != "/relay" || len(cfg.Masters) != 2 || len(cfg.Servers) != 1 || cfg.Servers[0].Addr != "10.0.0.1:7777" ||
		cfg.Masters[1] != (server.MasterSpec{Protocol: "a2s", Addr: "127.0.0.1:27011", Filter: `\appid\440`, Kept: true}) ||
		len(cfg.Games) < 100 || !slices.ContainsFunc(cfg.Games, func(g struct {
		ID, Name, Master, Filter string
		Port                     int
	}) bool {
		return g.ID == "teamfortress2" && g.Filter == `\appid\440` && g.Name == "Team Fortress 2" && g.Master == "a2s" && g.Port == 27015
	}) {
		t.Errorf("config = %+v", cfg)
	}
	maps := ht.All(d.Root, func(n *html.Node) bool { return n.Data == "script" && ht.Attr(n, "type") == "importmap" })
	if len(maps) != 1 || !strings.Contains(ht.Text(maps[0]), `"/static/relay.js"`) {
		t.Errorf("import map missing or without relay.js")
	}
	mods := ht.All(d.Root, func(n *html.Node) bool { return n.Data == "script" && ht.Attr(n, "type") == "module" })
	if len(mods) != 1 || !strings.HasPrefix(ht.Attr(mods[0], "src"), "/static/browse.") {
		var srcs []string
		for _, m := range mods {
			srcs = append(srcs, ht.Attr(m, "src"))
		}
		t.Errorf("module scripts = %q, want browse.js", srcs)
	}
	// boot.js, inlined after the module's preload and the import map and
	// before the stylesheet, starts the decoding worker with what <html
	// data-boot> says: the worker's URL, the relay, and the masters and
	// servers to ask at once.
	head := d.Tags("head")[0]
	var first []string
	for c := head.FirstChild; c != nil && len(first) < 4; c = c.NextSibling {
		if c.Type == html.ElementNode {
			first = append(first, c.Data+"["+ht.Attr(c, "type")+"]")
		}
	}
	if got := strings.Join(first, " "); got != "meta[] link[application/wasm] script[importmap] script[]" {
		t.Errorf("head starts with %s, want the charset, the module's preload, the import map and boot.js", got)
	}
	if boot := ht.All(head, func(n *html.Node) bool { return n.Data == "script" && len(n.Attr) == 0 }); len(boot) != 1 ||
		!strings.Contains(ht.Text(boot[0]), "new Worker(") {
		t.Errorf("no inline boot.js in the head")
	}
	var boot struct {
		Worker, Relay string
		Asks          []struct {
			Key, Protocol, Target string
			Query                 []string
		}
		Lists []struct {
			Protocol string
			Targets  []string
		}
	}
	if err := json.Unmarshal([]byte(ht.Attr(d.Tags("html")[0], "data-boot")), &boot); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(boot.Worker, "/static/worker.") || boot.Relay != "/relay" || len(boot.Asks) != 1 ||
		boot.Asks[0].Key != "master:quakeworld/127.0.0.1:27000" || len(boot.Lists) != 1 || boot.Lists[0].Protocol != fakeserver.Protocol ||
		!slices.Equal(boot.Lists[0].Targets, []string{"10.0.0.1:7777"}) {
		t.Errorf("data-boot = %+v", boot)
	}
	// The master asked through the relay comes with its first request,
	// built by its codec as the page's decoder builds it (the kept one
	// with none), and the configured server with its status page.
	var queries struct {
		Masters []struct{ Query []string }
	}
	if err := json.Unmarshal([]byte(ht.Text(scripts[0])), &queries); err != nil {
		t.Fatal(err)
	}
	p, _ := server.LookupProtocol("quakeworld")
	want := firstRequest(t, "quakeworld", p.Master.Options)
	if len(want) == 0 || len(queries.Masters) != 2 || !slices.Equal(queries.Masters[0].Query, want) || queries.Masters[1].Query != nil ||
		len(boot.Asks) != 1 || !slices.Equal(boot.Asks[0].Query, want) {
		t.Errorf("the masters' first requests: config %+v, data-boot %+v, want %q for the first", queries.Masters, boot.Asks, want)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Status != "/s/"+fakeserver.Protocol+"/10.0.0.1:7777" {
		t.Errorf("the configured servers %+v, want their status pages", cfg.Servers)
	}
	for _, th := range []string{"fav", "protocol", "name", "players", "map", "mode", "ping", "addr", "country", "flags"} {
		if len(ht.All(d.Root, func(n *html.Node) bool { return n.Data == "th" && ht.Attr(n, "data-sort") == th })) != 1 {
			t.Errorf("no sortable column %q", th)
		}
	}
}

func TestInspectPage(t *testing.T) {
	h := newHandler(t)
	rec := get(t, h, "/inspect?protocol=webtest&target=10.0.0.1:7777")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	d := ht.Parse(t, rec.Body.Bytes())
	if got := ht.Attr(d.TestID(t, "build-target"), "value"); got != "10.0.0.1:7777" {
		t.Errorf("target = %q", got)
	}
	sel := ht.All(d.TestID(t, "build-protocol"), func(n *html.Node) bool { return n.Data == "option" && ht.HasAttr(n, "selected") })
	if len(sel) != 1 || ht.Attr(sel[0], "value") != "webtest" {
		t.Errorf("selected protocol: %v", sel)
	}
	for _, id := range []string{"hex", "tree", "packets", "layers", "paste-hex", "export-pcapng", "permalink"} {
		d.TestID(t, id)
	}
}

// TestInspectPageOptions: /inspect reads its query as the status page
// does: opt.NAME presets an option, and a parameter given twice, or a
// query that does not parse, is a 400, never the first of two.
func TestInspectPageOptions(t *testing.T) {
	h := newHandler(t)
	rec := get(t, h, "/inspect?protocol=webtest&target=10.0.0.1:7777&opt.colour=red+green")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), `"options":{"colour":"red green"}`) {
		t.Errorf("the page's config has no options: %s", rec.Body)
	}
	for _, path := range []string{
		"/inspect?protocol=webtest&target=10.0.0.1:7777&opt.colour=red&opt.colour=blue",
		"/inspect?protocol=webtest&protocol=webtest",
		"/inspect?opt.colour=%zz",
	} {
		rec := get(t, h, path)
		if rec.Code != 400 {
			t.Errorf("GET %s: %d, want 400", path, rec.Code)
			continue
		}
		d := ht.Parse(t, rec.Body.Bytes())
		if got := ht.Attr(d.TestID(t, "error-page"), "data-status"); got != "400" {
			t.Errorf("GET %s: error page says %q", path, got)
		}
	}
	if body := get(t, h, "/inspect?opt.colour=red&opt.colour=blue").Body.String(); !strings.Contains(body, "colour") || !strings.Contains(body, "more than once") {
		t.Errorf("the error page does not name the repeated option: %s", body)
	}
}

func TestHealthz(t *testing.T) {
	rec := get(t, newHandler(t), "/healthz")
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != "ok" {
		t.Errorf("healthz: %d %q", rec.Code, rec.Body)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]web.Config{
		"no exchanger":     {},
		"public url path":  {Exchanger: fakes, PublicURL: "https://x.example/sub"},
		"public url":       {Exchanger: fakes, PublicURL: "not a url"},
		"unknown protocol": {Exchanger: fakes, Servers: []server.Ref{{Protocol: "nosuch", Addr: "1.2.3.4:5"}}},
		"bad server addr":  {Exchanger: fakes, Servers: []server.Ref{{Protocol: fakeserver.Protocol, Addr: "1.2.3.4"}}},
		"bad master":       {Exchanger: fakes, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: "master"}}},
		"master protocol":  {Exchanger: fakes, Masters: []server.MasterSpec{{Addr: "127.0.0.1:15300"}}},
		"relay path":       {Exchanger: fakes, RelayPath: "relay"},
	} {
		if _, err := web.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func TestStaticAssets(t *testing.T) {
	h := newHandler(t)
	page := ht.Parse(t, get(t, h, "/").Body.Bytes())
	var css string
	for _, l := range page.Tags("link") {
		if ht.Attr(l, "rel") == "stylesheet" {
			css = ht.Attr(l, "href")
		}
	}
	if !strings.HasPrefix(css, "/static/app.") || css == "/static/app.css" {
		t.Fatalf("stylesheet URL %q is not content-hashed", css)
	}
	// Compression runs in the background; until it is done the file is
	// served as is.
	rec := get(t, h, css, "Accept-Encoding", "gzip, deflate")
	for deadline := time.Now().Add(10 * time.Second); rec.Header().Get("Content-Encoding") == "" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		rec = get(t, h, css, "Accept-Encoding", "gzip, deflate")
	}
	if rec.Code != 200 {
		t.Fatalf("%s: %d", css, rec.Code)
	}
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("hashed asset Cache-Control %q", cc)
	}
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("Vary") != "Accept-Encoding" {
		t.Errorf("not gzipped with Vary: %v", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	if !strings.Contains(string(body), "prefers-color-scheme") {
		t.Errorf("gzip body is not the stylesheet")
	}
	plain := get(t, h, "/static/app.css")
	if cc := plain.Header().Get("Cache-Control"); cc != "no-cache" || plain.Header().Get("ETag") == "" {
		t.Errorf("plain asset: Cache-Control %q ETag %q", cc, plain.Header().Get("ETag"))
	}
	if plain.Header().Get("Content-Encoding") != "" {
		t.Errorf("gzip without Accept-Encoding")
	}
	if got := get(t, h, "/static/app.css", "If-None-Match", plain.Header().Get("ETag")); got.Code != 304 {
		t.Errorf("If-None-Match: %d, want 304", got.Code)
	}
	if got := get(t, h, "/static/nosuch.js"); got.Code != 404 {
		t.Errorf("missing asset: %d", got.Code)
	}
	if ct := get(t, h, "/static/ql.js").Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("ql.js Content-Type %q", ct)
	}
}

// limitedExchanger is the fake relay with a visitor limit of n requests.
type limitedExchanger struct {
	*fakeserver.Exchanger
	left map[string]int
}

func (l *limitedExchanger) AllowVisitor(r *http.Request) bool {
	host, _, _ := strings.Cut(r.RemoteAddr, ":")
	if _, ok := l.left[host]; !ok {
		l.left[host] = 2
	}
	l.left[host]--
	return l.left[host] >= 0
}

func TestStatusRateLimitPerVisitor(t *testing.T) {
	h, err := web.New(web.Config{Exchanger: &limitedExchanger{fakes, map[string]int{}}, StatusTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	path := "/s/" + fakeserver.Protocol + "/10.0.0.1:7777"
	for i, want := range []int{200, 200, 429} {
		if rec := get(t, h, path); rec.Code != want {
			t.Fatalf("request %d: %d, want %d", i, rec.Code, want)
		}
	}
	rec := get(t, h, path+"/badge.svg")
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "<svg") {
		t.Fatalf("badge over the limit: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	// Other visitors are not affected.
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = "198.51.100.4:1234"
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("another visitor: %d", rec.Code)
	}
}

// TestMasterListsMounted checks that Config.MasterLists answers
// /api/v1/masters/ and nothing else.
func TestMasterListsMounted(t *testing.T) {
	lists := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("lists " + r.URL.Path)) })
	h, err := web.New(web.Config{Exchanger: fakes, MasterLists: lists})
	if err != nil {
		t.Fatal(err)
	}
	rec := get(t, h, "/api/v1/masters/a2s/127.0.0.1:27011")
	if rec.Code != 200 || rec.Body.String() != "lists /api/v1/masters/a2s/127.0.0.1:27011" {
		t.Errorf("GET /api/v1/masters/…: %d %q", rec.Code, rec.Body.String())
	}
	if rec := get(t, h, "/api/v1/other"); rec.Code != 404 {
		t.Errorf("GET /api/v1/other: %d, want 404", rec.Code)
	}
}
