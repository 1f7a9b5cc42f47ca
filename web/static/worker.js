// @ts-check
// The server browser's second thread: it owns the relay WebSocket and the
// wasm decoders, runs every conversation, and sends the page compact row
// updates in batches, so the page's own thread only draws the table.
//
//   page → worker  {type: "prepare", glue, modules: {ql, relay}, first, decoders: {combined, protocols}, relay, asks}
//                      import, start the first decoder, connect to the relay's
//                      path (if given) and run asks as soon as both are ready
//                  {type: "module", module}  the first module (first), compiled by the page
//                  {type: "connect", relay}  the relay's path: connect (once), then run asks
//                  {type: "ask", asks: [{key, protocol, target, options, timeoutMs}]}
//                      (an ask whose key prepare asked already is dropped, once)
//                  {type: "ping", id}
//                  {type: "model", id, call, args}  the server model the module
//                      exports (querylens.ref, hostPort, detectOrder), once it is ready
//   worker → page  {type: "open", hello} / {type: "close", reason}
//                  {type: "ready", hello, times, modules} / {type: "fatal", message}
//                  {type: "results", results: Result[], stats, times}  (at most one per BATCH_MS)
//                  {type: "pong", id, ms} / {type: "pong", id, error}
//                  {type: "model", id, result}  what the call returned (a Failure as data)
//
// The decoders: the page's first module (a protocol family's, or the
// combined one with every family: the layout chose it from the page's
// masters and servers, and boot.js compiled it while it downloaded) runs
// at once; a row of a protocol it lacks loads that protocol's family module
// (decoders.protocols) into this worker, beside it, or, once
// MAX_FAMILY_MODULES family modules are in, the combined module, which then
// decodes every protocol no loaded family module has. Detection
// (detectOrder) uses the combined module. Each module is its own Go
// instance with its own Batch; all share the one relay connection.
//
// Modules are imported by the URLs the page resolved (its import map
// maps them to content-hashed names, which a worker cannot see).

/**
 * @typedef {{key: string, protocol: string, target: string,
 *   options: Record<string, string>|null, timeoutMs: number}} Ask
 * @typedef {{key: string, state: string, detail: string, rtt: number|null,
 *   cached: boolean, row: any[]|null, servers: string[]|null,
 *   received: string[]|null}} Result
 */

const BATCH_MS = 16;

/**
 * MAX_FAMILY_MODULES is how many family modules one worker loads before it
 * loads the combined module instead. A family module is 66-71% of the
 * combined one (brotli): with one in, a second is less to download and
 * compile than the combined module. Past that the combined module bounds
 * the cost: at most two family modules and the combined one (about 2.4
 * combined modules' worth, and three Go heaps) however many families the
 * rows need, where a module per family would grow to 5.6 and eight heaps
 * (docs/architecture.md, "The browser modules").
 */
const MAX_FAMILY_MODULES = 2;

/** @type {typeof import("./relay.js")} */
let R;
/** @type {typeof import("./ql.js")} */
let Q;
/** @type {import("./relay.js").Relay} */
let relay;
/** @type {(m: WebAssembly.Module) => void} */
let gotModule;
/** @type {Promise<WebAssembly.Module>} */
const moduleReady = new Promise((resolve) => (gotModule = resolve));

/**
 * A decoder is one browser module's Go instance: its namespace and its
 * Batch once it runs, and the asks waiting for it.
 * @typedef {{url: string, family: boolean, ql: import("./querylens").QueryLens|null,
 *   batch: import("./relay.js").Batch|null, ready: Promise<import("./querylens").QueryLens>,
 *   waiting: Ask[]}} Decoder
 */
/** The modules this worker may load (prepare): the combined one and, by protocol, the family ones. */
let plan = { combined: "", protocols: /** @type {Record<string, string>} */ ({}) };
/** @type {Map<string, Decoder>} the decoders loaded or loading, by module URL, in the order started */
const decoders = new Map();
/** @type {Decoder} the page's first module */
let first;
/** The modules running, by URL, in the order they started: the page shows them to its tests. */
/** @type {string[]} */
const loaded = [];
let glue = "";
let started = false;

/** @type {Ask[]} */
const queue = [];
let running = 0;
/** @type {Result[]} */
let batch = [];
let flushTimer = 0;
// Counters the page exposes to its tests and benchmark; decoderCalls and
// decoderRequests count the calls into Go (querylens.batch) and the
// requests they ran.
// timing adds up where the conversations' time went (relay.js Timing).
// modules are the URLs of the browser modules running, in the order they started.
/** @type {{asked: number, done: number, replies: number, decoderCalls: number, decoderRequests: number, timing: any, modules: string[]}} */
const stats = { asked: 0, done: 0, replies: 0, decoderCalls: 0, decoderRequests: 0, timing: null, modules: [] };
// When the worker's start steps happened, in ms since the Unix epoch
// (performance.timeOrigin + now), so the page can place them on its own
// timeline: script running, modules imported, relay open, decoder ready.
/** @type {Record<string, number>} */
const times = { script: now() };

