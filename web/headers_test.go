package web_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/internal/fakeserver"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// refuseAll is the fake relay with a visitor limit of zero.
type refuseAll struct{ *fakeserver.Exchanger }

func (refuseAll) AllowVisitor(*http.Request) bool { return false }

// directives splits a Content-Security-Policy into its directives.
func directives(csp string) map[string]string {
	m := map[string]string{}
	for d := range strings.SplitSeq(csp, ";") {
		d = strings.TrimSpace(d)
		name, value, _ := strings.Cut(d, " ")
		if name != "" {
			m[name] = value
		}
	}
	return m
}

var importMapRe = regexp.MustCompile(`<script[^>]*type="importmap"[^>]*>([^<]*)</script>`)

// bootRe finds the inlined boot.js: the one script element without
// attributes.
var bootRe = regexp.MustCompile(`(?s)<script>(.*?)</script>`)

// TestSecurityHeadersPerRoute checks each route's Content-Security-Policy
// and framing headers: HTML pages allow only this site's scripts plus the
// import map and, on the server browser, the inlined boot.js by their
// hashes, compile WebAssembly only where they decode, and may not be
// framed; the badge may be embedded anywhere (TestFraming covers the
// other embeddable routes).
func TestSecurityHeadersPerRoute(t *testing.T) {
	h := newHandler(t)
	badge := "/s/" + fakeserver.Protocol + "/10.0.0.1:7777/badge.svg"
	for _, tc := range []struct {
		path   string
		status int
		html   bool
		script bool // the page runs this site's scripts (and so has an import map)
		wasm   bool // the page compiles the decoder
		boot   bool // the page inlines boot.js (it starts a decoding worker)
	}{
		{"/", 200, true, true, true, true},
		{"/inspect", 200, true, true, true, false},
		// The status page stays live by fetching server-rendered HTML: it
		// runs scripts but never compiles WebAssembly.
		{"/s/" + fakeserver.Protocol + "/10.0.0.1:7777", 200, true, true, false, false},
		{"/no/such/page", 404, true, false, false, false},
		{"/s/nosuch/10.0.0.1:7777", 404, true, false, false, false},
		{badge, 200, false, false, false, false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := get(t, h, tc.path)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			hdr := rec.Header()
			if hdr.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", hdr.Get("X-Content-Type-Options"))
			}
			d := directives(hdr.Get("Content-Security-Policy"))
			if !tc.html {
				if d["frame-ancestors"] != "*" || hdr.Get("X-Frame-Options") != "" {
					t.Fatalf("the badge must be embeddable: %q, X-Frame-Options %q", hdr.Get("Content-Security-Policy"), hdr.Get("X-Frame-Options"))
				}
				if d["default-src"] != "'none'" {
					t.Fatalf("badge policy %q", hdr.Get("Content-Security-Policy"))
				}
				return
			}
			if d["frame-ancestors"] != "'none'" || hdr.Get("X-Frame-Options") != "DENY" {
				t.Errorf("framing: frame-ancestors %q, X-Frame-Options %q", d["frame-ancestors"], hdr.Get("X-Frame-Options"))
			}
			for name, want := range map[string]string{
				"default-src": "'none'", "connect-src": "'self'", "worker-src": "'self'",
				"style-src": "'self'", "base-uri": "'none'", "img-src": "'self' data:",
			} {
				if d[name] != want {
					t.Errorf("%s %q, want %q", name, d[name], want)
				}
			}
			script := d["script-src"]
			if strings.Contains(script, "unsafe-inline") || strings.Contains(script, "'unsafe-eval'") {
				t.Errorf("script-src %q allows inline script or eval", script)
			}
			if got := strings.Contains(script, "'wasm-unsafe-eval'"); got != tc.wasm {
				t.Errorf("script-src %q: wasm-unsafe-eval %v, want %v", script, got, tc.wasm)
			}
			// The inline scripts that run, the import map and boot.js,
			// are allowed by the hashes of exactly what was sent.
			m := importMapRe.FindSubmatch(rec.Body.Bytes())
			if tc.script != (m != nil) {
				t.Fatalf("import map present %v, want %v", m != nil, tc.script)
			}
			b := bootRe.FindSubmatch(rec.Body.Bytes())
			if tc.boot != (b != nil) {
				t.Fatalf("inline boot.js present %v, want %v", b != nil, tc.boot)
			}
			if m != nil {
				sum := sha256.Sum256(m[1])
				want := "'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
				if b != nil {
					sum := sha256.Sum256(b[1])
					want += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
				}
				if tc.wasm {
					want += " 'wasm-unsafe-eval'"
				}
				if script != want {
					t.Errorf("script-src %q, want %s", script, want)
				}
			} else if script != "'self'" {
				t.Errorf("script-src %q on a page without scripts", script)
			}
		})
	}
}

