// @ts-check
// The batch encoder: the server browser's decoder requests (querylens.batch:
// OPEN, STEP, FINISH) written into the module's input buffer together and
// run in one call into Go, and the decoder's answers read back.

const utf8 = new TextDecoder();
const utf8enc = new TextEncoder();

/**
 * later runs f after the tasks already waiting in the event loop (the
 * replies the relay sent meanwhile): a background-priority task where
 * the browser has scheduler.postTask, else a zero timeout.
 * @param {() => void} f
 */
export function later(f) {
  const s = /** @type {any} */ (globalThis).scheduler;
  if (s?.postTask) s.postTask(f, { priority: "background" });
  else setTimeout(f, 0);
}

/**
 * EAGER_BATCH is how many queued decoder requests a Batch runs without
 * waiting for its scheduled flush.
 */
const EAGER_BATCH = 16;

/** MAX_OPENS bounds the OPEN requests a Batch keeps written (a page asks with a few ways, a custom list with more). */
const MAX_OPENS = 64;

/**
 * Batch queues the server browser's decoder requests (querylens.batch:
 * OPEN, STEP, FINISH) and runs them together: in one call into Go per
 * flush, which comes after the replies already waiting in the worker's
 * event loop have been read (later), or as soon as EAGER_BATCH requests
 * wait (after the task that queued the last): while replies stream in, a
 * background flush would wait for the stream to pause, and every
 * conversation's next query with it (A2S asks up to six times per
 * server). A thousand conversations started in one task cross in a few
 * calls; replies that arrive together are decoded together. Requests run
 * in the order they were made, so a conversation's steps stay in order.
 */
export class Batch {
  /**
   * @param {import("./querylens").QueryLens} ql
   * @param {(flush: () => void) => void} [schedule] how a flush is
   *   scheduled when a request is queued (a benchmark flushes by hand)
   */
  constructor(ql, schedule = later) {
    this.ql = ql;
    this.schedule = schedule;
    this.inSize = ql.in.length;
    /** @type {{req: Uint8Array, resolve: (r: any) => void}[]} */
    this.queue = [];
    this.scheduled = false;
    this.eager = false; // a flush of a full batch is due in a microtask
    /** The OPEN requests written, by protocol and options (open). @type {Map<string, Uint8Array>} */
    this.opens = new Map();
    // Counters for the page's benchmark: calls into Go, requests run, and
    // the ms spent in them (the call, and reading its answers).
    this.calls = 0;
    this.requests = 0;
    this.ms = 0;
  }

  /**
   * @param {string} protocol
   * @param {import("./querylens").Options} [options]
   * @returns {Promise<{handle: number, send: string[]} | import("./querylens").Failure>}
   */
  open(protocol, options) {
    // A refresh opens a thousand conversations with a few ways of asking:
    // each way's request is written once (#run copies it into Go's input).
    const key = protocol + "\n" + JSON.stringify(options ?? null);
    let req = this.opens.get(key);
    if (!req) {
      const r = openRequest(protocol, options);
      if (!(r instanceof Uint8Array)) return Promise.resolve(r);
      if (this.opens.size >= MAX_OPENS) this.opens.clear();
      this.opens.set(key, (req = r));
    }
    return this.#push(req);
  }

  /**
   * @param {number} handle
   * @param {Uint8Array} datagram
   * @returns {Promise<{send: string[], done: boolean, summary?: import("./querylens").Summary} | import("./querylens").Failure>}
   */
  step(handle, datagram) {
    const req = new Uint8Array(9 + datagram.length);
    const v = new DataView(req.buffer);
    req[0] = 0x02;
    v.setUint32(1, handle);
    v.setUint32(5, datagram.length);
    req.set(datagram, 9);
    return this.#push(req);
  }

  /**
   * @param {number} handle
   * @returns {Promise<import("./querylens").Summary | import("./querylens").Failure>}
   */
  finish(handle) {
    const req = new Uint8Array(5);
    req[0] = 0x03;
    new DataView(req.buffer).setUint32(1, handle);
    return this.#push(req);
  }

  /** @param {Uint8Array} req */
  #push(req) {
    return new Promise((resolve) => {
      if (req.length > this.inSize) {
        resolve({ error: { message: `request of ${req.length} bytes is larger than querylens.in` } });
        return;
      }
      this.queue.push({ req, resolve });
      // A batch of EAGER_BATCH requests runs at once (after the task that
      // queued the last one), rather than after every reply waiting: while
      // replies stream in, a flush scheduled behind them would wait for
      // the stream to pause, and the conversations' next queries with it.
      if (this.queue.length >= EAGER_BATCH && !this.eager && this.schedule === later) {
        this.eager = true;
        queueMicrotask(() => {
          this.eager = false;
          this.#run();
        });
      }
      if (this.scheduled) return;
      this.scheduled = true;
      this.schedule(() => this.flush());
    });
  }

  /** pending says whether requests wait to run (queued, or a flush scheduled). */
  get pending() {
    return this.queue.length > 0 || this.scheduled || this.eager;
  }

  /** flush runs every queued request now, in as few calls as fit in querylens.in. */
  flush() {
    this.scheduled = false;
    this.#run();
  }

  #run() {
    while (this.queue.length) {
      const buf = this.ql.in; // anew each time: the module's memory moves as it grows
      let n = 0;
      let k = 0;
      for (; k < this.queue.length && n + this.queue[k].req.length <= buf.length; k++) {
        buf.set(this.queue[k].req, n);
        n += this.queue[k].req.length;
      }
      const run = this.queue.splice(0, k);
      this.calls++;
      this.requests += k;
      const t0 = performance.now();
      const r = this.ql.batch(n);
      /** @type {any[]} */
      const results = r >= 0 ? JSON.parse(utf8.decode(this.ql.out)) : [];
      this.ms += performance.now() - t0;
      for (let i = 0; i < run.length; i++) {
        run[i].resolve(results[i] ?? { error: { message: `batch: no result for request ${i} of ${run.length} (${n} bytes)` } });
      }
    }
  }
}

/**
 * openRequest is the batch request OPEN of a conversation of protocol
 * with options (null and undefined values left out), or the Failure that
 * they do not fit it.
 * @param {string} protocol
 * @param {import("./querylens").Options} [options]
 * @returns {Uint8Array | import("./querylens").Failure}
 */
function openRequest(protocol, options) {
  const p = utf8enc.encode(protocol);
  const kv = Object.entries(options ?? {}).filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => [utf8enc.encode(k), utf8enc.encode(String(v))]);
  if (p.length > 255 || kv.length > 255 || kv.some(([k, v]) => k.length > 255 || v.length > 65535)) {
    return { error: { message: "open: protocol, option names or values too long" } };
  }
  const req = new Uint8Array(3 + p.length + kv.reduce((n, [k, v]) => n + 3 + k.length + v.length, 0));
  let o = 0;
  req[o++] = 0x01;
  req[o++] = p.length;
  req.set(p, o); o += p.length;
  req[o++] = kv.length;
  for (const [k, v] of kv) {
    req[o++] = k.length;
    req.set(k, o); o += k.length;
    req[o++] = v.length >> 8;
    req[o++] = v.length & 0xff;
    req.set(v, o); o += v.length;
  }
  return req;
}