function now() {
  return performance.timeOrigin + performance.now();
}

/** @param {any} msg @param {Transferable[]} [transfer] */
const post = (msg, transfer) => /** @type {any} */ (self).postMessage(msg, transfer ?? []);

self.onmessage = (/** @type {MessageEvent} */ e) => {
  const m = e.data;
  switch (m.type) {
    case "prepare":
      prepare(m);
      return;
    case "connect":
      connect(m.relay);
      return;
    case "module":
      gotModule(m.module);
      return;
    case "ask": {
      // The page asks again what boot.js asked for it in prepare: that
      // conversation runs (or ran) already, and its result goes (or went)
      // to the page once.
      const asks = m.asks.filter((/** @type {Ask} */ a) => !early.delete(a.key));
      queue.push(...asks);
      stats.asked += asks.length;
      pump();
      return;
    }
    case "ping":
      if (!relay) {
        post({ type: "pong", id: m.id, error: "not connected" });
        return;
      }
      relay.ping().then((ms) => post({ type: "pong", id: m.id, ms }), (err) => post({ type: "pong", id: m.id, error: String(err.message ?? err) }));
      return;
    case "model": {
      const fail = (/** @type {any} */ err) => post({ type: "model", id: m.id, result: { error: { message: String(err?.message ?? err) } } });
      if (!MODEL.has(m.call)) return fail(`no model call ${m.call}`);
      modelDecoder(m.call, m.args).ready.then((ql) => post({ type: "model", id: m.id, result: /** @type {any} */ (ql)[m.call](...m.args) }), fail);
      return;
    }
  }
};

/** The server model's calls the page may make (querylens.d.ts). */
const MODEL = new Set(["ref", "hostPort", "detectOrder"]);

/**
 * modelDecoder is the decoder a model call runs in: ref in its protocol's,
 * hostPort (no protocol) in the first, detectOrder (every protocol) in
 * the combined module.
 * @param {string} call
 * @param {any[]} args
 */
function modelDecoder(call, args) {
  if (call === "ref") return decoderFor(String(args[0]));
  if (call === "detectOrder") return decoders.get(plan.combined) ?? load(plan.combined);
  return first;
}

/** @type {Promise<void>} */
let modulesReady;
/** @type {Promise<typeof import("./relay.js")>} */
let relayReady;
/** @type {Promise<typeof import("./ql.js")>} */
let qlReady;
/** Keys of the asks prepare made that the page has not asked again yet. */
const early = new Set();

/**
 * load starts the module at url in this worker: from the compiled module
 * the page posts for the first one, else fetched and compiled here.
 * @param {string} url
 * @param {Promise<WebAssembly.Module>} [compiled]
 * @returns {Decoder}
 */
function load(url, compiled) {
  /** @type {Decoder} */
  const d = { url, family: url !== plan.combined, ql: null, batch: null, ready: /** @type {any} */ (null), waiting: [] };
  decoders.set(url, d);
  d.ready = Promise.all([qlReady, compiled ?? url, modulesReady]).then(async ([q, mod]) => {
    const ql = await q.loadDecoder(glue, mod);
    d.ql = ql;
    d.batch = new R.Batch(ql);
    loaded.push(url);
    return ql;
  });
  d.ready.catch(() => {});
  return d;
}

/**
 * decoderFor is the decoder of protocol's conversations: its family's
 * module when that is loaded (or loading), else the combined one when that
 * is, else its family's module, loaded now, unless MAX_FAMILY_MODULES are
 * in already: then the combined one, loaded now.
 * @param {string} protocol
 * @returns {Decoder}
 */
function decoderFor(protocol) {
  const own = Object.hasOwn(plan.protocols, protocol) ? plan.protocols[protocol] : "";
  const d = (own && decoders.get(own)) || decoders.get(plan.combined);
  if (d) return d;
  if (own && [...decoders.values()].filter((x) => x.family).length < MAX_FAMILY_MODULES) return load(own);
  return load(plan.combined);
}

/**
 * prepare imports the relay client, the page's helpers and the decoder's
 * JS glue side by side, connects to the relay as soon as its client is in
 * (when the page gave its path), and starts the decoder as soon as the
 * helpers and the compiled module (sent by the page) are in: all before the
 * page's own script has run. Its asks run once both are ready.
 * @param {{glue: string, modules: {ql: string, relay: string}, first: string,
 *   decoders: {combined: string, protocols: Record<string, string>}, relay?: string, asks?: Ask[]}} m
 */
function prepare(m) {
  qlReady = import(m.modules.ql);
  relayReady = import(m.modules.relay);
  glue = m.glue;
  plan = m.decoders;
  // loadDecoder imports the glue again (from the module map) and reports
  // a failure; this only starts the fetch early.
  import(m.glue).catch(() => {});
  modulesReady = Promise.all([relayReady, qlReady]).then(([r, q]) => {
    R = r;
    Q = q;
    times.modules = now();
  });
  first = load(m.first, moduleReady.then((mod) => {
    times.module = now();
    return mod;
  }));
  first.ready.then(() => (times.decoder = now()), () => {});
  for (const a of m.asks ?? []) early.add(a.key);
  queue.push(...(m.asks ?? []));
  stats.asked += m.asks?.length ?? 0;
  if (m.relay) connect(m.relay);
}

