package web_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// growingList is a kept master's list the server is still fetching: each
// read finds keptStep more servers, until keptTotal, and the reads after
// the first are expected to ask only for what came since (?after=N).
type growingList struct {
	t     *testing.T
	spec  server.MasterSpec
	mu    sync.Mutex
	reads []string // the after parameter of each read ("" for none)
}

const keptStep, keptTotal = 200, 600

func (g *growingList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.reads = append(g.reads, r.URL.Query().Get("after"))
	have := min(keptStep*len(g.reads), keptTotal)
	g.mu.Unlock()
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	if after > have {
		after = 0
	}
	list := server.MasterList{Master: g.spec, Fetched: time.Unix(1700000000, 0).UTC(), Complete: have == keptTotal,
		Total: have, Offset: after, Servers: []server.Summary{}}
	for i := after; i < have; i++ {
		addr := "10.1." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255) + ":27015"
		ref, err := server.New("a2s", addr, nil)
		if err != nil {
			g.t.Error(err)
			return
		}
		list.Servers = append(list.Servers, server.Summary{Protocol: "a2s", Address: addr, Key: ref.Key().String(),
			Status: ref.Path(), Name: "growing " + strconv.Itoa(i)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

// TestBrowserKeptListGrows: while the server is still fetching a kept
// list, the page re-reads only what came since its last read, and ends
// with every server of the list in the table once.
func TestBrowserKeptListGrows(t *testing.T) {
	needWasm(t)
	spec, err := server.ParseMasterSpec(bigMaster)
	if err != nil {
		t.Fatal(err)
	}
	lists := &growingList{t: t, spec: spec}
	rs := relay.New(relay.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h, err := web.New(web.Config{Exchanger: fakes, Masters: []server.MasterSpec{spec}, MasterLists: lists})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the whole list shown", `globalThis.querylensBrowse?.counts().shown === `+strconv.Itoa(keptTotal), 60*time.Second)
	lists.mu.Lock()
	reads := append([]string(nil), lists.reads...)
	lists.mu.Unlock()
	want := []string{"", "200", "400"}
	if len(reads) != len(want) {
		t.Fatalf("reads with after = %q, want %q", reads, want)
	}
	for i := range want {
		if reads[i] != want[i] {
			t.Fatalf("reads with after = %q, want %q", reads, want)
		}
	}
	if n := eval[int](t, ctx, `querylensBrowse.counts().known`); n != keptTotal {
		t.Errorf("%d servers known, want %d", n, keptTotal)
	}
}
