// @ts-check
// The inspector's capture reader: a worker that reads a capture file the
// reader dropped or picked, in chunks (Blob.slice, CHUNK bytes), feeds them
// to the Go reader (querylens.captureFeed, wasm/capture.go) and sends the
// page the rows of the datagram list in batches. The page keeps the rows
// only (48 bytes each, wasm/internal/capture's layout); payloads stay in
// the file, and the worker reads the ones the page asks for.
//
//   page → worker  {type: "open", file: File, glue, wasm, ql}  the URLs of
//                      wasm_exec.js and ql.js as the page resolved them, and the
//                      module (compiled by the page, or its URL)
//                  {type: "payloads", id, want: [{row, offset, length, tcp}]}  offset -1: kept by the reader
//                      (a datagram put back together from fragments, or a TCP turn: tcp)
//                  {type: "cancel"}
//   worker → page  {type: "start", protocols, rowSize, size}
//                  {type: "rows", rows: ArrayBuffer (transferred), n, endpoints, kinds, stats, read}
//                  {type: "done", stats, error?, ms}
//                  {type: "payloads", id, data: Uint8Array[]} / {type: "payloads", id, error}
//                  {type: "fatal", message}

const CHUNK = 1 << 20;
// Rows per call into Go, and the longest the worker batches rows before
// posting them (so the page draws progress without a message per call).
const ROWS_PER_CALL = 8192;
const POST_MS = 250;

/** @type {any} */
let ql = null;
/** @type {File|null} */
let file = null;
let handle = 0;
let cancelled = false;
// Each open counts one up; a reading whose count is no longer the latest
// (another file was opened meanwhile) stops without posting more.
let generation = 0;

/** @param {any} msg @param {Transferable[]} [transfer] */
const post = (msg, transfer) => /** @type {any} */ (self).postMessage(msg, transfer ?? []);

self.onmessage = async (/** @type {MessageEvent} */ e) => {
  const m = e.data;
  try {
    switch (m.type) {
      case "open":
        await open(m);
        return;
      case "payloads":
        post({ type: "payloads", id: m.id, data: await payloads(m.want) });
        return;
      case "cancel":
        cancelled = true;
        return;
    }
  } catch (err) {
    if (m.type === "payloads") post({ type: "payloads", id: m.id, error: String(err?.message ?? err) });
    else post({ type: "fatal", message: String(err?.message ?? err) });
  }
};

/**
 * open starts the decoder (once) and reads the whole file.
 * @param {{file: File, glue: string, wasm: string|WebAssembly.Module, ql: string}} m
 */
async function open(m) {
  if (!ql) {
    const Q = await import(m.ql);
    ql = await Q.loadDecoder(m.glue, m.wasm);
  }
  if (handle) ql.captureClose(handle);
  const gen = ++generation;
  file = m.file;
  cancelled = false;
  const t0 = performance.now();
  const o = ql.captureOpen();
  handle = o.handle;
  const h = handle;
  const f = file;
  post({ type: "start", protocols: o.protocols, rowSize: o.rowSize, size: file.size });
  /** @type {Uint8Array[]} */
  let parts = [];
  let n = 0;
  let endpoints = [];
  let kinds = [];
  let stats = null;
  let last = performance.now();
  let read = 0;
  const flush = () => {
    if (!n && !endpoints.length) return;
    const rows = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) { rows.set(p, at); at += p.length; }
    post({ type: "rows", rows: rows.buffer, n, endpoints, kinds, stats, read }, [rows.buffer]);
    parts = [];
    n = 0;
    endpoints = [];
    kinds = [];
    last = performance.now();
  };
  for (let off = 0; off < f.size && !cancelled; off += CHUNK) {
    const chunk = new Uint8Array(await f.slice(off, off + CHUNK).arrayBuffer());
    if (gen !== generation) return;
    read = off + chunk.length;
    ql.captureFeed(h, chunk);
    for (;;) {
      const r = ql.captureNext(h, ROWS_PER_CALL);
      if (r.n) parts.push(r.rows);
      n += r.n;
      for (const x of r.endpoints) endpoints.push(x);
      for (const x of r.kinds) kinds.push(x);
      stats = r.stats;
      if (r.error) {
        flush();
        post({ type: "done", stats: r.stats, error: r.error, ms: performance.now() - t0 });
        return;
      }
      if (r.more) break;
    }
    if (performance.now() - last > POST_MS) flush();
  }
  flush();
  const end = cancelled ? { stats, error: { message: "cancelled" } } : ql.captureEnd(h);
  let final = end.stats;
  if (!cancelled) {
    // The TCP turns still open when the file ends are over now: their
    // rows come after the end (captureNext until it has none).
    for (;;) {
      const r = ql.captureNext(h, ROWS_PER_CALL);
      if (r.n) parts.push(r.rows);
      n += r.n;
      for (const x of r.endpoints ?? []) endpoints.push(x);
      for (const x of r.kinds ?? []) kinds.push(x);
      if (r.stats) final = stats = r.stats;
      if (!r.n || r.error) break;
    }
    flush();
  }
  post({ type: "done", stats: final, error: end.error ?? null, ms: performance.now() - t0 });
}

/**
 * payloads reads the asked payloads: from the file at their offsets, or
 * from the reader for those it kept (offset -1).
 * @param {{row: number, offset: number, length: number, tcp?: boolean}[]} want
 */
async function payloads(want) {
  if (!file) throw new Error("no capture is open");
  const out = [];
  for (const w of want) {
    if (w.offset < 0) {
      const b = ql.capturePayload(handle, w.row);
      if (!b) throw new Error(w.tcp ? `the bytes of TCP turn ${w.row + 1} were not kept (the capture's TCP turns passed the reader's limit)` : `the payload of row ${w.row + 1} was not kept (the capture's reassembled datagrams passed the reader's limit)`);
      out.push(b);
    } else {
      out.push(new Uint8Array(await file.slice(w.offset, w.offset + w.length).arrayBuffer()));
    }
  }
  return out;
}

export {};
