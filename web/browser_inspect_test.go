package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserInspectLinkDirections opens the inspector from links and
// checks that the packet list says what each datagram was: the status
// page's and the browser's links carry what the server answered (and the
// query sent to it), which the list must show as received and sent, not
// as pasted; a pasted capture stays pasted. A permalink of what a link
// opened opens the same list again.
func TestBrowserInspectLinkDirections(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	const target = "127.0.0.1:10666"
	for _, tc := range []struct {
		name, frag string
		dirs       []string // the Dir cells' classes, dir-…
		origin     string   // in the packet list's origin line
	}{
		{"browser link", "#p=zandronum&t=" + target + "&h=deadbeef", []string{"received"}, "received from " + target},
		{"status page link", "#p=zandronum&t=" + target + "&q=01020304&h=deadbeef,cafe",
			[]string{"sent", "received", "received"}, "received from " + target},
		{"sent query alone", "#p=zandronum&t=" + target + "&h=01020304&d=sent", []string{"sent"}, "sent to " + target},
		{"pasted", "#p=zandronum&h=deadbeef", []string{"pasted"}, "pasted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tab(t)
			dirsJS := `[...document.querySelectorAll("[data-testid=packet-row] td:nth-child(3)")].map(td => td.className.replace("dir-", ""))`
			check := func(url string) string {
				t.Helper()
				if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
					t.Fatal(err)
				}
				waitFor(t, ctx, "the inspector", `!!globalThis.querylensInspect && document.querySelectorAll("[data-testid=packet-row]").length > 0`, 10*time.Second)
				if got := eval[[]string](t, ctx, dirsJS); strings.Join(got, " ") != strings.Join(tc.dirs, " ") {
					t.Errorf("%s: directions %q, want %q", url, got, tc.dirs)
				}
				if got := eval[string](t, ctx, `document.querySelector("[data-testid=packets-origin]")?.textContent ?? ""`); !strings.Contains(got, tc.origin) {
					t.Errorf("%s: origin line %q, want it to say %q", url, got, tc.origin)
				}
				return eval[string](t, ctx, `querylensInspect.permalink()`)
			}
			link := check(st.URL + "/inspect" + tc.frag)
			// Open the permalink in a fresh document (a new query string
			// makes the navigation load the page again).
			check(st.URL + "/inspect?again=1" + link[strings.Index(link, "#"):])
		})
	}
}
