package layout_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"

	ht "github.com/querylens/querylens/web/internal/htmltest"
	"github.com/querylens/querylens/web/layout"
)

type assets struct{}

func (assets) URL(name string) string    { return "/static/" + name + "?h" }
func (assets) Source(name string) string { return "/* " + name + " */" }
func (assets) ImportMap() map[string]string {
	return map[string]string{"/static/ql.js": "/static/ql.abc.js"}
}

func render(t *testing.T, p layout.Page) ht.Doc {
	t.Helper()
	var buf bytes.Buffer
	if err := layout.ErrorPage(p, 404, "Not found", "nothing <here>").Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return ht.Parse(t, buf.Bytes())
}

func TestBaseHead(t *testing.T) {
	d := render(t, layout.Page{
		Head: layout.Head{Title: "T <1>", Description: "D & d", URL: "https://x.example/a", Image: "https://x.example/i.svg",
			ImageType: "image/svg+xml", ImageW: 120, ImageH: 20},
		Nav: "inspect", Script: "inspect.js", WASM: true, Config: map[string]string{"relay": "/relay"}, Assets: assets{},
	})
	for k, want := range map[string]string{
		"og:title": "T <1>", "og:description": "D & d", "og:url": "https://x.example/a", "og:image": "https://x.example/i.svg",
		"og:image:width": "120", "twitter:card": "summary", "twitter:image": "https://x.example/i.svg", "og:type": "website",
	} {
		if got, ok := d.Meta(k); !ok || got != want {
			t.Errorf("meta %s = %q, want %q", k, got, want)
		}
	}
	cur := ht.All(d.Root, func(n *html.Node) bool { return n.Data == "a" && ht.Attr(n, "aria-current") == "page" })
	if len(cur) != 1 || ht.Text(cur[0]) != "Inspector" {
		t.Errorf("current nav entry: %v", cur)
	}
	if got := ht.Attr(d.Tags("html")[0], "data-wasm"); got != "/static/querylens.wasm?h" {
		t.Errorf("data-wasm = %q", got)
	}
	var kinds []string
	for _, s := range d.Tags("script") {
		kinds = append(kinds, ht.Attr(s, "type")+"#"+ht.Attr(s, "id"))
	}
	if got := strings.Join(kinds, ","); got != "importmap#,module#,application/json#ql-config" {
		t.Errorf("scripts: %s", got)
	}
	if got := ht.Text(d.TestID(t, "error-page")); !strings.Contains(got, "nothing <here>") {
		t.Errorf("detail not shown as text: %q", got)
	}
}

func TestBaseWithoutScriptOrImage(t *testing.T) {
	d := render(t, layout.Page{Head: layout.Head{Title: "T"}, Assets: assets{}})
	if len(d.Tags("script")) != 0 {
		t.Errorf("a page without a script has script tags")
	}
	for _, k := range []string{"og:image", "og:url", "og:description"} {
		if _, ok := d.Meta(k); ok {
			t.Errorf("meta %s present without a value", k)
		}
	}
	if got, _ := d.Meta("twitter:card"); got != "summary" {
		t.Errorf("twitter:card = %q", got)
	}
}

func TestRender(t *testing.T) {
	rec := httptest.NewRecorder()
	layout.Render(rec, httptest.NewRequest("GET", "/", nil), 418, layout.ErrorPage(layout.Page{Assets: assets{}}, 418, "x", "y"))
	if rec.Code != 418 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || rec.Header().Get("Content-Length") == "" {
		t.Errorf("Render: %d %v", rec.Code, rec.Header())
	}
}

// families are Assets with a module per family: p1 and p2 in fam-a, p3 in fam-b.
type families struct{ assets }

func (families) ModuleFor(protocols ...string) string {
	m := map[string]string{"p1": "fam-a.wasm", "p2": "fam-a.wasm", "p3": "fam-b.wasm"}
	one := ""
	for _, p := range protocols {
		if m[p] == "" || one != "" && m[p] != one {
			return "querylens.wasm"
		}
		one = m[p]
	}
	if one == "" {
		return "querylens.wasm"
	}
	return one
}

func (families) ModuleMap() map[string]string {
	return map[string]string{"p1": "fam-a.wasm", "p2": "fam-a.wasm", "p3": "fam-b.wasm"}
}

