package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
)

// serveFor runs serve with o until the returned stop is called.
func serveFor(t *testing.T, o serveOptions) (base string, out *bytes.Buffer, stop func()) {
	t.Helper()
	// A bound, not an expectation: serve --demo --history writes a day of
	// samples for every demo server before it is ready, slow under -race
	// on a loaded machine (TestServeDemoHistory's two starts took 150 s
	// at load average 6, and one start more than three minutes at 12-15).
	// It waits for ready until shortly before the test binary's own
	// deadline, so a serve that never starts still fails here, by name.
	bound := 10 * time.Minute
	if dl, ok := t.Deadline(); ok {
		bound = max(time.Until(dl)-30*time.Second, 3*time.Minute)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	out = &bytes.Buffer{}
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: out, stderr: &errb}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- e.runServe(ctx, o, ready) }()
	select {
	case base = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve ended: %v\n%s", err, errb.String())
	case <-ctx.Done():
		t.Fatal("serve did not start")
	}
	return base, out, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("shutdown: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not shut down")
		}
	}
}

func fetch(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

var ogImage = regexp.MustCompile(`<meta property="og:image" content="([^"]+)"`)

// TestServeDemoHistory: serve --demo --data DIR fills a synthetic day, the
// status page shows it (charts, synthetic mark), og:image is a PNG card,
// and the history is still there after a restart on the same directory.
func TestServeDemoHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := serveOptions{addr: "127.0.0.1:0", demo: true, demoServers: 3, demoMaster: "127.0.0.1:0"}
	o.history = historyOptions{enabled: true, data: dir, dataSet: true, every: time.Minute, idle: time.Hour, max: 100, budget: 50}
	o.demoMaster = ""
	base, out, stop := serveFor(t, o)
	if !strings.Contains(out.String(), "demo history: 24 h of synthetic samples") {
		t.Errorf("stdout does not mention the synthetic history:\n%s", out)
	}
	// The first demo Zandronum server's page, from the master's list in
	// the demo's own listing.
	resp, body := fetch(t, base)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	page := demoPage(t, base, body)
	resp, body = fetch(t, page)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", page, resp.Status)
	}
	for _, want := range []string{`data-testid="history"`, `data-testid="history-synthetic"`, `data-testid="chart-24h"`, `<svg`, `twitter:card" content="summary_large_image"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("status page lacks %s", want)
		}
	}
	m := ogImage.FindSubmatch(body)
	if m == nil {
		t.Fatal("no og:image")
	}
	resp, img := fetch(t, strings.ReplaceAll(string(m[1]), "&amp;", "&"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("card: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	pic, err := png.Decode(bytes.NewReader(img))
	if err != nil || pic.Bounds() != image.Rect(0, 0, 1200, 630) {
		t.Fatalf("card: %v %v", err, pic)
	}
	// The sampler records real samples beside the synthetic ones, through
	// the relay, within a second of start.
	hj := page + "/history.json"
	if i := strings.Index(page, "?"); i >= 0 {
		hj = page[:i] + "/history.json" + page[i:]
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := fetch(t, hj)
		var doc struct {
			Ranges []struct {
				Samples   int `json:"samples"`
				Synthetic int `json:"synthetic_samples"`
			} `json:"ranges"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || len(doc.Ranges) == 0 {
			t.Fatalf("history.json: %v %s", err, body)
		}
		if r := doc.Ranges[0]; r.Synthetic > 0 && r.Samples > r.Synthetic {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no real sample recorded: %s", body[:min(len(body), 300)])
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err != nil {
		t.Fatal(err)
	}
	// Restart on the same directory: the demo servers get new ports, but
	// the old history is still in the file.
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	tracked, err := s.Tracked(context.Background())
	s.Close()
	if err != nil || len(tracked) < 4 {
		t.Fatalf("after stop: %d tracked, %v", len(tracked), err)
	}

	// Restart on the same --data: the old server's page (nothing answers on
	// its port any more) still has its history.
	base2, _, stop2 := serveFor(t, o)
	defer stop2()
	_, body = fetch(t, strings.Replace(page, base, base2, 1))
	for _, want := range []string{`data-testid="chart-24h"`, `data-testid="chart-area-24h"`, `data-testid="history-synthetic"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("after restart the old page lacks %s", want)
		}
	}
}

var statusLink = regexp.MustCompile(`/s/zandronum/127\.0\.0\.1:[0-9]+`)

// demoPage finds a demo Zandronum server's status page: the browse page
// renders rows in JS, so ask the demo's servers through the config it
// embeds, falling back to the master's first server.
func demoPage(t *testing.T, base string, browse []byte) string {
	t.Helper()
	// The browse page's config names the demo's servers of other protocols.
	re := regexp.MustCompile(`"protocol":"(ogp|gamespy2|bloodmasters)","addr":"(127\.0\.0\.1:[0-9]+)"`)
	if m := re.FindSubmatch(browse); m != nil {
		return base + "s/" + string(m[1]) + "/" + string(m[2])
	}
	if m := statusLink.Find(browse); m != nil {
		return strings.TrimSuffix(base, "/") + string(m)
	}
	t.Fatalf("no demo server in the browse page:\n%s", browse[:min(len(browse), 2000)])
	return ""
}

// TestServeRefusesForeignData: a --data directory holding a file that is
// not a querylens history makes serve fail at start, naming the file, and
// leaves the file as it was.
func TestServeRefusesForeignData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sqlite.FileName)
	junk := []byte("not a database at all\n")
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	o := serveOptions{addr: "127.0.0.1:0"}
	o.history = historyOptions{enabled: true, data: dir, dataSet: true}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := e.runServe(ctx, o, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a querylens history") {
		t.Fatalf("runServe = %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, junk) {
		t.Error("the foreign file was changed")
	}
}

// TestTrackMasters: --track-master tracks every server the demo master
// lists (the relay's policy allows them), and stops with its context.
func TestTrackMasters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	logger := slog.New(slog.DiscardHandler)
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey}, logger)
	defer rs.Shutdown(context.Background())
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tr, err := history.NewTracker(ctx, history.TrackerConfig{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var passLog syncBuffer
	go func() {
		server.TrackMasters(mctx, server.MasterConfig{Exchanger: rs, Allow: rs.CheckTarget, Tracker: tr,
			Masters: []server.Ref{masterRef(t, d.Master())}, Logger: slog.New(slog.NewTextHandler(&passLog, nil))})
		close(done)
	}()
	// Wait for the pass to end (its log line), not for the tracker to
	// count 6: the tracker counts a server before its store write returns,
	// and stopping then cancels that write.
	for !strings.Contains(passLog.String(), "tracked=6") && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if tr.Len() != 6 {
		t.Fatalf("tracked %d of the master's 6 servers", tr.Len())
	}
	got, err := store.Tracked(ctx)
	if err != nil || len(got) != 6 || got[0].Source != history.SourceMaster {
		t.Errorf("store: %+v %v", got, err)
	}

	// A policy that refuses loopback tracks nothing the master lists.
	store2, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	tr2, err := history.NewTracker(ctx, history.TrackerConfig{Store: store2})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	mctx, stop = context.WithCancel(ctx)
	done = make(chan struct{})
	go func() {
		server.TrackMasters(mctx, server.MasterConfig{Exchanger: rs, Allow: relay.NewPolicy(nil, nil).Check, Tracker: tr2,
			Masters: []server.Ref{masterRef(t, d.Master())}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		close(done)
	}()
	for !strings.Contains(logs.String(), "refused=6") && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if tr2.Len() != 0 || !strings.Contains(logs.String(), "tracked=0") {
		t.Errorf("a refusing policy tracked %d servers; log: %s", tr2.Len(), logs.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// masterRef is the Zandronum master at addr, asked for its list.
func masterRef(t *testing.T, addr string) server.Ref {
	t.Helper()
	r, err := server.New("zandronum", addr, map[string]string{"master": "true"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTrackKeptLists: with --track-master the kept masters' lists (the
// demo's Zandronum, Steam-like, Quake III and GameSpy v1 masters, read from package masters'
// keeper as serve wires it) are tracked too, but only into free places:
// a server people viewed is never evicted for a listed one.
func TestTrackKeptLists(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{MasterAddr: "127.0.0.1:0", Servers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	logger := slog.New(slog.DiscardHandler)
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey}, logger)
	defer rs.Shutdown(context.Background())
	specs := demoMasters(d)
	keeper, err := masters.New(masters.Config{Masters: specs, Exchanger: rs, Allow: rs.CheckTarget, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	kept := keptLists(keeper, specs)
	if len(kept) != 4 || kept[0].Protocol != "zandronum" || kept[1].Protocol != "a2s" || kept[2].Protocol != "quake3" || kept[3].Protocol != "gamespy1" {
		t.Fatalf("kept lists %+v, want the Zandronum, the Steam-like, the Quake III and the GameSpy v1 master's", kept)
	}
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const max = 5
	tr, err := history.NewTracker(ctx, history.TrackerConfig{Store: store, Max: max})
	if err != nil {
		t.Fatal(err)
	}
	viewed, err := server.New("zandronum", d.Targets()[0].Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.View(ctx, viewed.Key(), history.SourceView)
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var logs syncBuffer
	go func() {
		server.TrackMasters(mctx, server.MasterConfig{Exchanger: rs, Allow: rs.CheckTarget, Tracker: tr, Kept: kept,
			Every: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		close(done)
	}()
	// The keeper fetches each list on its first read: wait for a pass
	// that found the tracker full and skipped listed servers.
	skipped := regexp.MustCompile(`skipped=[1-9]`)
	for tr.Len() < max || !skipped.MatchString(logs.String()) {
		if ctx.Err() != nil {
			t.Fatalf("no pass filled the tracker from the kept lists (%d tracked); log:\n%s", tr.Len(), logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if tr.Len() != max {
		t.Errorf("tracked %d, want the tracker's %d places filled", tr.Len(), max)
	}
	if !tr.IsTracked(viewed.Key()) {
		t.Error("the viewed server was evicted for a listed one")
	}
	got, err := store.Tracked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	protocols := map[string]bool{}
	for _, s := range got {
		if s.Source == history.SourceMaster {
			protocols[s.Key.Protocol] = true
		}
	}
	if !protocols["a2s"] && !protocols["quake3"] {
		t.Errorf("no kept list's server tracked: %+v\n%s", got, logs.String())
	}
}