// TestFraming checks which routes other sites may frame: the badge, the
// shields.io endpoint and the embeddable card say frame-ancestors * and
// send no X-Frame-Options; every page, fragment and error page refuses
// framing both ways.
func TestFraming(t *testing.T) {
	h := newHandler(t)
	s := "/s/" + fakeserver.Protocol + "/10.0.0.1:7777"
	for _, tc := range []struct {
		path     string
		framable bool
	}{
		{s + "/badge.svg", true},
		{s + "/shields.json", true},
		{s + "/embed", true},
		{"/", false},
		{"/inspect", false},
		{s, false},
		{s + "/live", false},
		{"/s/nosuch/10.0.0.1:7777", false},
		{"/no/such/page", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			hdr := get(t, h, tc.path).Header()
			fa, xfo := directives(hdr.Get("Content-Security-Policy"))["frame-ancestors"], hdr.Get("X-Frame-Options")
			if tc.framable && (fa != "*" || xfo != "") {
				t.Errorf("must be embeddable: frame-ancestors %q, X-Frame-Options %q", fa, xfo)
			}
			if !tc.framable && (fa != "'none'" || xfo != "DENY") {
				t.Errorf("must refuse framing: frame-ancestors %q, X-Frame-Options %q", fa, xfo)
			}
		})
	}
}

// TestRateLimitedBadgeCache checks that a 429 badge is never cacheable
// for longer than its Retry-After.
func TestRateLimitedBadgeCache(t *testing.T) {
	h, err := web.New(web.Config{Exchanger: refuseAll{fakes}, StatusTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/s/" + fakeserver.Protocol + "/10.0.0.1:7777/badge.svg", "/s/" + fakeserver.Protocol + "/10.0.0.1:7777"} {
		rec := get(t, h, path)
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("%s: status %d", path, rec.Code)
		}
		retry, err := strconv.Atoi(rec.Header().Get("Retry-After"))
		if err != nil || retry <= 0 {
			t.Fatalf("%s: Retry-After %q", path, rec.Header().Get("Retry-After"))
		}
		cc := rec.Header().Get("Cache-Control")
		if strings.Contains(cc, "no-store") || strings.Contains(cc, "no-cache") {
			continue
		}
		ma := regexp.MustCompile(`max-age=(\d+)`).FindStringSubmatch(cc)
		if ma == nil {
			t.Fatalf("%s: Cache-Control %q has no max-age", path, cc)
		}
		if age, _ := strconv.Atoi(ma[1]); age > retry || strings.Contains(cc, "stale-") {
			t.Fatalf("%s: Cache-Control %q outlives Retry-After %d", path, cc, retry)
		}
	}
}

