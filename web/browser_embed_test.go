package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/web/internal/fakeserver"
)

// TestBrowserEmbed frames querylens from another origin (a second server
// on another port) as a forum or a clan site would: the embeddable card
// renders in its iframe with the server's name, and the status page of the
// same server, framed the same way, is refused by the browser.
func TestBrowserEmbed(t *testing.T) {
	ql := httptest.NewServer(newHandler(t))
	t.Cleanup(ql.Close)
	base := ql.URL + "/s/" + fakeserver.Protocol + "/10.0.0.1:7777"
	// The other site: counts the frames that finished loading, blocked
	// or not (a refused frame still fires load, with an error page in it).
	page := `<!DOCTYPE html><html><body data-loaded="0">
<iframe id="embed" src="` + base + `/embed" width="320" height="110" onload="document.body.dataset.loaded++"></iframe>
<iframe id="status" src="` + base + `" width="640" height="400" onload="document.body.dataset.loaded++"></iframe>
</body></html>`
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	t.Cleanup(other.Close)
	if strings.Split(other.URL, ":")[2] == strings.Split(ql.URL, ":")[2] {
		t.Fatal("the two servers share a port")
	}

	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(other.URL)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "both frames to load", `document.body.dataset.loaded === "2"`, 20*time.Second)
	qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	frames, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.CSSAll("iframe"), chromedp.AtLeast(2)))
	if err != nil || len(frames) != 2 {
		t.Fatalf("frames: %d, %v", len(frames), err)
	}
	byID := map[string]*chromedp.Node{}
	for _, f := range frames {
		byID[f.AttributeValue("id")] = f
	}
	// The card: the name (colour codes stripped) and the players.
	name, err := chromedp.Run(qctx, chromedp.Text(chromedp.CSS("[data-testid=embed-name]"), chromedp.FromNode(byID["embed"])))
	if err != nil {
		t.Fatalf("the embedded card did not render: %v", err)
	}
	players, err := chromedp.Run(qctx, chromedp.Text(chromedp.CSS("[data-testid=embed-players]"), chromedp.FromNode(byID["embed"])))
	if err != nil {
		t.Fatalf("the embedded card has no players: %v", err)
	}
	if name != "CTF Night" || players != "3/8 players" {
		t.Errorf("card shows %q, %q", name, players)
	}
	// The status page: its frame loaded (the counter says so) but holds
	// the browser's error page, not the article. The same lookup finds the
	// card in its frame, so an empty answer is the refusal, not the query.
	cards, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.CSSAll("[data-testid=embed]"), chromedp.AtLeast(0), chromedp.FromNode(byID["embed"])))
	if err != nil || len(cards) != 1 {
		t.Fatalf("the lookup without waiting found %d cards in the card's frame: %v", len(cards), err)
	}
	articles, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.CSSAll("[data-testid=status]"), chromedp.AtLeast(0), chromedp.FromNode(byID["status"])))
	if err != nil {
		t.Fatalf("status frame: %v", err)
	}
	if len(articles) != 0 {
		t.Errorf("the status page rendered inside another site's frame")
	}
}
