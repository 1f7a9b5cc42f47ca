// @ts-check
// Shared helpers of the querylens pages: the wasm decoder loader, hex,
// text and DOM utilities, and the relay indicator in the header.

let decoderPromise;
/** @type {WebAssembly.Module|null} */
let compiled = null;

/**
 * compiledDecoder is the module loadDecoder compiled (null before), which
 * a worker can instantiate again without compiling it (the inspector's
 * capture reader).
 */
export function compiledDecoder() {
  return compiled;
}

/**
 * loadDecoder starts the wasm module and resolves to globalThis.querylens
 * (see querylens.d.ts). It runs on the page or in a worker: glue is the URL
 * of wasm_exec.js; wasm is the module's URL, fetched and compiled as it
 * streams, or a module compiled already (boot.js compiles the server
 * browser's while it downloads).
 * @param {string} glue
 * @param {string|WebAssembly.Module} wasm
 * @returns {Promise<import("./querylens").QueryLens>}
 */
export async function loadDecoder(glue, wasm) {
  try {
    await import(glue);
  } catch (e) {
    throw new Error(`the decoder's JS glue (${glue}) did not load: the server was built without bash scripts/build-wasm.sh`);
  }
  const go = new globalThis.Go();
  let instance;
  if (wasm instanceof WebAssembly.Module) {
    instance = await WebAssembly.instantiate(wasm, go.importObject);
    compiled = wasm;
  } else {
    const r = await WebAssembly.instantiateStreaming(await fetchDecoder(wasm), go.importObject);
    instance = r.instance;
    compiled = r.module;
  }
  // run() executes main up to its first blocking point, which is after
  // globalThis.querylens is set; the promise it returns only settles if
  // the program exits. Each module instance sets globalThis.querylens: the
  // namespace is taken and what was there put back, so that several
  // modules (the decoding worker's protocol families) live side by side,
  // and the global stays the first one's.
  const before = globalThis.querylens;
  globalThis.querylens = undefined;
  go.run(instance).then(() => console.error("querylens decoder exited"));
  const ql = globalThis.querylens;
  globalThis.querylens = before ?? ql;
  if (!ql) throw new Error("the decoder started but registered nothing");
  attachBatch(ql, instance.exports);
  return ql;
}

/**
 * attachBatch puts the module's batch exports (go:wasmexport in
 * wasm/conversation.go, plain calls without syscall/js) on the namespace:
 * querylens.in, the module's memory where a batch's requests are written;
 * querylens.batch(n), which runs the first n bytes of them and returns the
 * length of the JSON array of results, or -1 when n is outside in; and
 * querylens.out, that JSON. Each access makes a new view: the module's
 * memory moves when it grows.
 * @param {any} ql
 * @param {WebAssembly.Exports} exports
 */
export function attachBatch(ql, exports) {
  const x = /** @type {any} */ (exports);
  const mem = /** @type {WebAssembly.Memory} */ (x.mem);
  const at = x.querylens_in();
  const size = x.querylens_in_size();
  let outLen = 0;
  Object.defineProperties(ql, {
    in: { get: () => new Uint8Array(mem.buffer, at, size) },
    out: { get: () => new Uint8Array(mem.buffer, x.querylens_out(), outLen) },
    batch: {
      value: (/** @type {number} */ n) => {
        const m = x.querylens_batch(n);
        outLen = Math.max(0, m);
        return m;
      },
    },
  });
}

/**
 * fetchDecoder fetches the wasm module (the server sends it precompressed,
 * as application/wasm) and says what went wrong when it cannot.
 * @param {string} url
 */
async function fetchDecoder(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`the decoder did not load (${resp.status}): ${(await resp.text()).trim()}`);
  return resp;
}

/**
 * decoder loads the wasm module once per page, on the page's own thread
 * (the inspector's), and resolves to globalThis.querylens.
 * @returns {Promise<import("./querylens").QueryLens>}
 */
export function decoder() {
  decoderPromise ??= (async () => {
    const root = document.documentElement;
    const t0 = performance.now();
    const ql = await loadDecoder(root.dataset.wasmGlue, root.dataset.wasm);
    performance.measure("ql-decoder-load", { start: t0 });
    return ql;
  })();
  return decoderPromise;
}

let firstDecodeMarked = false;

/** markFirstDecode records, once, when the page decoded its first packet. */
export function markFirstDecode() {
  if (firstDecodeMarked) return;
  firstDecodeMarked = true;
  performance.mark("ql-first-decode");
  globalThis.qlFirstDecodeMs = performance.now();
}

/**
 * $ is document.getElementById, typed loosely: the pages look up their own
 * elements by id and know what they are.
 * @param {string} id
 * @returns {any}
 */
export const $ = (id) => document.getElementById(id);

/**
 * replyTimeout is how long a page waits for one conversation: the relay's
 * reply window (from HELLO, 2 s before it arrives) plus margin ms.
 * @param {{hello?: {replyWindow: number}|null}|null|undefined} relay
 * @param {number} margin
 */
export function replyTimeout(relay, margin) {
  return (relay?.hello?.replyWindow ?? 2000) + margin;
}

/**
 * download offers data to the reader as a file named name.
 * @param {BlobPart} data
 * @param {string} type the MIME type
 * @param {string} name
 */
