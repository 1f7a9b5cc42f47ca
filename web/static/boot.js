// @ts-check
// Starts the server browser's decoding worker while the page is still being
// parsed. The layout inlines this file as a classic script at the top of
// <head> (the page's Content-Security-Policy allows it by its hash), so it
// runs before the stylesheet, the page's modules or anything else has
// loaded. It creates the worker and tells it, in its name, what to import,
// where the relay is, what to ask first and which browser modules hold
// which protocols (<html data-boot>, from the layout), and compiles the
// first module (the one holding the page's masters' and servers'
// protocols) while it downloads, to post it to the worker, which loads the
// others when a row needs them. It also starts the worker that orders the
// rows (view.js), when the page has one.
// The worker's messages are kept until live.js adopts it
// (DecodeWorker.shared(), globalThis.querylensBoot).

/**
 * @typedef {{worker: Worker, viewer: Worker|null, failure: {message: string}|null,
 *   early: MessageEvent[], whenFailed: (f: (message: string) => void) => void}} QueryLensBoot
 */

{
  const raw = document.documentElement.dataset.boot ?? "{}";
  const b = JSON.parse(raw);
  performance.mark("ql-worker-created");
  // The worker is told what to do first (<html data-boot>, as the layout
  // wrote it) in its name, not in a message: a message posted before the
  // worker's script has run waits until this thread hears that it has,
  // and this thread is then busy with the page's first parse, style and
  // layout (~100 ms at start, more on a busy machine); the worker reads its
  // name in its first task. The URLs in it are the server's root-relative
  // ones, which the worker resolves alike.
  const worker = new Worker(b.worker, { type: "module", name: `querylens decoder ${raw}` });
  /** @type {((message: string) => void)|null} */
  let onFailure = null;
  /** @type {QueryLensBoot} */
  const boot = {
    worker,
    // The worker that orders the rows (view.js), when the page has one
    // (<html data-boot> view): started here, it has run by the time the
    // page's script first asks it, which then adopts it.
    viewer: b.view ? new Worker(b.view, { type: "module", name: "querylens view" }) : null,
    // Why the worker could not start, if it failed before live.js
    // listened (a script error in the worker, a failed compile).
    failure: null,
    // What the worker said before live.js took it over.
    early: [],
    // whenFailed calls f with the reason the worker or the compile
    // failed, now if it failed already.
    whenFailed(f) {
      onFailure = f;
      if (boot.failure) f(boot.failure.message);
    },
  };
  /** @param {string} message */
  const fail = (message) => {
    if (boot.failure) return;
    boot.failure = { message };
    onFailure?.(message);
  };
  worker.onmessage = (e) => boot.early.push(e);
  worker.addEventListener("error", (e) => fail(`the decoding worker failed: ${e.message || "it did not start"}`));
  /** @type {any} */ (globalThis).querylensBoot = boot;
  // A protocol family's module is fetched and compiled by the worker
  // itself (compile: "worker"); the combined module is compiled here.
  if (b.compile !== "worker") fetch(b.wasm)
    .then(async (resp) => {
      if (!resp.ok) throw new Error(`the decoder did not load (${resp.status}): ${(await resp.text()).trim()}`);
      return WebAssembly.compileStreaming(resp);
    })
    .then((module) => {
      performance.mark("ql-wasm-compiled");
      worker.postMessage({ type: "module", module });
    })
    .catch((err) => fail(String(err?.message ?? err)));
}
