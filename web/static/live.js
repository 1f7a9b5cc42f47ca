// @ts-check
// The page's side of worker.js: turns its messages into events and
// callbacks. It looks like a Relay to showRelay (open and close events,
// ping()). boot.js, inlined at the top of the page, starts the one worker
// of the page while the page is parsed, connects it to the relay and
// compiles the decoder for it; the page's script adopts it
// (DecodeWorker.shared()) with what it said meanwhile.

/**
 * @typedef {import("./worker.js").Result} Result
 * @typedef {import("./worker.js").Link} Link
 * @typedef {(results: Result[], stats: object, paths: Record<string, string>|null) => void} OnResults
 * @typedef {{version: number, maxDatagram: number, replyWindow: number,
 *   maxInFlight: number, cacheTTL: number}} Hello
 */

/** @type {DecodeWorker|null} */
let shared = null;

export class DecodeWorker extends EventTarget {
  /**
   * shared returns the page's worker, starting it on first use.
   * @returns {DecodeWorker}
   */
  static shared() {
    shared ??= new DecodeWorker();
    return shared;
  }

  /**
   * The worker (started by boot.js) imports its modules, connects to the
   * relay and instantiates the decoder while the page's own script loads.
   * Its messages until start() are handled there.
   */
  constructor() {
    super();
    /** @type {Hello|null} */
    this.hello = null;
    /** @type {OnResults|null} */
    this.onResults = null;
    this.stats = {};
    this.batches = 0;
    /** @type {Record<string, number>} */
    this.times = {};
    this.nextPing = 1;
    this.nextModel = 1;
    /** @type {Map<number, (result: any) => void>} */
    this.models = new Map();
    /** @type {Map<number, {resolve: (ms: number) => void, reject: (e: Error) => void}>} */
    this.pings = new Map();
    /** @type {string[]} the keys of the asks whose query left before the decoder was ready (worker.js sendAhead) */
    this.ahead = [];
    /** @type {any[]} asks waiting for the end of this task */
    this.outbox = [];
    /** @type {Link[]} rows to link, waiting for the end of this task */
    this.unlinked = [];
    /** the links messages sent, and the last the worker answered */
    this.linkSeq = 0;
    this.linkedSeq = 0;
    /** @type {{seq: number, resolve: () => void}[]} */
    this.linkWaits = [];
    /** @type {QueryLensBoot} */
    const boot = /** @type {any} */ (globalThis).querylensBoot;
    if (!boot) throw new Error("the page has no decoding worker (boot.js did not run)");
    this.worker = boot.worker;
    this.boot = boot;
    let started = false;
    this.ready = new Promise((resolve, reject) => {
      /** @param {MessageEvent} e */
      this.handle = (e) => this.#message(e.data, (h) => {
        started = true;
        resolve(h);
      }, reject);
      // A failure to start ends the worker; an error in a running worker
      // (the console shows it) does not stop the other conversations.
      boot.whenFailed((message) => {
        if (started) return;
        reject(new Error(message));
        this.worker.terminate();
      });
    });
    this.ready.catch(() => {});
  }

  /**
   * start connects the worker to the relay at relayPath (boot.js told it
   * already; it connects once); finished conversations come back to
   * onResults in batches. Asks made before the relay and the decoder are
   * ready wait in the worker. What the worker said before start (its
   * HELLO, the conversations boot.js asked for) is handled once the
   * caller's synchronous code has run, so that the rows and the asks it
   * makes right after start exist when those results come.
   * @param {string} relayPath the relay's WebSocket path
   * @param {OnResults} onResults also given the status pages' paths link found
   */
  start(relayPath, onResults) {
    this.onResults = onResults;
    this.worker.postMessage({ type: "connect", relay: relayPath });
    /** @type {MessageEvent[]} */
    const held = [];
    this.worker.onmessage = (e) => held.push(e);
    queueMicrotask(() => {
      for (const e of [...this.boot.early.splice(0), ...held]) this.handle(e);
      this.worker.onmessage = this.handle;
    });
    return this.ready;
  }

  /** connect resolves to the relay's HELLO once the decoder is ready too. */
  connect() {
    return this.ready;
  }

  get maxInFlight() {
    return Math.max(1, this.hello?.maxInFlight ?? 16);
  }

  /** cacheTTL is how long the relay shares replies (ms), from HELLO. */
  get cacheTTL() {
    return this.hello?.cacheTTL ?? 0;
  }

  /** ping resolves to the page-to-relay round trip in ms. */
  ping() {
    const id = this.nextPing++;
    return new Promise((resolve, reject) => {
      this.pings.set(id, { resolve, reject });
      this.worker.postMessage({ type: "ping", id });
    });
  }

  /**
   * model calls the server model the decoder exports (querylens.ref,
   * hostPort, detectOrder: package server/ident) in the worker, which has
   * the module; it resolves once the decoder is ready, to what the call
   * returned (a Failure as data).
   * @param {"ref"|"hostPort"|"detectOrder"} call
   * @param {...any} args
   * @returns {Promise<any>}
   */
  model(call, ...args) {
    const id = this.nextModel++;
    return new Promise((resolve) => {
      this.models.set(id, resolve);
      this.worker.postMessage({ type: "model", id, call, args });
    });
  }

  /**
   * ask queues a conversation; its result comes back, keyed by key, in a
   * later onResults batch. Asks made in one task go in one message.
   * @param {import("./worker.js").Ask} a
   */
  ask(a) {
    if (!this.outbox.length) queueMicrotask(() => {
      this.worker.postMessage({ type: "ask", asks: this.outbox });
      this.outbox = [];
    });
    this.outbox.push(a);
  }

  /**
   * forget tells the worker the asks of keys are no longer wanted (a
   * detection that found its protocol): no result comes for them.
   * @param {string[]} keys
   */
  forget(keys) {
    const gone = new Set(keys);
    this.outbox = this.outbox.filter((a) => !gone.has(a.key));
    this.worker.postMessage({ type: "forget", keys });
  }

  /**
   * link asks the worker for the status page's path of a row that has
   * none (package server/ident, in the module): it comes with a later
   * onResults batch, by key, once the module is ready and before that
   * row's answer. Rows linked in one task go in one message.
   * @param {Link} r
   */
  link(r) {
    if (!this.unlinked.length) queueMicrotask(() => {
      this.worker.postMessage({ type: "links", seq: ++this.linkSeq, refs: this.unlinked });
      this.unlinked = [];
    });
    this.unlinked.push(r);
  }

  /** linked resolves once the paths of every row linked so far have come (or the module failed). @returns {Promise<void>} */
  linked() {
    // The rows linked in this task go at its end: wait for them too.
    const seq = this.linkSeq + (this.unlinked.length ? 1 : 0);
    if (seq <= this.linkedSeq) return Promise.resolve();
    return new Promise((resolve) => this.linkWaits.push({ seq, resolve }));
  }

  /**
   * times keeps the worker's start steps on this page's timeline (ms since
   * navigation); the worker sends them in ms since the Unix epoch.
   * @param {Record<string, number>} t
   */
  #times(t) {
    this.times = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v - performance.timeOrigin]));
  }

  /**
   * @param {any} m
   * @param {(h: Hello) => void} resolve
   * @param {(e: Error) => void} reject
   */
  #message(m, resolve, reject) {
    switch (m.type) {
      case "open":
        this.hello = m.hello;
        performance.mark("ql-relay-hello");
        this.dispatchEvent(new Event("open"));
        return;
      case "close":
        this.dispatchEvent(new CustomEvent("close", { detail: { reason: m.reason } }));
        return;
      case "ahead":
        this.ahead.push(...m.keys);
        performance.mark("ql-query-ahead");
        return;
      case "ready":
        this.hello = m.hello;
        this.stats = { ...this.stats, modules: m.modules };
        this.#times(m.times);
        performance.mark("ql-decoder-ready");
        resolve(m.hello);
        return;
      case "fatal":
        reject(new Error(m.message));
        this.worker.terminate();
        return;
      case "results":
        this.stats = m.stats;
        // A message of paths only (link) is no batch of rows.
        if (m.results.length && ++this.batches === 1) this.#times(m.times);
        this.onResults?.(m.results, m.stats, m.paths);
        if (m.linked > this.linkedSeq) {
          this.linkedSeq = m.linked;
          this.linkWaits = this.linkWaits.filter((w) => w.seq > m.linked || void w.resolve());
        }
        return;
      case "model": {
        const f = this.models.get(m.id);
        this.models.delete(m.id);
        f?.(m.result);
        return;
      }
      case "pong": {
        const p = this.pings.get(m.id);
        this.pings.delete(m.id);
        if (m.error) p?.reject(new Error(`relay: ${m.error}`));
        else p?.resolve(m.ms);
        return;
      }
    }
  }
}
