package web_test

import (
	"context"
	"strconv"
	"strings"
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

// a2sInfo and a2sInfoChallenge are the A2S_INFO query without and with
// the challenge (codecs/a2s/testdata/info_request*.hexlines).
const (
	a2sInfo          = "ffffffff54536f7572636520456e67696e6520517565727900"
	a2sInfoChallenge = "ffffffff54536f7572636520456e67696e65205175657279001d2c3b4a"
)

// TestBrowserInspectCompare compares the A2S_INFO query with its form
// that carries a challenge: four bytes more, marked in the byte diff, and
// the challenge field added in the field diff; swapping the sides makes it
// removed. At phone width the two halves stack.
func TestBrowserInspectCompare(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ctx := tab(t)
			openInspector(t, ctx, st.URL+"/inspect#p=a2s&d=sent&h="+a2sInfo+","+a2sInfoChallenge, vp.w, vp.h)
			eval[bool](t, ctx, `(querylensInspect.select(0), document.querySelector("[data-testid=compare-a]").click(), querylensInspect.select(1), document.querySelector("[data-testid=compare-b]").click(), true)`)
			waitFor(t, ctx, "the comparison", `document.querySelector("[data-testid=compare]").open`, 5*time.Second)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=compare-summary]").textContent`); !strings.Contains(got, "4 of 29 bytes differ") || !strings.Contains(got, "1 added") {
				t.Errorf("summary %q, want 4 of 29 bytes differ and 1 field added", got)
			}
			if got := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=compare-hex-b] .chg")].map(e => e.dataset.o)`); strings.Join(got, ",") != "25,26,27,28" {
				t.Errorf("changed bytes of B %v, want 25-28", got)
			}
			changes := `Object.fromEntries([...document.querySelectorAll("[data-testid=compare-field]")].map(tr => [tr.dataset.field, tr.dataset.change]))`
			if got := eval[map[string]string](t, ctx, changes); got["challenge"] != "added" || got["payload"] != "same" {
				t.Errorf("field changes %v, want challenge added and payload the same", got)
			}
			eval[bool](t, ctx, `(document.querySelector("[data-testid=compare-swap]").click(), true)`)
			if got := eval[map[string]string](t, ctx, changes); got["challenge"] != "removed" {
				t.Errorf("after swapping, challenge is %q, want removed", got["challenge"])
			}
			// Byte diff and field diff side by side on a desktop, stacked on a phone.
			sideBySide := eval[bool](t, ctx, `(() => { const [a, b] = document.querySelectorAll(".cmp > section"); return b.getBoundingClientRect().top < a.getBoundingClientRect().bottom - 1; })()`)
			if sideBySide != (vp.w > 900) {
				t.Errorf("at %d px the byte and field diffs side by side = %v", vp.w, sideBySide)
			}
			if right := eval[float64](t, ctx, `document.querySelector("[data-testid=compare]").getBoundingClientRect().right`); right > float64(vp.w)+1 {
				t.Errorf("the comparison ends at %.0f px, past the %d px window", right, vp.w)
			}
		})
	}
}

// TestBrowserInspectEditResend loads the A2S_INFO query into the editor
// and sends it to the demo's A2S server through the relay, which answers;
// then edits its payload field, sees the hex and the decode follow, and
// sends that: the relay refuses it, and the page names the rule.
func TestBrowserInspectEditResend(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	target := ""
	for _, tg := range st.Demo.Targets() {
		if tg.Protocol == "a2s" && tg.Options == nil {
			target = tg.Addr
			break
		}
	}
	if target == "" {
		t.Fatal("the demo has no A2S server")
	}
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ctx := tab(t)
			openInspector(t, ctx, st.URL+"/inspect#p=a2s&d=sent&t="+target+"&h="+a2sInfo, vp.w, vp.h)
			eval[bool](t, ctx, `(document.querySelector("[data-testid=edit-selected]").click(), true)`)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-status]").textContent`); !strings.Contains(got, "a2s query") {
				t.Errorf("edit status %q, want the query decoded", got)
			}
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-target]").value`); got != target {
				t.Errorf("edit target %q, want %q", got, target)
			}
			// Accepted: the relay forwards it, and the server answers.
			eval[bool](t, ctx, `(document.querySelector("[data-testid=edit-send]").click(), true)`)
			waitFor(t, ctx, "the answer", `document.querySelector("[data-testid=edit-result]").className.includes("ok")`, 20*time.Second)
			if n := eval[int](t, ctx, `querylensInspect.packets().filter(p => p.direction === "received").length`); n < 1 {
				t.Errorf("%d datagrams received", n)
			}
			// Edit the payload field: the hex follows.
			eval[bool](t, ctx, `(() => { const i = document.querySelector('[data-testid=edit-fields] input[data-field="payload"]'); i.value = "Source Engine Querx"; i.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-hex]").value.replaceAll(" ", "")`); got != strings.Replace(a2sInfo, "7900", "7800", 1) {
				t.Errorf("edited hex %s", got)
			}
			// Refused: not a well-formed query, and the page says by which rule.
			eval[bool](t, ctx, `(document.querySelector("[data-testid=edit-send]").click(), true)`)
			waitFor(t, ctx, "the refusal", `document.querySelector("[data-testid=edit-result]").dataset.rule !== ""`, 20*time.Second)
			if rule := eval[string](t, ctx, `document.querySelector("[data-testid=edit-result]").dataset.rule`); rule != "not-a-query" {
				t.Errorf("refused by rule %q, want not-a-query; result %q", rule, eval[string](t, ctx, `document.querySelector("[data-testid=edit-result]").textContent`))
			}
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-result]").textContent`); !strings.Contains(got, "rule not-a-query") {
				t.Errorf("result %q does not name the rule", got)
			}
		})
	}
}
