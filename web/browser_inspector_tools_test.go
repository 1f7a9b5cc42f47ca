package web_test

import (
	"context"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/pcapng"
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

// writeCapture writes a pcapng file of n exchanges with the writer the
// inspector exports with: an A2S_INFO query to one of a few servers and
// its answer, and returns its path.
func writeCapture(t *testing.T, n int) string {
	t.Helper()
	query, _ := hex.DecodeString(a2sInfo)
	// codecs/a2s/testdata/info_source_plain.hexlines
	info, _ := hex.DecodeString("ffffffff4911c39c6ec3af636f64652053657276657220c2b72032666f7274006374665f32666f7274007466005465616d20466f72747265737300b801141802646c01013935343333363500")
	pkts := make([]pcapng.Packet, 0, 2*n)
	for i := range n {
		srv, _ := pcapng.ParseEndpoint("10.0." + strconv.Itoa(i%7) + ".1:27015")
		us := int64(1_700_000_000_000_000 + i*1000)
		pkts = append(pkts, pcapng.Packet{Micros: us, Direction: pcapng.Sent, Target: srv, Data: query},
			pcapng.Packet{Micros: us + 300, Direction: pcapng.Received, Target: srv, Data: info})
	}
	path := filepath.Join(t.TempDir(), "exchanges.pcapng")
	if err := os.WriteFile(path, pcapng.Append(nil, "querylens test", pkts), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// openCaptureFile picks path in the page's file input and waits until the
// worker has read it all.
func openCaptureFile(t *testing.T, ctx context.Context, path string, timeout time.Duration) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(`[data-testid=capture-file]`, []string{path})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the capture to be read", `document.querySelector("[data-testid=capture-status]").dataset.done === "true"`, timeout)
}

// TestBrowserInspectOpenCapture opens a small capture our writer made: the
// list shows every datagram, protocol and kind by the reader's guess, a
// reply names the query it answers, and the selected datagram decodes
// into its fields; a permalink of it opens the same datagram.
func TestBrowserInspectOpenCapture(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	path := writeCapture(t, 20)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ctx := tab(t)
			openInspector(t, ctx, st.URL+"/inspect#h=00", vp.w, vp.h)
			openCaptureFile(t, ctx, path, 30*time.Second)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=capture-status]").textContent`); !strings.Contains(got, "40 UDP datagrams of 40 frames") || strings.Contains(got, "✖") {
				t.Errorf("status %q, want 40 UDP datagrams of 40 frames", got)
			}
			if n := eval[int](t, ctx, `querylensInspect.capture().rows`); n != 40 {
				t.Errorf("%d rows, want 40", n)
			}
			cells := eval[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=capture-row]")[1].children].map(c => c.textContent)`)
			if len(cells) < 8 || cells[0] != "2" || cells[2] != "10.0.0.1:27015" || cells[4] != "a2s" || cells[5] != "response" || cells[7] != "↩ #1" {
				t.Errorf("second row %q, want frame 2 from 10.0.0.1:27015, a2s response answering #1", cells)
			}
			eval[bool](t, ctx, `(document.querySelectorAll("[data-testid=capture-row]")[1].click(), true)`)
			waitFor(t, ctx, "the datagram's fields", `querylensInspect.capture().shown?.label === "frame 2" && [...document.querySelectorAll("[data-testid=tree-row] .fn")].some(e => e.textContent === "name")`, 10*time.Second)
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=decode-status]").textContent`); !strings.Contains(got, "a2s response") {
				t.Errorf("decode status %q", got)
			}
			// Decode as another protocol: the conversation's rows say so.
			eval[bool](t, ctx, `(() => { const s = document.querySelector("[data-testid=capture-as]"); s.value = "quake3"; s.dispatchEvent(new Event("change")); return true; })()`)
			waitFor(t, ctx, "decode as", `document.querySelectorAll("[data-testid=capture-row]")[0].children[4].textContent === "quake3"`, 5*time.Second)
			eval[bool](t, ctx, `(() => { const s = document.querySelector("[data-testid=capture-as]"); s.value = ""; s.dispatchEvent(new Event("change")); return true; })()`)
			waitFor(t, ctx, "decode as undone", `document.querySelectorAll("[data-testid=capture-row]")[0].children[4].textContent === "a2s"`, 5*time.Second)
			// The permalink carries the answer and its query.
			link := eval[string](t, ctx, `querylensInspect.permalink()`)
			if !strings.Contains(link, "q="+a2sInfo) || !strings.Contains(link, "t=10.0.0.1%3A27015") {
				t.Errorf("permalink %s", link)
			}
			openInspector(t, ctx, st.URL+"/inspect?again=1"+link[strings.Index(link, "#"):], vp.w, vp.h)
			dirsJS := `[...document.querySelectorAll("[data-testid=packet-row] td:nth-child(3)")].map(td => td.className.replace("dir-", ""))`
			if got := eval[[]string](t, ctx, dirsJS); strings.Join(got, " ") != "sent received" {
				t.Errorf("the permalink opens %v, want the query sent and the answer received", got)
			}
		})
	}
}

