// @ts-check
// The server browser's second thread: it owns the relay WebSocket and the
// wasm decoders, runs every conversation, and sends the page compact row
// updates in batches, so the page's own thread only draws the table.
//
//   page → worker  prepare, in the worker's name ("querylens decoder " and <html data-boot>):
//                  {glue, modules: {ql, relay}, imports, wasm, decoders: {combined, protocols}, relay, subprotocols, asks, lists}
//                      import (imports: every module ql and relay import, to
//                      the end, by the URLs their imports name: all at once),
//                      start the first decoder, connect to the relay's
//                      path (if given: its socket opens at once, with
//                      subprotocols) and run asks, then the servers of lists
//                      ([{protocol, options, timeoutMs, query?, targets}]: an
//                      ask of each target, keyed protocol/target), as soon
//                      as both are ready
//                  {type: "module", module}  the first module (wasm), compiled by the page
//                  {type: "connect", relay}  the relay's path: connect (once), then run asks
//                  {type: "ask", asks: [{key, protocol, target, options, timeoutMs, query?}]}
//                      (an ask whose key prepare asked already is dropped, once;
//                      query: its first request, hex datagrams the server built,
//                      sent as the relay's HELLO arrives when the decoder is not
//                      ready yet: a master's list)
//                  {type: "forget", keys}  the asks of keys are no longer wanted: those
//                      queued are dropped, those running end at once (their
//                      queries cancelled at the relay); no result comes for either
//                  {type: "ping", id}
//                  {type: "model", id, call, args}  the server model the module
//                      exports (querylens.ref, hostPort, detectOrder), once it is ready
//                  {type: "links", seq, refs: [{key, protocol, addr, options}]}
//                      the rows that have no status page's path yet: their
//                      paths come in the next results, once the module is ready
//   worker → page  {type: "open", hello} / {type: "close", reason}
//                  {type: "ahead", keys}  asks' queries left before the decoder was ready
//                  {type: "ready", hello, times, modules} / {type: "fatal", message}
//                  {type: "results", results: Result[], stats, times, paths, linked}
//                      (at most one per BATCH_MS); paths: the status page's
//                      path of each row asked by links, by key; linked: the
//                      seq of the last links message answered
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
// Modules are imported by the URLs the layout wrote in data-boot: their
// content-hashed names, which the page's import map maps its own imports
// to and a worker cannot see.

/**
 * @typedef {{key: string, protocol: string, target: string,
 *   options: Record<string, string>|null, timeoutMs: number, query?: string[]}} Ask
 * @typedef {{key: string, state: string, detail: string, rtt: number|null,
 *   cached: boolean, row: any[]|null, servers: string[]|null,
 *   paths?: string[], received: string[]|null}} Result
 *   (a master's list: paths are the status pages of its servers, in order)
 * @typedef {{key: string, protocol: string, addr: string,
 *   options: Record<string, string>|null}} Link
 * @typedef {{protocol: string, options: Record<string, string>|null, timeoutMs: number,
 *   query?: string[], targets: string[]}} BootList
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
let plan = { combined: "", protocols: /** @type {Record<string, string>} */ ({}), outside: /** @type {string[]} */ ([]) };
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
/** The status pages' paths found for links since the last results, by key. @type {Record<string, string>|null} */
let paths = null;
/** The seq of the last links message answered. */
let linked = 0;
let flushTimer = 0;
/** When the results waiting in batch began to wait (performance.now), 0 when none wait. */
let batchSince = 0;
// Counters the page exposes to its tests and benchmark; decoderCalls and
// decoderRequests count the calls into Go (querylens.batch) and the
// requests they ran.
// timing adds up where the conversations' time went (relay.js Timing).
// ahead counts the queries sent before the decoder was ready, and those
// their conversations took over (sendAhead). openedFirst is how many
// conversations had started when the first result was posted (FIRST_ASKS).
// modules are the URLs of the browser modules running, in the order they started.
/** @type {{asked: number, done: number, openedFirst: number, replies: number, decoderCalls: number, decoderRequests: number, timing: any, ahead: {sent: number, adopted: number}, modules: string[]}} */
const stats = { asked: 0, done: 0, openedFirst: 0, replies: 0, decoderCalls: 0, decoderRequests: 0, timing: null, ahead: { sent: 0, adopted: 0 }, modules: [] };
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
      if (relay) for (const a of asks) sendAhead(a);
      pump();
      return;
    }
    case "forget":
      forget(new Set(m.keys));
      return;
    case "ping":
      if (!relay) {
        post({ type: "pong", id: m.id, error: "not connected" });
        return;
      }
      relay.ping().then((ms) => post({ type: "pong", id: m.id, ms }), (err) => post({ type: "pong", id: m.id, error: String(err.message ?? err) }));
      return;
    case "links":
      link(m.seq, m.refs);
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
 * load starts the module at url in this worker: compiled is the module
 * compiled already (or compiling: by the page, which posts the combined
 * one when the page starts with it, or here, compileModule), else it is
 * fetched and compiled here now.
 * @param {string} url
 * @param {Promise<WebAssembly.Module>} [compiled]
 * @returns {Decoder}
 */
