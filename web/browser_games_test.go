package web_test

import (
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// TestBrowserGamePicker: the game picker of a kept Steam master takes what
// GameDig's users type (its game ids, old ones too), a game's name, the
// picker's "Name (id)" and a Steam app ID, sets the master's filter to the
// game's and shows its list; a name it does not know says so and changes
// nothing.
func TestBrowserGamePicker(t *testing.T) {
	needWasm(t)
	lists := &fakeLists{bodies: map[string][]byte{}}
	for _, g := range []struct {
		filter, prefix, game string
		n                    int
	}{
		{`\appid\440`, "tf2 server", "Team Fortress", 30},
		{`\appid\252490`, "rust server", "Rust", 12},
		{`\appid\251570`, "7dtd server", "7 Days to Die", 7},
		{`\appid\730`, "cs2 server", "Counter-Strike 2", 5},
		{"", "", "", 0},
	} {
		lists.bodies[g.filter] = fakeListBody(t, g.filter, g.prefix, g.game, g.n)
	}
	rs := relay.New(relay.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	spec, err := server.ParseMasterSpec(bigMaster)
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Exchanger: fakes, Masters: []server.MasterSpec{spec}, MasterLists: lists})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, rs, h)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	// The picker loads with the page's other controls, once its start has
	// asked the first servers (querylensBrowse.ready).
	waitFor(t, ctx, "the configured list", `globalThis.querylensBrowse?.ready === true && querylensBrowse.counts().known === 30`, 30*time.Second)
	if !eval[bool](t, ctx, `!document.querySelector("[data-testid=game-picker]").hidden`) {
		t.Fatal("the game picker is hidden with a kept Steam master")
	}
	if !eval[bool](t, ctx, `[...document.querySelectorAll("#games option")].some(o => o.value === "Rust (rust)")`) {
		t.Error(`the picker does not offer "Rust (rust)"`)
	}
	pick := func(typed string) {
		t.Helper()
		eval[bool](t, ctx, `(document.getElementById("f-game").value = "", true)`)
		if err := chromedp.Do(ctx, chromedp.Focus("#f-game"), chromedp.KeyEvent(typed+kb.Enter)); err != nil {
			t.Fatal(err)
		}
	}
	msg := func() string { return eval[string](t, ctx, `document.getElementById("game-msg").textContent`) }
	for _, tc := range []struct {
		typed, filter, name string
		n                   int
	}{
		{"rust", `\appid\252490`, "Rust", 12},                                      // GameDig's id
		{"Team Fortress 2", `\appid\440`, "Team Fortress 2", 30},                   // the name
		{"7d2d", `\appid\251570`, "7 Days to Die", 7},                              // an old id (sdtd's)
		{"Counter-Strike 2 (counterstrike2)", `\appid\730`, "Counter-Strike 2", 5}, // the picker's option
		{"440", `\appid\440`, "Team Fortress 2", 30},                               // an app ID
	} {
		pick(tc.typed)
		waitFor(t, ctx, tc.typed+"'s list", `querylensBrowse.counts().known === `+strconv.Itoa(tc.n), 20*time.Second)
		if got := lists.asked(); !slices.Contains(got, tc.filter) {
			t.Errorf("%q: filters asked %q, want %s", tc.typed, got, tc.filter)
		}
		if m := msg(); !strings.Contains(m, tc.name) || !strings.Contains(m, tc.filter) {
			t.Errorf("%q: game message %q, want %q and %s", tc.typed, m, tc.name, tc.filter)
		}
	}
	asked := len(lists.asked())
	pick("no such game")
	if m := msg(); !strings.Contains(m, "No game called") {
		t.Errorf("an unknown game: message %q", m)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(lists.asked()); n != asked {
		t.Errorf("an unknown game asked the master list API again: %q", lists.asked()[asked:])
	}
}
