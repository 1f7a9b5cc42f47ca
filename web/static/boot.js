// @ts-check
// Starts the server browser's decoding worker as early as the page allows.
// The layout loads this module async and it imports nothing, so it runs as
// soon as it arrives, before the page's own script and its imports: it
// creates the worker, tells it which modules to import, and compiles the
// wasm module while it downloads (the fetch matches the page's
// <link rel=preload>) to post it to the worker. live.js adopts the worker
// (DecodeWorker.shared()).

const root = document.documentElement;
performance.mark("ql-worker-created");

/** The page's decoding worker (worker.js), running from the start. */
export const worker = new Worker(import.meta.resolve("./worker.js"), { type: "module", name: "querylens decoder" });

/**
 * failure holds why the worker could not start, if it failed before
 * live.js listened (a script error in the worker, a failed compile).
 * @type {{message: string}|null}
 */
export let failure = null;
/** @type {((message: string) => void)|null} */
let onFailure = null;

/**
 * whenFailed calls f with the reason the worker or the compile failed,
 * now if it failed already.
 * @param {(message: string) => void} f
 */
export function whenFailed(f) {
  onFailure = f;
  if (failure) f(failure.message);
}

/** @param {string} message */
function fail(message) {
  if (failure) return;
  failure = { message };
  onFailure?.(message);
}

worker.addEventListener("error", (e) => fail(`the decoding worker failed: ${e.message || "it did not start"}`));
worker.postMessage({
  type: "prepare",
  glue: new URL(root.dataset.wasmGlue ?? "", location.href).href,
  modules: { ql: import.meta.resolve("./ql.js"), relay: import.meta.resolve("./relay.js") },
});

(async () => {
  const url = root.dataset.wasm ?? "";
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`the decoder did not load (${resp.status}): ${(await resp.text()).trim()}`);
  worker.postMessage({ type: "module", module: await WebAssembly.compileStreaming(resp) });
})().catch((err) => fail(String(err?.message ?? err)));
