package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// TestBrowserModelFromTable: the browser page names states and reads row
// fields only through the generated static/model.js. Served a model.js
// whose offline state has another name and word, and whose row has name
// and map swapped, the page shows what that table says: a silent server's
// row carries the new state and word, and an answering server's name sits
// in the map column.
func TestBrowserModelFromTable(t *testing.T) {
	needWasm(t)
	ctx := tab(t)
	orig, err := os.ReadFile("static/model.js")
	if err != nil {
		t.Fatal(err)
	}
	changed := string(orig)
	for _, r := range [][2]string{
		{`offline: "offline",`, `offline: "gone",`},
		{`"offline": "timed out",`, `"gone": "TABLE-GONE",`},
		{"name: 0,", "name: 1,"},
		{"map: 1,", "map: 0,"},
	} {
		if !strings.Contains(changed, r[0]) {
			t.Fatalf("model.js has no %q", r[0])
		}
		changed = strings.Replace(changed, r[0], r[1], 1)
	}

	dctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(dctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	own := []netip.AddrPort{netip.MustParseAddrPort(d.Master())}
	var refs []server.Ref
	var silent, normal demo.Target
	for _, tg := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(tg.Addr))
		if tg.Protocol == "bloodmasters" || tg.Protocol == "gamespy2" {
			refs = append(refs, tg.Ref())
			switch {
			case tg.Behavior == demo.Silent && silent.Addr == "":
				silent = tg
			case tg.Behavior == demo.Normal && normal.Addr == "":
				normal = tg
			}
		}
	}
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey}, logger)
	t.Cleanup(func() { rs.Shutdown(context.Background()) })
	h, err := web.New(web.Config{Exchanger: rs, Servers: refs, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	// Every URL of model.js (plain, and the import map's hashed one) gets
	// the changed table.
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if base := path.Base(r.URL.Path); strings.HasPrefix(r.URL.Path, "/static/") && strings.HasPrefix(base, "model.") && strings.HasSuffix(base, ".js") {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			io.WriteString(w, changed)
			return
		}
		h.ServeHTTP(w, r)
	})
	base := serve(t, rs, pages)

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	row := func(tg demo.Target) string {
		return `document.querySelector('tr[data-key="` + tg.Protocol + "/" + tg.Addr + `"]')`
	}
	waitFor(t, ctx, "the silent server's row in the table's state", row(silent)+`?.dataset.state === "gone"`, 30*time.Second)
	if got := eval[string](t, ctx, row(silent)+`.querySelector("[data-testid=row-state]").textContent`); got != "TABLE-GONE" {
		t.Errorf("silent row's word = %q, want the table's TABLE-GONE", got)
	}
	name := codecs.StripColors(normal.Name)
	waitFor(t, ctx, "the answering server's row", row(normal)+`?.dataset.state === "online"`, 30*time.Second)
	if got := eval[string](t, ctx, row(normal)+`.cells[4].textContent`); got != name {
		t.Errorf("map column = %q, want the server's name %q (the table puts the name there)", got, name)
	}
	if got := eval[string](t, ctx, row(normal)+`.querySelector("a.name").textContent`); got == name || got == "" {
		t.Errorf("name column = %q: the page did not read the name through Row", got)
	}
}