// captureMB is the size of the large-capture test's file; longTaskBudget,
// when set, makes a main-thread task longer than it fail the test. It is
// off by default: a task's length is wall time, which a loaded machine
// (the tests share two cores with other builds) stretches at will, so the
// test logs what it measured and a quiet machine checks the budget with
// -longtask-budget=50ms.
var (
	captureMB      = flag.Int("capture-mb", 20, "size in MB of the capture TestBrowserInspectLargeCapture opens")
	longTaskBudget = flag.Duration("longtask-budget", 0, "fail TestBrowserInspectLargeCapture on a main-thread task longer than this (0: only log them)")
)

// TestBrowserInspectLargeCapture opens a capture of -capture-mb MB (20 by
// default): the list keeps a bounded number of row elements however many
// datagrams it holds, and a datagram picked in the middle decodes. It logs
// the main-thread tasks over 50 ms from the file's opening on (and checks
// them with -longtask-budget), the page's JS heap and the reading time.
func TestBrowserInspectLargeCapture(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	// One exchange is 2 blocks of (28 + 20 + 8 + payload + padding + 4) bytes.
	exchange := (28 + 28 + 28 + 4) + (28 + 28 + 76 + 4)
	n := *captureMB << 20 / exchange
	path := writeCapture(t, n)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := tab(t)
	openInspector(t, ctx, st.URL+"/inspect#h=00", 1300, 900)
	eval[bool](t, ctx, `(globalThis.longTasks = [], globalThis.t0 = performance.now(), new PerformanceObserver((l) => longTasks.push(...l.getEntries().filter(e => e.startTime >= t0).map(e => e.duration))).observe({type: "longtask"}), true)`)
	base := browserRSS(ctx)
	peak := base
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the browser's memory while it reads, every 100 ms
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				peak = max(peak, browserRSS(ctx))
			}
		}
	}()
	start := time.Now()
	openCaptureFile(t, ctx, path, 5*time.Minute)
	took := time.Since(start)
	close(stop)
	<-sampled
	rows := eval[int](t, ctx, `querylensInspect.capture().rows`)
	if rows != 2*n {
		t.Errorf("%d rows, want %d", rows, 2*n)
	}
	dom := eval[int](t, ctx, `document.querySelectorAll("[data-testid=capture-row]").length`)
	if dom == 0 || dom > 200 {
		t.Errorf("%d row elements for %d rows, want a bounded window", dom, rows)
	}
	// Scroll to the middle and select there: still a window of rows.
	eval[bool](t, ctx, `(document.querySelector("[data-testid=capture-list]").scrollTop = document.querySelector("[data-testid=capture-list]").scrollHeight / 2, true)`)
	waitFor(t, ctx, "rows drawn at the middle", `Number(document.querySelector("[data-testid=capture-row]")?.dataset.row) > 1000`, 5*time.Second)
	eval[bool](t, ctx, `(document.querySelectorAll("[data-testid=capture-row]")[15].click(), true)`)
	waitFor(t, ctx, "the selected datagram decoded", `querylensInspect.capture().shown !== null && document.querySelectorAll("[data-testid=tree-row]").length >= 3`, 10*time.Second)
	if dom := eval[int](t, ctx, `document.querySelectorAll("[data-testid=capture-row]").length`); dom > 200 {
		t.Errorf("%d row elements after scrolling", dom)
	}
	long := eval[[]float64](t, ctx, `longTasks`)
	worst := 0.0
	for _, d := range long {
		worst = max(worst, d)
	}
	heap := eval[float64](t, ctx, `performance.memory?.usedJSHeapSize ?? 0`)
	t.Logf("capture of %.1f MB, %d datagrams: read in %v; %d row elements; %d main-thread tasks over 50 ms, the longest %.0f ms; page JS heap %.1f MB; the browser's processes %.0f MB before, %.0f MB at most while reading (+%.0f MB)",
		float64(fi.Size())/(1<<20), rows, took.Round(time.Millisecond), dom, len(long), worst, heap/(1<<20),
		float64(base)/(1<<20), float64(peak)/(1<<20), float64(peak-base)/(1<<20))
	if b := *longTaskBudget; b > 0 && worst > float64(b.Milliseconds()) {
		t.Errorf("a main-thread task of %.0f ms while the capture was read, over the %v budget", worst, b)
	}
}