function load(url, compiled = compileModule(url)) {
  /** @type {Decoder} */
  const d = { url, family: url !== plan.combined, ql: null, batch: null, ready: /** @type {any} */ (null), waiting: [] };
  decoders.set(url, d);
  // The module is instantiated and Go started as soon as ql.js and the
  // module are in, not once the relay client is too: on a cold start its
  // imports come later, and the instantiation takes this thread meanwhile
  // instead of after them.
  d.ready = Promise.all([qlReady, compiled]).then(async ([q, mod]) => {
    const ql = await q.loadDecoder(glue, mod);
    await modulesReady;
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
 * in already: then the combined one, loaded now. A protocol the combined
 * module does not decode (plan.outside: built in from outside this
 * repository) always gets its own module.
 * @param {string} protocol
 * @returns {Decoder}
 */
function decoderFor(protocol) {
  const own = Object.hasOwn(plan.protocols, protocol) ? plan.protocols[protocol] : "";
  const alone = own !== "" && plan.outside.includes(protocol);
  const d = (own && decoders.get(own)) || (alone ? undefined : decoders.get(plan.combined));
  if (d) return d;
  if (alone || (own && [...decoders.values()].filter((x) => x.family).length < MAX_FAMILY_MODULES)) return load(own);
  return load(plan.combined);
}

/**
 * prepare imports the relay client, the page's helpers, the decoder's JS
 * glue and everything they import side by side, opens the relay's socket
 * at once and connects through it as soon as its client is in (when the
 * page gave its path), and starts the decoder as soon as ql.js and the
 * compiled module (compiled here, or by the page and sent) are in: all
 * before the page's own script has run. Its asks run once the decoder,
 * the helpers and the relay are ready.
 * @param {{glue: string, modules: {ql: string, relay: string}, imports?: string[], wasm: string, compile?: string,
 *   decoders: {combined: string, protocols?: Record<string, string>, outside?: string[]}, relay?: string,
 *   subprotocols?: string[], asks?: Ask[], lists?: BootList[]}} m
 */
function prepare(m) {
  if (m.relay && m.subprotocols?.length) opened = openRelay(m.relay, m.subprotocols);
  // The first module: a protocol family's is fetched and compiled here as
  // it downloads, first of all (compile: "worker"; the page's thread,
  // busy with its first parse, layout and rows, pumped its download into
  // the compiler late); the combined one is compiled by the page, which
  // preloads it (boot.js posts it).
  const compiled = m.compile === "worker" ? compileModule(m.wasm) : moduleReady;
  qlReady = import(m.modules.ql);
  relayReady = import(m.modules.relay);
  // What those import, fetched beside them rather than once they are in
  // (the same URLs: their module map loads each once); a failure shows
  // where ql or relay import it.
  for (const u of m.imports ?? []) import(u).catch(() => {});
  glue = m.glue;
  plan = { combined: m.decoders.combined, protocols: m.decoders.protocols ?? {}, outside: m.decoders.outside ?? [] };
  // loadDecoder imports the glue again (from the module map) and reports
  // a failure; this only starts the fetch early.
  import(m.glue).catch(() => {});
  modulesReady = Promise.all([relayReady, qlReady]).then(([r, q]) => {
    R = r;
    Q = q;
    times.modules = now();
  });
  first = load(m.wasm, compiled.then((mod) => {
    times.module = now();
    return mod;
  }));
  first.ready.then(() => (times.decoder = now()), () => {});
  const asks = [...(m.asks ?? []), ...listAsks(m.lists ?? [])];
  for (const a of asks) early.add(a.key);
  queue.push(...asks);
  stats.asked += asks.length;
  if (m.relay) connect(m.relay);
}

/**
 * compileModule fetches the browser module at url and compiles it while it
 * downloads: every module this worker loads itself (the first, before
 * ql.js is in, and those rows need later).
 * @param {string} url
 * @returns {Promise<WebAssembly.Module>}
 */
async function compileModule(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`the decoder did not load (${resp.status}): ${(await resp.text()).trim()}`);
  return WebAssembly.compileStreaming(resp);
}

/**
 * listAsks are the asks of the servers in lists, each list's in order: the
 * servers the page lists from its configuration, which it asks alike.
 * @param {BootList[]} lists
 * @returns {Ask[]}
 */
function listAsks(lists) {
  return lists.flatMap((l) => l.targets.map((target) => ({
    key: `${l.protocol}/${target}`, protocol: l.protocol, target, options: l.options, timeoutMs: l.timeoutMs,
    ...(l.query?.length ? { query: l.query } : {}),
  })));
}

/** @type {{path: string, socket: import("./relay-client.js").Opened}|null} the relay's socket opened by prepare */
let opened = null;

/**
 * openRelay opens the relay's socket at path as the script starts, before the
 * relay client is imported: its handshake and HELLO come while the
 * modules load, so the masters' first requests leave as soon as the
 * client is in, before the decoder's start holds this thread (the Relay
 * takes the socket over with what it said meanwhile).
 * @param {string} path @param {string[]} subprotocols
 */
function openRelay(path, subprotocols) {
  const u = new URL(path, location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  /** @type {import("./relay-client.js").Opened} */
  const socket = { ws: new WebSocket(u.href, subprotocols), messages: [], closed: null };
  socket.ws.binaryType = "arraybuffer";
  socket.ws.onmessage = (e) => socket.messages.push(e);
  socket.ws.onclose = (e) => (socket.closed = e);
  return { path, socket };
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
    relay = new r.Relay(path, opened?.path === path ? opened.socket : null);
    if (opened?.path !== path) opened?.socket.ws.close();
    opened = null;
    // Listened to first: the socket opened early may have its HELLO,
    // which the first query (sendAhead) hands the Relay at once.
    relay.addEventListener("open", () => {
      times.open ??= now();
      post({ type: "open", hello: relay.hello });
    });
    relay.addEventListener("close", (e) => post({ type: "close", reason: /** @type {CustomEvent} */ (e).detail?.reason ?? "" }));
    // The masters' first requests leave as the relay's HELLO arrives
    // (the client holds them until it has), whether the decoder is ready
    // or not.
    for (const a of queue) sendAhead(a, r.fromHex);
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
 * concurrency is how many servers are asked at once: as many as the relay
 * lets one connection have queries open (HELLO). A silent server holds its
 * slot for the relay's whole reply window, so a lower cap makes a big list
 * wait on its dead servers. A conversation's second query (a challenge's
 * follow-up, A2S's PLAYER beside its INFO) past that limit waits in the
 * relay client, follow-ups first, and its time starts when it leaves.
 */
function concurrency() {
  return Math.max(4, relay.maxInFlight);
}

/**
 * FIRST_ASKS is how many conversations the worker's start runs alone (a
 * few, in the page's order), until the first result is out or each of them
 * waits on the network. The replies to the queries sent ahead are in when
 * the decoder starts: opening every conversation together made the first
 * row wait for a call into Go over all of them, step by step, and for V8's
 * first compile of every decoder they reach (~230 ms on the page of every
 * family); the others start as soon as the first few are through.
 */
const FIRST_ASKS = 8;

/** The start's first few conversations: 0 before, 1 while they run alone, 2 after (pump). */
let firstAsks = 0;

/**
 * firstThrough releases the conversations held behind the first few once
 * the decoders have nothing left to run for them: looked at again behind
 * each flush the Batch schedules (R.later, the same queue), so it runs
 * after their replies in hand were decoded and they either finished or
 * sent their next query.
 */
function firstThrough() {
  if (firstAsks !== 1) return;
  if ([...decoders.values()].some((d) => d.batch?.pending)) {
    R.later(firstThrough);
    return;
  }
  firstAsks = 2;
  pump();
}

function pump() {
  if (!started) return;
  if (firstAsks < 2 && times.firstResults) firstAsks = 2;
  let cap = concurrency();
  if (firstAsks === 0 && queue.length > FIRST_ASKS) {
    firstAsks = 1;
    R.later(firstThrough);
  }
  if (firstAsks === 1) cap = Math.min(cap, FIRST_ASKS);
  while (running < cap && queue.length) {
    const a = /** @type {Ask} */ (queue.shift());
    const d = decoderFor(a.protocol);
    if (!d.batch) {
      wait(d, a);
      continue;
    }
    running++;
    const sent = ahead.get(a.key);
    ahead.delete(a.key);
    const via = sent ? adopting(sent) : relay;
    const stop = new AbortController();
    aborts.set(a.key, stop);
    R.converseSummary(d.batch, via, a.protocol, a.target, a.options, { timeoutMs: a.timeoutMs, timing: stats.timing, signal: stop.signal }).then((res) => {
      if (sent) dropAhead(sent);
      if (aborts.get(a.key) === stop) aborts.delete(a.key);
      running--;
      stats.done++;
      stats.replies += res.replies;
      if (stop.signal.aborted) {
        if (running === 0 && !queue.length) flush();
        pump();
        return;
      }
      const { state, detail } = R.classify(res);
      const s = res.summary;
      batch.push({
        key: a.key, state, detail, rtt: res.rtt, cached: res.cached,
        row: state === R.State.online && s?.row ? lowerHay(s.row) : null,
        servers: s?.servers ?? null,
        // A master's list: the page's rows of its servers link to their
        // status pages from the moment they are drawn.
        ...(s?.servers?.length ? { paths: statusPaths(/** @type {any} */ (d.ql), a.protocol, s.servers, null) } : {}),
        // The page links a row that did not answer well to the inspector
        // with what came back.
        received: state === R.State.online ? null : res.packets.filter((p) => p.direction === "received").map((p) => Q.toHex(p.data)),
      });
      // The first answer and the last of a refresh go at once, and so does a
      // master's list (the page asks its servers when it has it); the others
      // in batches, at most BATCH_MS apart: also when answers come one after
      // another in one task (the replies to queries sent ahead, there
      // before the decoder), which no timer would interrupt.
      batchSince ||= performance.now();
      if (!times.firstResults || (running === 0 && !queue.length) || s?.servers || performance.now() - batchSince >= BATCH_MS) flush();
      else flushTimer ||= setTimeout(flush, BATCH_MS);
      pump();
    });
  }
}

/** The running conversations' stops, by their ask's key (forget). @type {Map<string, AbortController>} */
const aborts = new Map();

/**
 * forget drops the asks of keys that have not started (queued, or waiting
 * for their module) and ends those running: a detection that found its
 * protocol frees the slots of the protocols still asked, at once rather
 * than when their reply windows close.
 * @param {Set<string>} keys
 */
function forget(keys) {
  /** @param {Ask[]} list */
  const drop = (list) => {
    const kept = list.filter((a) => !keys.has(a.key));
    stats.done += list.length - kept.length;
    list.splice(0, list.length, ...kept);
  };
  drop(queue);
  for (const d of decoders.values()) drop(d.waiting);
  for (const k of keys) {
    early.delete(k);
    aborts.get(k)?.abort();
  }
  pump();
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

/**
 * link finds the status pages of the rows in refs (the page's rows that
 * came with none: the browser's favourites, the servers added by hand) as
 * soon as the module is ready, before any of them is answered, and sends
 * them with the next results.
 * @param {number} seq @param {Link[]} refs
 */
function link(seq, refs) {
  /** @type {Map<string, Link[]>} */
  const groups = new Map();
  for (const r of refs) {
    const g = r.protocol + "\n" + JSON.stringify(r.options ?? null);
    groups.get(g)?.push(r) ?? groups.set(g, [r]);
  }
  // Each protocol's paths in a module that knows it: the decoder its rows
  // will be asked with (server/ident refuses a protocol the module lacks).
  Promise.all([...groups.values()].map((list) => decoderFor(list[0].protocol).ready.then((ql) => {
    paths ??= {};
    const found = statusPaths(ql, list[0].protocol, list.map((r) => r.addr), list[0].options);
    list.forEach((r, i) => found[i] && (/** @type {Record<string, string>} */ (paths)[r.key] = found[i]));
  }, () => {}))).then(() => {
    // Sent even when the module failed (no paths): the page waits on it.
    paths ??= {};
    linked = Math.max(linked, seq);
    flush();
  });
}

/**
 * statusPaths are the status pages of addrs, all of protocol with options:
 * what server.Ref's Path spells (querylens.paths, package server/ident),
 * "" for one the model refuses.
 * @param {import("./querylens").QueryLens} ql @param {string} protocol
 * @param {string[]} addrs @param {Record<string, string>|null} options
 * @returns {string[]}
 */
function statusPaths(ql, protocol, addrs, options) {
  // One address a line: an address with a line break in it is no server.
  const ok = addrs.map((a) => (a.includes("\n") ? "" : a));
  return ql.paths(protocol, ok.join("\n"), options).split("\n");
}

/**
 * Ahead is a query an ask came with (its first request, built by the
 * server: a master's list), sent through the relay before the decoder is
 * ready. What comes back is kept (events) until the ask's conversation,
 * run once the decoder is, takes the query over (adopting): its decoder
 * reads the replies as if it had sent the query itself.
 * @typedef {{id: number, bytes: Uint8Array, sent: boolean, events: any[][],
 *   handlers: any, live: boolean, adopted: boolean}} Ahead
 */
/** The queries sent ahead, by their ask's key. @type {Map<string, Ahead[]>} */
const ahead = new Map();

/**
 * sendAhead sends a's query (when it has one, and the decoder is not
 * ready to start its conversation) through the relay: at once when its
 * HELLO came, else the moment it arrives.
 * @param {Ask} a @param {(hex: string) => Uint8Array} [fromHex]
 */
function sendAhead(a, fromHex = R?.fromHex) {
  if (!a.query?.length || ahead.has(a.key) || !fromHex || decoderFor(a.protocol).batch) return;
  ahead.set(a.key, a.query.map((hex) => {
    /** @type {Ahead} */
    const q = { id: 0, bytes: fromHex(hex), sent: false, events: [], handlers: null, live: false, adopted: false };
    /** keep hands a reply, an end or an error to the conversation that took q over, or keeps it for it. @param {string} type */
    const keep = (type) => (/** @type {any[]} */ ...args) => (q.live ? q.handlers[type]?.(...args) : q.events.push([type, ...args]));
    q.id = relay.query(a.protocol, a.target, q.bytes, {
      sent() {
        q.sent = true;
        stats.ahead.sent++;
        times.ahead ??= now();
        aheadSent(a.key);
        q.handlers?.sent?.();
      },
      reply: keep("reply"), end: keep("end"), error: keep("error"),
    });
    return q;
  }));
}

/** The keys of the asks whose queries went ahead since the page was last told. @type {string[]} */
let aheadKeys = [];

/**
 * aheadSent tells the page key's query went ahead: with the others sent
 * in the same task, in one message (a configured list sends a thousand).
 * @param {string} key
 */
function aheadSent(key) {
  if (aheadKeys.push(key) > 1) return;
  queueMicrotask(() => {
    post({ type: "ahead", keys: aheadKeys });
    aheadKeys = [];
  });
}

/**
 * adopting is the relay as the conversation of an ask whose queries went
 * ahead sees it: a first query with the datagram of one of them takes
 * that one over (its id, its replies so far handed over once the caller
 * has the id); any other query goes to the relay, and the queries ahead
 * no query took over are cancelled (the decoder started otherwise).
 * @param {Ahead[]} list
 * @returns {any} what converseSummary uses of a Relay
 */
function adopting(list) {
  return {
    get connected() {
      return relay.connected;
    },
    cancel: (/** @type {number} */ id) => relay.cancel(id),
    /** @param {string} protocol @param {string} target @param {Uint8Array} dg @param {any} handlers */
    query(protocol, target, dg, handlers, followUp = false) {
      const q = followUp ? undefined : list.find((q) => !q.adopted && sameBytes(q.bytes, dg));
      if (!q) {
        dropAhead(list);
        return relay.query(protocol, target, dg, handlers, followUp);
      }
      q.adopted = true;
      stats.ahead.adopted++;
      q.handlers = handlers;
      if (q.sent) handlers.sent?.();
      queueMicrotask(() => {
        for (const [type, ...args] of q.events) handlers[type]?.(...args);
        q.events = [];
        q.live = true;
      });
      return q.id;
    },
  };
}

/** dropAhead cancels the queries of list no conversation took over. @param {Ahead[]} list */
function dropAhead(list) {
  for (const q of list) {
    if (q.adopted) continue;
    q.adopted = true;
    relay.cancel(q.id);
  }
}

/** @param {Uint8Array} a @param {Uint8Array} b */
function sameBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** lowerHay lower-cases the row's search text (codecs.RowHay) for the page's filter. */
function lowerHay(row) {
  row[R.Row.hay] = row[R.Row.hay].toLowerCase();
  return row;
}

function flush() {
  clearTimeout(flushTimer);
  flushTimer = 0;
  batchSince = 0;
  if (!batch.length && !paths) return;
  if (batch.length && !times.firstResults) {
    times.firstResults = now();
    stats.openedFirst = stats.done + running;
  }
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
  post({ type: "results", results: batch, stats, times, paths, linked });
  batch = [];
  paths = null;
}

// boot.js puts prepare (the page's <html data-boot>) in the worker's
// name, which this script has in its first task, rather than in a
// message, which would reach it only once the page's thread, busy with
// the page's first layout, had run again.
const NAMED = "querylens decoder ";
if (self.name.startsWith(NAMED + "{")) prepare(JSON.parse(self.name.slice(NAMED.length)));

export {}; // a module: live.js imports its types
