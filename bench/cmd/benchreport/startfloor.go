package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
)

// floorSite is the start section's floor: a minimal page and worker, on a
// loopback HTTP server of this process, that do what the browser page does
// before its first decode, with an empty Go program
// (bench/internal/floorwasm) in place of the browser module. The page
// creates the worker and compiles the module while it downloads
// (WebAssembly.compileStreaming of a preloaded fetch, as boot.js), posts it
// to the worker; the worker imports wasm_exec.js, instantiates the module
// and runs Go, and opens the relay WebSocket of a `querylens serve` meanwhile;
// once both are ready it sends one QUERY (the page's first: the demo
// master's list), hands the first REPLY to the Go program's decode and
// posts the result to the page, which sets qlFirstDecodeMs. The page
// exposes the same marks and worker times as the browser page, so
// startScript reads its timeline.
type floorSite struct {
	url   string // the page
	files map[string]floorFile
	boot  map[string]string // the page's hashed URLs
	srv   *http.Server
	wasm  int // the module's bytes, uncompressed
	br    int // and brotli, as served
}

type floorFile struct {
	ctype, coding string
	body          []byte
	immutable     bool
}

// newFloorSite builds the floor's module and starts its server on ln,
// whose address the `querylens serve` of the relay allows as an origin
// (--allow-origin); setTarget then writes the page.
func (e *env) newFloorSite(ctx context.Context, ln net.Listener) (*floorSite, error) {
	dir := filepath.Join(e.tmp, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	wasm := filepath.Join(dir, "floor.wasm")
	if err := e.buildWasm(ctx, "./bench/internal/floorwasm", "", wasm); err != nil {
		return nil, err
	}
	// The same encoder and settings as the browser module's.
	if _, err := e.command(ctx, nil, "go", "run", "./internal/cmd/precompress", "-in", wasm, "-dir", dir, "-build", "benchreport floor"); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(wasm)
	if err != nil {
		return nil, err
	}
	br, err := os.ReadFile(filepath.Join(dir, "querylens.wasm.br"))
	if err != nil {
		return nil, err
	}
	glue, err := os.ReadFile(filepath.Join(e.root, "web", "static", "wasm_exec.js"))
	if err != nil {
		return nil, err
	}
	f := &floorSite{files: map[string]floorFile{}, wasm: len(raw), br: len(br)}
	hashed := func(name, ext, ctype, coding string, body []byte) string {
		sum := sha256.Sum256(body)
		p := "/" + name + "." + hex.EncodeToString(sum[:6]) + ext
		f.files[p] = floorFile{ctype: ctype, coding: coding, body: body, immutable: true}
		return p
	}
	f.files["/"] = floorFile{} // set by page()
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	f.url = "http://" + ln.Addr().String() + "/"
	f.boot = map[string]string{
		"worker": hashed("worker", ".js", "text/javascript; charset=utf-8", "", []byte(floorWorker)),
		"glue":   hashed("wasm_exec", ".js", "text/javascript; charset=utf-8", "", glue),
		"wasm":   hashed("querylens.floor", ".wasm", "application/wasm", "br", br),
	}
	go f.srv.Serve(ln)
	return f, nil
}

// setTarget writes the page: the relay to use and the first query.
func (f *floorSite) setTarget(relayURL, master string) error {
	c, err := codecs.Lookup("zandronum")
	if err != nil {
		return err
	}
	q, err := c.NewQuery(map[string]string{"master": "true"})
	if err != nil {
		return err
	}
	start := q.Start()
	if len(start) != 1 {
		return fmt.Errorf("the Zandronum master query starts with %d datagrams, not 1", len(start))
	}
	boot := map[string]string{"relay": relayURL, "protocol": "zandronum", "target": master, "datagram": hex.EncodeToString(start[0])}
	for k, v := range f.boot {
		boot[k] = v
	}
	b, err := json.Marshal(boot)
	if err != nil {
		return err
	}
	page := strings.NewReplacer("{{boot}}", htmlAttr(string(b)), "{{wasm}}", f.boot["wasm"]).Replace(floorPage)
	f.files["/"] = floorFile{ctype: "text/html; charset=utf-8", body: []byte(page)}
	return nil
}

func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (f *floorSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x, ok := f.files[r.URL.Path]
	if !ok || x.body == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", x.ctype)
	// Isolated as the browser page is (layout.RenderPage, web/assets.go).
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	if x.coding != "" {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), x.coding) {
			http.Error(w, "the floor's module is served "+x.coding+" only", http.StatusNotAcceptable)
			return
		}
		h.Set("Content-Encoding", x.coding)
		h.Set("Vary", "Accept-Encoding")
	}
	sum := sha256.Sum256(x.body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	h.Set("ETag", etag)
	if x.immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", fmt.Sprint(len(x.body)))
	w.Write(x.body)
}