// TestAbsoluteURLsIgnoreHost checks that og:url and og:image come from
// the configuration, never from a request's Host header.
func TestAbsoluteURLsIgnoreHost(t *testing.T) {
	for _, tc := range []struct {
		public, addr, want string
	}{
		{"https://ql.example.org", "127.0.0.1:8080", "https://ql.example.org"},
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", "0.0.0.0:8080", "http://localhost:8080"},
		{"", "[::]:9000", "http://localhost:9000"},
		{"", "[2001:db8::5]:9000", "http://[2001:db8::5]:9000"},
		{"", "", "http://localhost"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			h, err := web.New(web.Config{Exchanger: fakes, PublicURL: tc.public, Addr: tc.addr, StatusTimeout: 150 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"/", "/s/" + fakeserver.Protocol + "/10.0.0.1:7777"} {
				req := httptest.NewRequest("GET", path, nil)
				req.Host = "evil.example"
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				d := ht.Parse(t, rec.Body.Bytes())
				og, _ := d.Meta("og:url")
				if !strings.HasPrefix(og, tc.want+"/") || strings.Contains(rec.Body.String(), "evil.example") {
					t.Fatalf("%s: og:url %q, want it under %s and no trace of the Host header", path, og, tc.want)
				}
			}
		})
	}
	if _, err := web.New(web.Config{Exchanger: fakes, Addr: "no-port"}); err == nil {
		t.Fatal("an Addr without a port was accepted")
	}
}

// routeRe finds the patterns web.New registers on its mux.
var routeRe = regexp.MustCompile(`mux\.Handle(?:Func)?\("([^"]+)"`)