// TestWorkerPageModules: a Worker page starts with the module holding the
// protocols it decodes first (a family's when they are of one, else the
// combined one) and tells the worker every module; a family's module is
// fetched and compiled by the worker (data-boot compile "worker", no
// preload), the combined one preloaded for boot.js to compile. A page that
// is not a Worker page (the inspector) preloads the combined one.
func TestWorkerPageModules(t *testing.T) {
	for _, tc := range []struct {
		name      string
		worker    bool
		protocols []string
		want      string
		preload   bool // else the worker compiles it
	}{
		{"one family", true, []string{"p1", "p2"}, "/static/fam-a.wasm?h", false},
		{"two families", true, []string{"p1", "p3"}, "/static/querylens.wasm?h", true},
		{"none", true, nil, "/static/querylens.wasm?h", true},
		{"not a worker page", false, []string{"p3"}, "/static/querylens.wasm?h", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := render(t, layout.Page{Head: layout.Head{Title: "T"}, Script: "x.js", WASM: true, Worker: tc.worker,
				Protocols: tc.protocols, Assets: families{}})
			var pre []string
			for _, n := range ht.All(d.Tags("head")[0], func(n *html.Node) bool { return n.Data == "link" && ht.Attr(n, "rel") == "preload" }) {
				pre = append(pre, ht.Attr(n, "href"))
			}
			var wantPre []string
			compile := `"compile":"worker",`
			if tc.preload {
				wantPre, compile = []string{tc.want}, ""
			}
			if !slices.Equal(pre, wantPre) {
				t.Errorf("preloads %q, want %q", pre, wantPre)
			}
			if got := ht.Attr(d.Tags("html")[0], "data-wasm"); got != "/static/querylens.wasm?h" {
				t.Errorf("data-wasm = %q, want the combined module", got)
			}
			if !tc.worker {
				return
			}
			boot := ht.Attr(d.Tags("html")[0], "data-boot")
			if want := `"wasm":"` + tc.want + `",` + compile + `"decoders":{"combined":"/static/querylens.wasm?h","protocols":{"p1":"/static/fam-a.wasm?h","p2":"/static/fam-a.wasm?h","p3":"/static/fam-b.wasm?h"}}`; !strings.Contains(boot, want) {
				t.Errorf("data-boot = %s, want %s in it", boot, want)
			}
		})
	}
}