func (f *floorSite) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		f.srv.Close()
	}
}

// floorPage is the floor's page: its script does what boot.js and the
// page's handling of the worker's first messages (live.js) do.
const floorPage = `<!doctype html>
<html lang="en" data-boot="{{boot}}">
<head>
<meta charset="utf-8">
<title>querylens start floor</title>
<link rel="preload" href="{{wasm}}" as="fetch" type="application/wasm" crossorigin="anonymous">
<script>
{
  const b = JSON.parse(document.documentElement.dataset.boot);
  const abs = (u) => new URL(u, location.href).href;
  performance.mark("ql-worker-created");
  const worker = new Worker(abs(b.worker), { type: "module", name: "querylens floor" });
  let times = {};
  const place = (t) => (times = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v - performance.timeOrigin])));
  globalThis.querylensBrowse = { stats: () => ({ times }) };
  worker.onmessage = (e) => {
    const m = e.data;
    switch (m.type) {
      case "open": performance.mark("ql-relay-hello"); return;
      case "ready": place(m.times); performance.mark("ql-decoder-ready"); return;
      case "results":
        place(m.times);
        globalThis.qlFloorResult = m.result;
        globalThis.qlFirstDecodeMs = performance.now();
        return;
      case "fatal": globalThis.qlFloorFailure = m.message; return;
    }
  };
  worker.postMessage({ type: "prepare", glue: abs(b.glue), relay: b.relay, protocol: b.protocol, target: b.target, datagram: b.datagram });
  fetch(b.wasm)
    .then((resp) => WebAssembly.compileStreaming(resp))
    .then((module) => {
      performance.mark("ql-wasm-compiled");
      worker.postMessage({ type: "module", module });
    })
    .catch((err) => (globalThis.qlFloorFailure = String(err?.message ?? err)));
}
</script>
</head>
<body><p>start floor</p></body>
</html>
`

// floorWorker is the floor's worker: the start of web/static/worker.js
// with a minimal relay client (querylens.relay.v1: HELLO, one QUERY, its
// first REPLY) and the floor program in place of the decoder.
const floorWorker = `const times = { script: now() };
function now() { return performance.timeOrigin + performance.now(); }
let gotModule;
const moduleReady = new Promise((resolve) => (gotModule = resolve));
const post = (m) => self.postMessage(m);
const fatal = (err) => post({ type: "fatal", message: String(err?.message ?? err) });
self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "module") gotModule(m.module);
  if (m.type === "prepare") prepare(m);
};
function prepare(m) {
  const glue = import(m.glue).then(() => (times.modules = now()));
  const decoder = Promise.all([glue, moduleReady]).then(async ([, mod]) => {
    times.module = now();
    const go = new Go();
    const inst = await WebAssembly.instantiate(mod, go.importObject);
    go.run(inst);
    times.decoder = now();
    return globalThis.qlFloor;
  });
  let onReply = null;
  const relay = new Promise((resolve, reject) => {
    const ws = new WebSocket(m.relay, ["querylens.relay.v1"]);
    ws.binaryType = "arraybuffer";
    ws.onmessage = (ev) => {
      const v = new DataView(ev.data);
      switch (v.getUint8(0)) {
        case 0x80:
          times.open = now();
          post({ type: "open" });
          resolve(ws);
          return;
        case 0x81:
          if (v.getUint32(1) === 1 && onReply) onReply(new Uint8Array(ev.data, 10));
          return;
        case 0x83:
          fatal("relay error " + v.getUint8(5) + ": " + new TextDecoder().decode(new Uint8Array(ev.data, 8)));
          return;
      }
    };
    ws.onclose = (ev) => reject(new Error("relay closed: " + ev.code + " " + ev.reason));
  });
  Promise.all([decoder, relay]).then(([ql, ws]) => {
    post({ type: "ready", times });
    onReply = (datagram) => {
      onReply = null;
      const result = ql.decode(datagram);
      times.firstResults = now();
      post({ type: "results", result: { bytes: result.bytes, first: result.first }, times });
    };
    const enc = new TextEncoder();
    const p = enc.encode(m.protocol), t = enc.encode(m.target);
    const d = Uint8Array.from(m.datagram.match(/../g).map((h) => parseInt(h, 16)));
    const f = new Uint8Array(1 + 4 + 1 + p.length + 1 + t.length + d.length);
    f[0] = 0x01;
    new DataView(f.buffer).setUint32(1, 1);
    let o = 5;
    f[o++] = p.length; f.set(p, o); o += p.length;
    f[o++] = t.length; f.set(t, o); o += t.length;
    f.set(d, o);
    ws.send(f);
  }, fatal);
}
`