export function download(data, type, name) {
  const a = /** @type {HTMLAnchorElement} */ (h("a", { href: URL.createObjectURL(new Blob([data], { type })), download: name }));
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

/** config returns the JSON the server put in #ql-config. */
export function config() {
  const el = document.getElementById("ql-config");
  return el ? JSON.parse(el.textContent) : {};
}

const hexChars = "0123456789abcdef";

/** toHex formats bytes as lowercase hex without separators. */
export function toHex(bytes) {
  let s = "";
  for (const b of bytes) s += hexChars[b >> 4] + hexChars[b & 15];
  return s;
}

/**
 * parseHex reads hex that may contain spaces, colons, commas, "0x"
 * prefixes and line breaks. It throws with the position of a bad character.
 */
export function parseHex(text) {
  const clean = text.replace(/0x/gi, "").replace(/[\s:,;_-]/g, "");
  const bad = clean.search(/[^0-9a-fA-F]/);
  if (bad >= 0) throw new Error(`not hex: ${JSON.stringify(clean[bad])}`);
  if (clean.length % 2) throw new Error("odd number of hex digits");
  return fromHex(clean);
}

/** HEX is the value of each hex digit by its character code (0 for any other below 128). */
const HEX = new Uint8Array(128);
for (const [i, c] of [...hexChars].entries()) HEX[c.charCodeAt(0)] = HEX[c.toUpperCase().charCodeAt(0)] = i;

/**
 * fromHex reads hex known to be well formed (the decoder's, or text
 * parseHex checked): a digit pair a byte, either case; a character that
 * is no hex digit reads as 0, a last odd digit is dropped. By a table
 * rather than parseInt of each pair: a thousand conversations read some
 * 6,000 datagrams at the start of a refresh.
 * @param {string} hex
 */
export function fromHex(hex) {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0, j = 0; i < out.length; i++, j += 2) out[i] = (HEX[hex.charCodeAt(j)] << 4) | HEX[hex.charCodeAt(j + 1)];
  return out;
}

const escapes = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** esc escapes text for HTML element content and quoted attributes. */
export function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => escapes[c]);
}

/** h creates an element: h("a", {href: "/", class: "x"}, "text", child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === false || v == null) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** copyText copies to the clipboard, falling back for insecure origins. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = h("textarea", { class: "sr-only" }, text);
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok;
  }
}

/**
 * wireCopyButtons makes every [data-copy] button under root copy its value.
 * @param {ParentNode} [root]
 */
export function wireCopyButtons(root = document) {
  for (const b of root.querySelectorAll("button[data-copy]")) {
    if (!(b instanceof HTMLButtonElement)) continue;
    b.addEventListener("click", async () => {
      const label = b.textContent;
      b.textContent = (await copyText(b.dataset.copy)) ? "Copied" : "Copy failed";
      setTimeout(() => (b.textContent = label), 1500);
    });
  }
}

/**
 * showRelay keeps the header's relay indicator up to date: the page's
 * round trip to the relay (PING/PONG), shown once and apart from server
 * pings, which are the relay's own round trips to the game servers.
 */
export function showRelay(relay) {
  const box = document.getElementById("top-status");
  if (!box) return;
  const set = (cls, text, title) => {
    box.replaceChildren(h("span", { class: `dot ${cls}`, "aria-hidden": "true" }), h("span", { title }, text));
  };
  set("wait", "relay: connecting…", "Connecting to the relay");
  relay.addEventListener("open", async () => {
    set("ok", "relay: connected", "Connected to the relay");
    try {
      const ms = await relay.ping();
      set("ok", `relay: ${ms < 1 ? ms.toFixed(1) : Math.round(ms)} ms`, "Round trip from this page to the relay (WebSocket PING/PONG). Server pings in the table are measured by the relay.");
    } catch { /* the close handler says what happened */ }
  });
  relay.addEventListener("close", (e) => set("bad", "relay: offline", e.detail?.reason || "The relay connection closed"));
}

/** showFatal puts an error where the page's content goes. */
export function showFatal(where, err) {
  const p = h("p", { class: "notice notice-malformed", role: "alert", "data-testid": "fatal" }, String(err.message ?? err));
  where.prepend(p);
  console.error(err);
}

/**
 * fetchFragment fetches server-rendered HTML (a fragment the page already
 * shows, rendered again by the same template) and returns the response with
 * the first element matching selector in it: el is null when the answer is
 * refused (resp.ok false) or holds no such element. A network failure
 * rejects.
 * @param {string} url
 * @param {string} selector
 * @param {RequestInit} [init]
 * @returns {Promise<{resp: Response, el: HTMLElement|null}>}
 */
export async function fetchFragment(url, selector, init) {
  const resp = await fetch(url, init);
  if (!resp.ok) return { resp, el: null };
  const tpl = document.createElement("template");
  tpl.innerHTML = await resp.text();
  return { resp, el: /** @type {HTMLElement|null} */ (tpl.content.querySelector(selector)) };
}

/** ago formats a duration in ms as "12 s" / "3 min". */
export function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 90 ? `${s} s` : `${Math.round(s / 60)} min`;
}