// TestWorkerPageBoot checks a page that starts a decoding worker: boot.js
// is inlined right after the import map, before the stylesheet, and allowed
// by its hash; the browser module's preload comes before it (so that its
// fetch takes the preload); <html data-boot> tells it the worker, the relay
// and the first asks.
func TestWorkerPageBoot(t *testing.T) {
	p := layout.Page{
		Head: layout.Head{Title: "T"}, Nav: "browse", Script: "browse.js", WASM: true, Worker: true, Assets: assets{},
		Boot: layout.Boot{Relay: "/relay", Asks: []layout.BootAsk{{Key: "master:m:1", Protocol: "zandronum", Target: "m:1",
			Options: map[string]string{"master": "true"}, TimeoutMs: 4000}}},
	}
	d := render(t, p)
	var kinds []string
	for _, s := range d.Tags("script") {
		kinds = append(kinds, ht.Attr(s, "type")+"#"+ht.Text(s))
	}
	if len(kinds) < 3 || !strings.HasPrefix(kinds[0], "importmap#") || kinds[1] != "#/* boot.js */" || !strings.HasPrefix(kinds[2], "module#") {
		t.Errorf("scripts: %q", kinds)
	}
	var head []string
	for _, n := range ht.All(d.Tags("head")[0], func(n *html.Node) bool { return n.Data == "script" || n.Data == "link" }) {
		head = append(head, n.Data+":"+ht.Attr(n, "rel"))
	}
	if got := strings.Join(head, " "); !strings.HasPrefix(got, "link:preload script: script: link:icon link:stylesheet") {
		t.Errorf("head order: %s", got)
	}
	if got := ht.Attr(d.Tags("html")[0], "data-boot"); got != `{"relay":"/relay","asks":[{"key":"master:m:1","protocol":"zandronum","target":"m:1","options":{"master":"true"},"timeoutMs":4000}],`+
		`"worker":"/static/worker.js?h","glue":"/static/wasm_exec.js?h","wasm":"/static/querylens.wasm?h","decoders":{"combined":"/static/querylens.wasm?h","protocols":{}},"modules":{"ql":"/static/ql.js?h","relay":"/static/relay.js?h"}}` {
		t.Errorf("data-boot = %s", got)
	}
	sum := sha256.Sum256([]byte("/* boot.js */"))
	csp := p.SecurityPolicy()
	script, _, _ := strings.Cut(csp[strings.Index(csp, "script-src"):], ";")
	if !strings.Contains(script, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || strings.Contains(script, "unsafe-inline") {
		t.Errorf("policy %q does not allow the inlined boot.js by its hash alone", csp)
	}
	if csp := (layout.Page{Script: "inspect.js", WASM: true, Assets: assets{}}).SecurityPolicy(); strings.Count(csp, "'sha256-") != 1 {
		t.Errorf("a page without a worker allows more than its import map: %q", csp)
	}
}

// importing is assets that also says what a script imports (web's
// assets do: Imports).
type importing struct{ assets }

func (importing) Imports(name string) []string {
	return map[string][]string{
		"browse.js":  {"ql.js", "live.js", "browse-table.js", "model.js"},
		"inspect.js": {"ql.js", "relay.js", "relay-client.js", "model.js"},
	}[name]
}

// TestModulePreloads: a page preloads the modules its script imports,
// each once, after the ones it always preloads; on a Worker page, not the
// relay client or the glue (the worker imports them).
func TestModulePreloads(t *testing.T) {
	for _, tc := range []struct {
		p    layout.Page
		want string
	}{
		{layout.Page{Script: "browse.js", WASM: true, Worker: true, Assets: importing{}}, "live.js ql.js browse-table.js model.js"},
		{layout.Page{Script: "inspect.js", WASM: true, Assets: importing{}}, "wasm_exec.js relay.js ql.js relay-client.js model.js"},
		{layout.Page{Script: "inspect.js", WASM: true, Assets: assets{}}, "wasm_exec.js relay.js ql.js"},
	} {
		var got []string
		for _, n := range ht.All(render(t, tc.p).Tags("head")[0], func(n *html.Node) bool { return n.Data == "link" && ht.Attr(n, "rel") == "modulepreload" }) {
			got = append(got, strings.TrimSuffix(strings.TrimPrefix(ht.Attr(n, "href"), "/static/"), "?h"))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: modulepreload %s, want %s", tc.p.Script, g, tc.want)
		}
	}
}

// TestRenderGzip: a big page goes gzipped to a client that takes gzip, and
// comes out as rendered; a small one, a client that refuses gzip and a
// HEAD request get it as it is; every answer varies with Accept-Encoding.
func TestRenderGzip(t *testing.T) {
	big := "<p>" + strings.Repeat(`{"protocol":"a2s","address":"127.0.0.1:27015"},`, 1000) + "</p>"
	for _, tc := range []struct {
		name, body, accept, method string
		gzipped                    bool
	}{
		{"big page", big, "gzip, deflate, br", "GET", true},
		{"gzip refused", big, "gzip;q=0, br", "GET", false},
		{"no Accept-Encoding", big, "", "GET", false},
		{"small page", "<p>hello</p>", "gzip", "GET", false},
		{"HEAD", big, "gzip", "HEAD", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/", nil)
			if tc.accept != "" {
				r.Header.Set("Accept-Encoding", tc.accept)
			}
			w := httptest.NewRecorder()
			layout.Render(w, r, 200, templ.Raw(tc.body))
			h := w.Result().Header
			if got := h.Get("Content-Encoding") == "gzip"; got != tc.gzipped {
				t.Fatalf("Content-Encoding %q, want gzip %v", h.Get("Content-Encoding"), tc.gzipped)
			}
			if h.Get("Vary") != "Accept-Encoding" {
				t.Errorf("Vary %q", h.Get("Vary"))
			}
			if tc.method == "HEAD" {
				if w.Body.Len() != 0 {
					t.Errorf("HEAD answered with %d bytes", w.Body.Len())
				}
				return
			}
			if h.Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
				t.Errorf("Content-Length %s, body %d bytes", h.Get("Content-Length"), w.Body.Len())
			}
			body := w.Body.Bytes()
			if tc.gzipped {
				z, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(z); err != nil {
					t.Fatal(err)
				}
				if w.Body.Len()*5 > len(body) {
					t.Errorf("gzipped to %d bytes of %d", w.Body.Len(), len(body))
				}
			}
			if string(body) != tc.body {
				t.Errorf("body %.80q…, want %.80q…", body, tc.body)
			}
		})
	}
}