let connecting = false;

/**
 * connect opens the relay connection (once) and, once the decoder and the
 * helpers are ready too, runs the asks that came meanwhile.
 * @param {string} path
 */
async function connect(path) {
  if (connecting) return;
  connecting = true;
  try {
    if (!modulesReady) throw new Error("the worker was connected before it was prepared");
    const r = await relayReady;
    relay = new r.Relay(path);
    relay.addEventListener("open", () => {
      times.open ??= now();
      post({ type: "open", hello: relay.hello });
    });
    relay.addEventListener("close", (e) => post({ type: "close", reason: /** @type {CustomEvent} */ (e).detail?.reason ?? "" }));
    await Promise.all([first.ready, relay.connect()]);
    started = true;
    stats.timing = R.newTiming();
    post({ type: "ready", hello: relay.hello, times, modules: loaded });
    pump();
  } catch (err) {
    post({ type: "fatal", message: String(err?.message ?? err) });
  }
}

/**
 * concurrency is how many servers are asked at once: most of what the
 * relay allows per connection (HELLO). A silent server holds its slot for
 * the relay's whole reply window, so a low cap makes a big list wait on its
 * dead servers.
 */
function concurrency() {
  return Math.max(4, Math.min(768, Math.floor(relay.maxInFlight * 0.75)));
}

function pump() {
  if (!started) return;
  while (running < concurrency() && queue.length) {
    const a = /** @type {Ask} */ (queue.shift());
    const d = decoderFor(a.protocol);
    if (!d.batch) {
      wait(d, a);
      continue;
    }
    running++;
    R.converseSummary(d.batch, relay, a.protocol, a.target, a.options, { timeoutMs: a.timeoutMs, timing: stats.timing }).then((res) => {
      running--;
      stats.done++;
      stats.replies += res.replies;
      const { state, detail } = R.classify(res);
      const s = res.summary;
      batch.push({
        key: a.key, state, detail, rtt: res.rtt, cached: res.cached,
        row: state === R.State.online && s?.row ? lowerHay(s.row) : null,
        servers: s?.servers ?? null,
        // The page links a row that did not answer well to the inspector
        // with what came back.
        received: state === R.State.online ? null : res.packets.filter((p) => p.direction === "received").map((p) => Q.toHex(p.data)),
      });
      // The last answer of a refresh goes at once, and so does a master's
      // list (the page asks its servers when it has it); the others in
      // batches.
      if ((running === 0 && !queue.length) || s?.servers) flush();
      else flushTimer ||= setTimeout(flush, BATCH_MS);
      pump();
    });
  }
}

/**
 * wait keeps a until d's module runs (it takes no slot meanwhile), then
 * queues it first; if the module does not load, a's row says so.
 * @param {Decoder} d
 * @param {Ask} a
 */
function wait(d, a) {
  d.waiting.push(a);
  if (d.waiting.length > 1) return;
  d.ready.then(() => {
    queue.unshift(...d.waiting.splice(0));
    pump();
  }, (err) => {
    for (const w of d.waiting.splice(0)) {
      stats.done++;
      batch.push({ key: w.key, state: R.PageState.error, detail: `the decoder of ${w.protocol} did not load: ${err?.message ?? err}`,
        rtt: null, cached: false, row: null, servers: null, received: null });
    }
    flush();
  });
}

/** lowerHay lower-cases the row's search text (codecs.RowHay) for the page's filter. */
function lowerHay(row) {
  row[R.Row.hay] = row[R.Row.hay].toLowerCase();
  return row;
}

function flush() {
  clearTimeout(flushTimer);
  flushTimer = 0;
  if (!batch.length) return;
  times.firstResults ??= now();
  stats.decoderCalls = 0;
  stats.decoderRequests = 0;
  let decoderMs = 0;
  for (const d of decoders.values()) {
    stats.decoderCalls += d.batch?.calls ?? 0;
    stats.decoderRequests += d.batch?.requests ?? 0;
    decoderMs += d.batch?.ms ?? 0;
  }
  stats.modules = loaded;
  if (stats.timing) {
    stats.timing.relayQueuedMs = relay.queuedMs;
    // Where the worker's own time went: reading the relay's messages
    // (with the frames' handlers), the frames sent, the messages they
    // went in and the time in WebSocket.send, and the decoder's calls.
    stats.timing.messages = relay.messages;
    stats.timing.readMs = relay.readMs;
    stats.timing.framesSent = relay.framesSent;
    stats.timing.messagesSent = relay.messagesSent;
    stats.timing.sendMs = relay.sendMs;
    stats.timing.decoderMs = decoderMs;
  }
  post({ type: "results", results: batch, stats, times });
  batch = [];
}

export {}; // a module: live.js imports its types