// TestHTMLRoutesSecurityHeaders requests every route of the mux, in its
// answering and its failing forms, and checks that every HTML response
// (full pages and the fragments the status page swaps in alike) carries
// a Content-Security-Policy that refuses framing, X-Frame-Options and
// nosniff: a fragment opened directly is a page like any other. The
// routes come from web.go, so that a new route without a case here fails.
func TestHTMLRoutesSecurityHeaders(t *testing.T) {
	s := newHistorySite(t)
	s.fill(t, false)
	const srv = "/s/" + fakeserver.Protocol + "/10.0.0.1:7777"
	cases := map[string][]string{
		"GET /{$}":                                {"/", "/?master=nonsense"},
		"GET /s/{protocol}/{target}":              {srv, "/s/nosuch/10.0.0.1:7777", "/s/webtest/10.0.0.1", srv + "?bogus=1", "/s/webtest/10.0.0.2:7777"},
		"GET /s/{protocol}/{target}/badge.svg":    {srv + "/badge.svg", "/s/nosuch/10.0.0.1:7777/badge.svg"},
		"GET /s/{protocol}/{target}/card.png":     {srv + "/card.png", "/s/nosuch/10.0.0.1:7777/card.png"},
		"GET /s/{protocol}/{target}/history.json": {srv + "/history.json", "/s/nosuch/10.0.0.1:7777/history.json"},
		"GET /s/{protocol}/{target}/history.html": {srv + "/history.html", "/s/nosuch/10.0.0.1:7777/history.html",
			"/s/webtest/10.0.0.1/history.html"},
		"GET /s/{protocol}/{target}/spark.svg": {srv + "/spark.svg", "/s/nosuch/10.0.0.1:7777/spark.svg"},
		"GET /s/{protocol}/{target}/live": {srv + "/live", "/s/webtest/10.0.0.2:7777/live", "/s/nosuch/10.0.0.1:7777/live",
			"/s/webtest/10.0.0.1/live"},
		"GET /history/tracked.json":               {"/history/tracked.json"},
		"GET /inspect":                            {"/inspect", "/inspect?proto=nosuch"},
		"GET /static/{file...}":                   {"/static/app.css", "/static/nosuch.css"},
		"GET /healthz":                            {"/healthz"},
		"GET /probe":                              {"/probe?protocol=" + fakeserver.Protocol + "&target=10.0.0.1:7777", "/probe?protocol=nosuch&target=10.0.0.1:7777", "/probe"},
		"GET /s/{protocol}/{target}/shields.json": {srv + "/shields.json", "/s/nosuch/10.0.0.1:7777/shields.json"},
		// The widget is made to be framed by other sites: it is checked
		// below for frame-ancestors * and no X-Frame-Options, and for
		// the rest of the policy like every page.
		"GET /s/{protocol}/{target}/embed": {srv + "/embed", "/s/nosuch/10.0.0.1:7777/embed"},
		"GET /api/v1/masters/":             {"/api/v1/masters/a2s/127.0.0.1:27011"}, // not mounted here: the 404 page
		"/api/v1/": {"/api/v1/servers/webtest/10.0.0.1:7777", "/api/v1/servers/nosuch/10.0.0.1:7777", "/api/v1/tracked",
			"/api/v1/openapi.yaml", "/api/v1/nosuch"},
		"/": {"/no/such/page", "/s"},
	}
	src, err := os.ReadFile("web.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := routeRe.FindAllSubmatch(src, -1)
	if len(routes) < 10 {
		t.Fatalf("found only %d routes in web.go: has the mux moved?", len(routes))
	}
	html := 0
	for _, m := range routes {
		pattern := string(m[1])
		paths, ok := cases[pattern]
		if !ok {
			t.Errorf("route %q has no case in this test", pattern)
			continue
		}
		for _, path := range paths {
			rec := get(t, s.h, path)
			hdr := rec.Header()
			if hdr.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s (%d): X-Content-Type-Options %q", path, rec.Code, hdr.Get("X-Content-Type-Options"))
			}
			// A worker's script must be as isolated as the page that
			// starts it (the pages below).
			if pattern == "GET /static/{file...}" && rec.Code == http.StatusOK && hdr.Get("Cross-Origin-Embedder-Policy") != "require-corp" {
				t.Errorf("%s: Cross-Origin-Embedder-Policy %q", path, hdr.Get("Cross-Origin-Embedder-Policy"))
			}
			if !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
				continue
			}
			html++
			d := directives(hdr.Get("Content-Security-Policy"))
			if pattern == "GET /s/{protocol}/{target}/embed" && rec.Code == http.StatusOK {
				if d["default-src"] != "'none'" || d["frame-ancestors"] != "*" || d["base-uri"] != "'none'" || hdr.Get("X-Frame-Options") != "" {
					t.Errorf("%s: the widget's Content-Security-Policy %q, X-Frame-Options %q", path, hdr.Get("Content-Security-Policy"), hdr.Get("X-Frame-Options"))
				}
				continue
			}
			if d["default-src"] != "'none'" || d["frame-ancestors"] != "'none'" || d["base-uri"] != "'none'" {
				t.Errorf("%s (%d, %s): Content-Security-Policy %q", path, rec.Code, pattern, hdr.Get("Content-Security-Policy"))
			}
			if hdr.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s (%d, %s): X-Frame-Options %q", path, rec.Code, pattern, hdr.Get("X-Frame-Options"))
			}
			// Every page (a document with scripts; not the fragments a
			// page fetches) is cross-origin isolated, so that it may
			// share memory with its workers.
			if d["script-src"] != "" && (hdr.Get("Cross-Origin-Opener-Policy") != "same-origin" || hdr.Get("Cross-Origin-Embedder-Policy") != "require-corp") {
				t.Errorf("%s (%d, %s): Cross-Origin-Opener-Policy %q, Cross-Origin-Embedder-Policy %q", path, rec.Code, pattern,
					hdr.Get("Cross-Origin-Opener-Policy"), hdr.Get("Cross-Origin-Embedder-Policy"))
			}
		}
	}
	if html < 10 {
		t.Errorf("only %d HTML responses checked", html)
	}
}

// TestRateLimitedBadgePrivate checks that a 429 badge is for the visitor
// it refused only: a shared cache (an image proxy, a CDN) that stored it
// would show one visitor's refusal to everyone.
func TestRateLimitedBadgePrivate(t *testing.T) {
	h, err := web.New(web.Config{Exchanger: refuseAll{fakes}, StatusTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := get(t, h, "/s/"+fakeserver.Protocol+"/10.0.0.1:7777/badge.svg")
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d", rec.Code)
	}
	cc := rec.Header().Get("Cache-Control")
	if strings.Contains(cc, "public") || !(strings.Contains(cc, "private") || strings.Contains(cc, "no-store")) {
		t.Fatalf("Cache-Control %q: a refusal must not be stored by shared caches", cc)
	}
}