// browserRSS is the resident memory of the test browser's processes (the
// browser and its descendants: renderers, the worker's, the GPU process),
// from /proc; 0 where there is none.
func browserRSS(ctx context.Context) int64 {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		return 0
	}
	root := c.Browser.Process().Pid
	parent := map[int]int{}
	rss := map[int]int64{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "PPid:":
				parent[pid], _ = strconv.Atoi(f[1])
			case "VmRSS:":
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				rss[pid] = kb << 10
			}
		}
	}
	var total int64
	for pid, n := range rss {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				total += n
				break
			}
		}
	}
	return total
}

// TestBrowserInspectEditZandronum edits the time field of a Zandronum
// query's payload, which the wire carries Huffman-coded: the datagram is encoded
// again, decodes with the new value, and the relay forwards it to the
// demo's server, which answers.
func TestBrowserInspectEditZandronum(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	target := ""
	for _, tg := range st.Demo.Targets() {
		if tg.Protocol == "zandronum" && tg.Behavior == demo.Normal {
			target = tg.Addr
			break
		}
	}
	if target == "" {
		t.Fatal("the demo has no well-behaved Zandronum server")
	}
	ctx := tab(t)
	openInspector(t, ctx, st.URL+"/inspect#p=zandronum&d=sent&t="+target+"&h=04b8491a9c6c73de32025a0b", 1300, 900)
	eval[bool](t, ctx, `(document.querySelector("[data-testid=edit-selected]").click(), true)`)
	field := `document.querySelector('[data-testid=edit-fields] input[data-field="time"]')`
	if got := eval[string](t, ctx, field+`?.value ?? "none"`); got != "1597643819" {
		t.Fatalf("the payload's time field reads %q, want an input holding 1597643819", got)
	}
	// The flags field (kind flags:SQF) is edited as its number.
	if got := eval[string](t, ctx, `document.querySelector('[data-testid=edit-fields] input[data-field="flags"]')?.dataset.kind ?? "none"`); got != "u32le" {
		t.Errorf("the flags field is edited as %q, want u32le", got)
	}
	before := eval[string](t, ctx, `document.querySelector("[data-testid=edit-hex]").value`)
	eval[bool](t, ctx, `(() => { const i = `+field+`; i.value = "12345"; i.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	if got := eval[string](t, ctx, field+`?.value ?? document.querySelector("[data-testid=edit-status]").textContent + " " + document.querySelector("[data-testid=edit-fields]").textContent`); got != "12345" {
		t.Errorf("after the edit the time decodes as %q, want 12345", got)
	}
	if after := eval[string](t, ctx, `document.querySelector("[data-testid=edit-hex]").value`); after == before {
		t.Error("the wire bytes did not change")
	}
	if got := eval[string](t, ctx, `document.querySelector("[data-testid=edit-status]").textContent`); !strings.Contains(got, "zandronum query") {
		t.Errorf("edit status %q", got)
	}
	eval[bool](t, ctx, `(document.querySelector("[data-testid=edit-send]").click(), true)`)
	waitFor(t, ctx, "the answer", `document.querySelector("[data-testid=edit-result]").className.includes("ok")`, 20*time.Second)
}

// TestBrowserInspectDemoCaptures opens the captures of demo traffic that
// tcpdump and dumpcap made (pcapng/testdata/captures: Ethernet in pcap and
// pcapng, Linux cooked v2): the list holds as many datagrams as tshark
// found UDP frames (the .udp files), the reader's guesses name the demo's
// protocols, and a Zandronum reply decodes.
func TestBrowserInspectDemoCaptures(t *testing.T) {
	needWasm(t)
	st := startStack(t, 1)
	ctx := tab(t)
	openInspector(t, ctx, st.URL+"/inspect#h=00", 1300, 900)
	for _, name := range []string{"demo-tcpdump.pcap", "demo-tcpdump-any.pcap", "demo-dumpcap.pcapng"} {
		t.Run(name, func(t *testing.T) {
			path, err := filepath.Abs(filepath.Join("..", "pcapng", "testdata", "captures", name))
			if err != nil {
				t.Fatal(err)
			}
			udp, err := os.ReadFile(path + ".udp")
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, line := range strings.Split(string(udp), "\n") {
				if line != "" && !strings.HasPrefix(line, "#") {
					want++
				}
			}
			openCaptureFile(t, ctx, path, 30*time.Second)
			if got := eval[int](t, ctx, `querylensInspect.capture().rows`); got != want {
				t.Errorf("%d datagrams, want %d (tshark's UDP frames)", got, want)
			}
			if got := eval[string](t, ctx, `document.querySelector("[data-testid=capture-status]").textContent`); strings.Contains(got, "✖") {
				t.Errorf("status %q", got)
			}
			protos := eval[[]string](t, ctx, `(() => { const c = querylensInspect.captureView(); const s = new Set(); for (let i = 0; i < c.n; i++) s.add(c.protocolOf(c.get(i)) ?? "?"); return [...s].sort(); })()`)
			for _, p := range []string{"a2s", "bloodmasters", "gamespy1", "gamespy2", "gamespy3", "ogp", "quake3", "zandronum"} {
				if !strings.Contains(strings.Join(protos, " "), p) {
					t.Errorf("protocols guessed %v, no %s", protos, p)
				}
			}
			row := eval[int](t, ctx, `(() => { const c = querylensInspect.captureView(); for (let i = 0; i < c.n; i++) { const r = c.get(i); if (c.protocolOf(r) === "zandronum" && c.kindOf(r) === "response") return i; } return -1; })()`)
			if row < 0 {
				t.Fatal("no Zandronum response in the list")
			}
			eval[bool](t, ctx, `(querylensInspect.selectCapture(`+strconv.Itoa(row)+`), true)`)
			waitFor(t, ctx, "the Zandronum response decoded", `querylensInspect.capture().selected === `+strconv.Itoa(row)+` && querylensInspect.capture().shown !== null && document.querySelector("[data-testid=decode-status]").textContent.startsWith("zandronum response")`, 10*time.Second)
		})
	}
}
