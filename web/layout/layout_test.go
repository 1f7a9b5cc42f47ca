package layout_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/html"

	ht "github.com/querylens/querylens/web/internal/htmltest"
	"github.com/querylens/querylens/web/layout"
)

type assets struct{}

func (assets) URL(name string) string { return "/static/" + name + "?h" }
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
