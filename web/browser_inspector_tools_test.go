package web_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// viewports are the widths the inspector's tools are checked at: a phone,
// where the panels stack, and a desktop.
var viewports = []struct {
	name string
	w, h int64
}{{"phone", 390, 844}, {"desktop", 1300, 900}}

// openInspector opens /inspect+frag at the viewport and waits for the
// first packet to be shown.
func openInspector(t *testing.T, ctx context.Context, url string, w, h int64) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h), chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the inspector", `!!globalThis.querylensInspect && document.querySelectorAll("#hex [data-o]").length > 0`, 15*time.Second)
}

// dataRows reads the data inspector's table as name → value.
const dataRowsJS = `Object.fromEntries([...document.querySelectorAll("[data-testid=data-values] tr")].map(tr => [tr.dataset.name, tr.querySelector("td").textContent]))`

// TestBrowserInspectDataInspector clicks bytes of a pasted datagram and
// checks what the data inspector reads there, and that a shift-click
// selects a range whose text it shows.
func TestBrowserInspectDataInspector(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	// 01020304 | 0000803f (1.0 as f32le) | "AB" NUL | e9 (é in Latin-1, not UTF-8)
	const frag = "#h=010203040000803f414200e9"
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ctx := tab(t)
			openInspector(t, ctx, st.URL+"/inspect"+frag, vp.w, vp.h)
			for _, tc := range []struct {
				name  string
				click []int // offsets clicked; the last ones with shift
				shift bool
				want  map[string]string
			}{
				{"first byte", []int{0}, false, map[string]string{
					"u8": "1", "i8": "1", "u16 le": "513", "u16 be": "258", "u32 le": "67305985", "u32 be": "16909060",
				}},
				{"float", []int{4}, false, map[string]string{"f32 le": "1", "u32 be": "32831", "u8": "0"}},
				{"C string", []int{8}, false, map[string]string{"C string": `"AB" (2 bytes + NUL)`, "u16 le": "16961"}},
				{"negative", []int{11}, false, map[string]string{"u8": "233", "i8": "-23", "u16 le": "—", "binary": "11101001"}},
				{"range", []int{8, 11}, true, map[string]string{
					"Latin-1": `"AB\x00é"`, "UTF-8": `"AB\x00�" (not UTF-8 from byte 3 of the selection)`,
				}},
			} {
				for i, o := range tc.click {
					shift := "false"
					if tc.shift && i > 0 {
						shift = "true"
					}
					// A real click event on the byte's element, with
					// the shift key as a person would hold it.
					eval[bool](t, ctx, `document.querySelector('#hex .x[data-o="`+strconv.Itoa(o)+`"]').dispatchEvent(new MouseEvent("click", {bubbles: true, shiftKey: `+shift+`}))`)
				}
				got := eval[map[string]string](t, ctx, dataRowsJS)
				for k, v := range tc.want {
					if got[k] != v {
						t.Errorf("%s: %s = %q, want %q", tc.name, k, got[k], v)
					}
				}
			}
			// The panel is on screen, within the page's width.
			if w := eval[float64](t, ctx, `document.querySelector("[data-testid=data-inspector]").getBoundingClientRect().right`); w > float64(vp.w)+1 {
				t.Errorf("the data inspector ends at %.0f px, past the %d px window", w, vp.w)
			}
		})
	}
}
