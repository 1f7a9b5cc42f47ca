package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
)

// boardWatches is a watches file of one board and no watch: the flapping
// server at flap and a silent one at silent, on the Discord-shaped
// receiver at hook, sampled as fast as the test's relay lets them.
func boardWatches(hook, flap, silent string) string {
	return `
[[destination]]
name = "fake"
kind = "discord"
url = "` + hook + `/api/webhooks/43/b0ard-token"

[[board]]
id = "both"
title = "Both servers"
to = "fake"
servers = [
  { protocol = "quake3", addr = "` + flap + `" },
  { protocol = "zandronum", addr = "` + silent + `" },
]
every = "200ms"
`
}

// TestServeBoardDemo: serve --demo --watches FILE with a [[board]] of
// two servers, one the demo's flapping server: the board is posted once,
// edited in place as the flapping server changes, and posted again after
// it was deleted. Driven by what the receiver is sent, not by sleeps.
func TestServeBoardDemo(t *testing.T) {
	t.Parallel()
	rcv := demo.NewDiscordReceiver()
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "watches.toml")
	flap, silent := freeUDP(t), freeUDP(t)
	if err := os.WriteFile(file, []byte(boardWatches(ts.URL, flap, silent)), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, stop := serveFor(t, alertServeOptions(dir, file, flap))
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dump := func(got []demo.Received) string {
		var b strings.Builder
		for _, r := range got {
			b.WriteString(r.Method + " " + r.MessageID + ": " + r.Content() + " [" + boardStates(r) + "]\n")
		}
		return b.String()
	}
	// Posted, then edited once the flapping server went down and once it
	// came back (its state shown both ways).
	edited := func(got []demo.Received, mark string) bool {
		for _, r := range got {
			if r.Method == http.MethodPatch && bytes.Contains(r.Body, []byte(mark)) {
				return true
			}
		}
		return false
	}
	err := rcv.Wait(ctx, func(got []demo.Received) bool {
		return edited(got, "Offline") && edited(got, "Online")
	})
	got := rcv.Received()
	if err != nil {
		t.Fatalf("%v; the receiver got:\n%s", err, dump(got))
	}
	var boardID string
	for _, r := range got {
		switch {
		case !isBoard(r):
			t.Errorf("not the board: %s %s", r.Method, r.Content())
		case boardID == "" && r.Method == http.MethodPost:
			boardID = r.MessageID
		case r.Method != http.MethodPatch || r.MessageID != boardID:
			t.Errorf("the board: %s %s after %s was posted", r.Method, r.MessageID, boardID)
		}
		if !strings.Contains(r.Content(), "Both servers") || !bytes.Contains(r.Body, []byte(flap)) || !bytes.Contains(r.Body, []byte(silent)) ||
			!bytes.Contains(r.Body, []byte(" · 2 servers")) {
			t.Errorf("a board without its title or both servers: %s", r.Body)
		}
		if !bytes.Contains(r.Body, []byte(`"allowed_mentions":{"parse":[]}`)) {
			t.Errorf("a message without allowed_mentions: %s", r.Body)
		}
	}
	// Deleted in Discord, the board is posted again at its next change,
	// then edited in place under its new id.
	rcv.Delete(boardID)
	n := len(got)
	var again string
	err = rcv.Wait(ctx, func(got []demo.Received) bool {
		for _, r := range got[n:] {
			switch {
			case again == "" && r.Method == http.MethodPost:
				again = r.MessageID
			case again != "" && r.Method == http.MethodPatch && r.MessageID == again:
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the board deleted was not posted again and edited: %v; after the delete:\n%s", err, dump(rcv.Received()[n:]))
	}
	if again == boardID {
		t.Errorf("posted again under the deleted id %s", again)
	}
	// The board's servers are pinned like watched ones.
	resp, body := fetch(t, base+"metrics")
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("querylens_alert_servers_pinned 2\n")) {
		t.Errorf("%s: /metrics does not count the board's two servers pinned:\n%s", resp.Status, grepLines(body, "querylens_alert_"))
	}
}

// boardStates is what a board message shows of each server: the first
// line of each field, for a failure's account.
func boardStates(r demo.Received) string {
	var m alerts.DiscordMessage
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return err.Error()
	}
	var out []string
	for _, e := range m.Embeds {
		for _, f := range e.Fields {
			line, _, _ := strings.Cut(f.Value, "\n")
			out = append(out, line)
		}
	}
	return strings.Join(out, " | ")
}

// TestBoardsCoalesce: samples of a board's servers mark the board once
// however many changed, a sample that changes nothing shown marks
// nothing, and a server on two boards marks both.
func TestBoardsCoalesce(t *testing.T) {
	a := &alertsRun{}
	q3 := alerts.Ref{Protocol: "quake3", Addr: "127.0.0.1:27960"}
	zan := alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	a.setBoards(context.Background(), []alerts.Board{
		{ID: "both", To: "fake", Servers: []alerts.Ref{q3, zan}},
		{ID: "one", To: "fake", Servers: []alerts.Ref{zan}},
	})
	marked := func() []string {
		a.mb.mu.Lock()
		defer a.mb.mu.Unlock()
		var ids []string
		for id := range a.mb.dirty {
			ids = append(ids, id)
		}
		clear(a.mb.dirty)
		select {
		case <-a.mb.c:
		default:
		}
		return ids
	}
	if got := marked(); len(got) != 2 {
		t.Fatalf("new boards marked: %v", got)
	}
	key := func(r alerts.Ref) history.Key {
		ref, err := server.New(r.Protocol, r.Addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ref.Key()
	}
	t0 := time.Unix(1_700_000_000, 0)
	off := server.Report{At: t0, State: server.Offline}
	a.boardsObserve(key(q3), off)
	if got := marked(); len(got) != 1 || got[0] != "both" {
		t.Errorf("after the first sample of one server: %v", got)
	}
	a.boardsObserve(key(q3), server.Report{At: t0.Add(time.Second), State: server.Offline})
	if got := marked(); len(got) != 0 {
		t.Errorf("a sample that changes nothing marked %v", got)
	}
	a.boardsObserve(key(zan), off)
	a.boardsObserve(key(q3), server.Report{At: t0.Add(2 * time.Second), State: server.Unreachable})
	if got := marked(); len(got) != 2 {
		t.Errorf("a burst of changes marked %v, want each board once", got)
	}
	every := map[history.Key]time.Duration{key(q3): time.Minute}
	old := map[history.Key][]string{}
	a.boardPins(every, old)
	if len(every) != 2 || every[key(q3)] != history.DefaultPinEvery || every[key(zan)] != history.DefaultPinEvery {
		t.Errorf("pins: %v", every)
	}
	a.setBoards(context.Background(), []alerts.Board{{ID: "one", To: "fake", Servers: []alerts.Ref{zan}}})
	every = map[history.Key]time.Duration{}
	a.boardPins(every, old)
	if _, ok := old[key(q3)]; !ok || len(every) != 1 {
		t.Errorf("a server no longer on a board is not unpinned: every %v, old %v", every, old)
	}
}
