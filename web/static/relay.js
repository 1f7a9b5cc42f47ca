// @ts-check
// The page's side of the relay: the querylens.relay.v1 WebSocket protocol
// (binary frames, integers big-endian) and a driver that runs one decoder
// conversation through it.
//
//   page → relay  0x01 QUERY  u32 id | u8 n | protocol | u8 m | target | datagram
//                 0x02 PING   u32 nonce
//                 0x03 CANCEL u32 id
//                 0x04 RELEASE u32 id  (CANCEL without the END)
//                 0x85 BATCH  (u16 n | frame[n])+  the frames above, in order, in one message
//                             of at most 64 KiB: with querylens.relay.v1.batch, the frames one
//                             task makes go together (Relay.#send)
//   relay → page  0x80 HELLO  u8 version | u16 max datagram | u32 reply window ms
//                             | u16 max in-flight | u32 cache TTL ms
//                 0x81 REPLY  u32 id | u32 rtt µs | u8 flags (1 cached, 2 coalesced) | datagram
//                 0x82 END    u32 id | u8 reason (0 window closed, 1 byte cap, 2 cancelled) | u16 replies
//                 0x83 ERROR  u32 id | u8 code | u16 n | message
//                 0x84 PONG   u32 nonce
//                 0x85 BATCH  (u16 n | frame[n])+  the frames above but HELLO, in order, in one
//                             message: only with querylens.relay.v1.batch, which the page offers
//                             first (one message event for the replies that came together)

import { State, PageState, RelayCode, RelayCodeName, Denied } from "./model.js";

// The worker reads the model through this module, which it imports already.
export { State, PageState, Row } from "./model.js";

export const SUBPROTOCOL = "querylens.relay.v1";
/** SUBPROTOCOL with BATCH messages from the relay (wire.SubprotocolBatch). */
export const SUBPROTOCOL_BATCH = "querylens.relay.v1.batch";

/** Relay ERROR codes by number (model.js, from wire.Code). */
export const ERROR_CODES = RelayCodeName;

const END_REASONS = { 0: "window", 1: "byte-cap", 2: "cancelled" };

const enc = new TextEncoder();
const dec = new TextDecoder();

/** CANCEL_WAIT_MS is how long a cancelled query waits for the relay's END before it ends anyway. */
const CANCEL_WAIT_MS = 3000;

/** MAX_OUT_BATCH bounds a BATCH the page sends, as the relay bounds its own (64 KiB). */
const MAX_OUT_BATCH = 64 << 10;

/**
 * idFrame is a frame of a type and a u32 (PING's nonce, CANCEL's id).
 * @param {number} type @param {number} id
 */
function idFrame(type, id) {
  const f = new Uint8Array(5);
  f[0] = type;
  new DataView(f.buffer).setUint32(1, id);
  return f;
}

/** The protocols' names as bytes, encoded once. @type {Map<string, Uint8Array>} */
const protocolBytes = new Map();

/**
 * queryFrame is the QUERY frame for a datagram to target, or why there is
 * none (a name or target longer than its length byte can say). A target
 * is a host and port, ASCII but for an internationalized host name, and
 * is written as it is read: TextEncoder is the slow path, for the rest.
 * @param {number} id @param {string} protocol @param {string} target @param {Uint8Array} datagram
 * @returns {Uint8Array|string}
 */
export function queryFrame(id, protocol, target, datagram) {
  let p = protocolBytes.get(protocol);
  if (!p) {
    p = enc.encode(protocol);
    if (protocolBytes.size < 64) protocolBytes.set(protocol, p);
  }
  let ascii = target.length <= 255;
  for (let i = 0; ascii && i < target.length; i++) ascii = target.charCodeAt(i) < 0x80;
  const t = ascii ? null : enc.encode(target);
  const tn = t ? t.length : target.length;
  if (p.length > 255) return `protocol name of ${p.length} bytes (at most 255)`;
  if (tn > 255) return `target of ${tn} bytes (at most 255): ${target.slice(0, 40)}…`;
  const buf = new Uint8Array(1 + 4 + 1 + p.length + 1 + tn + datagram.length);
  buf[0] = 0x01;
  new DataView(buf.buffer).setUint32(1, id);
  let o = 5;
  buf[o++] = p.length;
  buf.set(p, o);
  o += p.length;
  buf[o++] = tn;
  if (t) buf.set(t, o);
  else for (let i = 0; i < tn; i++) buf[o + i] = target.charCodeAt(i);
  buf.set(datagram, o + tn);
  return buf;
}

/**
 * Relay is one WebSocket to the relay. It queues queries beyond the
 * relay's in-flight limit (from HELLO) and reconnects after a drop, failing
 * the queries that were open. Events: "open" (after HELLO), "close".
 */
export class Relay extends EventTarget {
  constructor(path = "/relay") {
    super();
    const u = new URL(path, location.href);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    this.url = u.href;
    this.hello = null;
    this.nextId = 1;
    this.open = new Map(); // id → handlers
    // Frames waiting for an in-flight slot: a conversation's follow-ups
    // (a challenge's answer, its next step) go before first queries, so
    // that a conversation under way is never starved by new ones.
    this.queue = [];
    this.followUps = [];
    this.sent = 0; // queries sent and not ended: the relay's in-flight count
    this.queuedMs = 0; // time queries waited here for an in-flight slot, in all
    this.pings = new Map(); // nonce → {resolve, t0}
    this.ready = null;
    this.retry = 0;
    this.failure = ""; // why the page closed the socket, when it did
    // For the page's benchmark: the messages read and the ms spent
    // reading them (their frames' handlers included).
    this.messages = 0;
    this.readMs = 0;
    // and the frames sent (QUERY, CANCEL, PING), the messages they went
    // in and the ms WebSocket.send took.
    this.framesSent = 0;
    this.messagesSent = 0;
    this.sendMs = 0;
    // The cancelled queries whose END may not come, oldest first, and
    // the timer for the first (#endLater).
    /** @type {{id: number, at: number}[]} */
    this.ending = [];
    this.endTimer = 0;
    // The frames waiting for the end of the task (#send), and the bytes
    // of the BATCH they would make.
    /** @type {Uint8Array[]} */
    this.out = [];
    this.outBytes = 1;
  }

  /** connect opens the socket (once) and resolves to the HELLO. */
  connect() {
    this.ready ??= new Promise((resolve, reject) => {
      // A relay that knows BATCH picks it; an older one picks v1.
      const ws = new WebSocket(this.url, [SUBPROTOCOL_BATCH, SUBPROTOCOL]);
      ws.binaryType = "arraybuffer";
      this.ws = ws;
      ws.onmessage = (e) => {
        const t0 = performance.now();
        this.messages++;
        this.#message(e.data, ws, resolve);
        this.readMs += performance.now() - t0;
      };
      ws.onclose = (e) => {
        const why = this.failure || e.reason || `connection closed (${e.code})`;
        this.failure = "";
        reject(new Error(`relay: ${why}`));
        this.#closed(why);
      };
    });
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
  async ping() {
    await this.connect();
    const nonce = (Math.random() * 2 ** 32) >>> 0;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.pings.delete(nonce); reject(new Error("relay: no PONG")); }, 5000);
      this.pings.set(nonce, { t0: performance.now(), resolve: (ms) => { clearTimeout(timer); resolve(ms); } });
      this.#send(idFrame(0x02, nonce));
    });
  }

  /**
   * query sends one datagram to target and reports what comes back through
   * handlers {reply(bytes, rttMs, flags), end(reason, replies),
   * error(code, message)}, and its leaving for the relay through
   * handlers.sent() (it may wait for an in-flight slot first). Every query ends with exactly one end() or
   * error() call. It returns the query id (for cancel). followUp marks
   * a query of a conversation under way, sent before the first queries
   * waiting.
   */
  query(protocol, target, datagram, handlers, followUp = false) {
    const id = this.nextId++;
    if (this.nextId > 0xffffffff) this.nextId = 1;
    const buf = queryFrame(id, protocol, target, datagram);
    const entry = { id, frame: buf, handlers, sent: false, freed: false, at: performance.now() };
    this.open.set(id, entry);
    if (typeof buf === "string") {
      // Not a frame the relay could read: this query fails here, as the
      // relay would fail it, after the caller has its id.
      queueMicrotask(() => this.#finish(id, (hd) => hd.error?.(RelayCode.badFrame, buf)));
      return id;
    }
    (followUp ? this.followUps : this.queue).push(entry);
    if (this.ws?.readyState === WebSocket.OPEN && this.hello) this.#pump();
    else this.connect().then(() => this.#pump(), () => {});
    return id;
  }

  /** cancel stops listening for replies to id. */
  cancel(id) {
    const q = this.open.get(id);
    if (!q) return;
    if (!q.sent) {
      this.queue = this.queue.filter((x) => x !== q);
      this.followUps = this.followUps.filter((x) => x !== q);
      this.#finish(id, (hd) => hd.end?.("cancelled", 0));
      return;
    }
    if (q.cancelled) return;
    q.cancelled = true;
    // The relay reads frames in order and frees the id, its place among
    // MaxInFlight and its upstream slot before it reads the next one: the
    // query counts out as the CANCEL leaves, and a waiting one may go.
    if (this.ws?.readyState === WebSocket.OPEN) {
      this.#send(idFrame(0x03, id));
      q.freed = true;
      this.sent--;
      this.#pump();
    }
    // The relay answers END (cancelled); do not wait on it forever.
    this.#endLater(id);
  }

  /**
   * #endLater ends cancelled query id CANCEL_WAIT_MS from now if the
   * relay's END has not: one timer for all of them (a refresh cancels a
   * thousand queries, and a timer each costs the worker more than the
   * rest of a cancel), as they come due in the order they were cancelled.
   * @param {number} id
   */
  #endLater(id) {
    this.ending.push({ id, at: performance.now() + CANCEL_WAIT_MS });
    if (!this.endTimer) this.endTimer = setTimeout(() => this.#endDue(), CANCEL_WAIT_MS);
  }

  #endDue() {
    this.endTimer = 0;
    const now = performance.now();
    let i = 0;
    for (; i < this.ending.length && this.ending[i].at <= now; i++) {
      const id = this.ending[i].id;
      this.#finish(id, (hd) => hd.end?.("cancelled", 0));
    }
    this.ending.splice(0, i);
    // The next ones that come due within 50 ms end together.
    if (this.ending.length) this.endTimer = setTimeout(() => this.#endDue(), Math.max(50, this.ending[0].at - now));
  }

  /** connected reports whether the socket is open and HELLO came. */
  get connected() {
    return this.ws?.readyState === WebSocket.OPEN && this.hello !== null;
  }

  /**
   * #message reads one WebSocket message: a frame, or a BATCH of them.
   * @param {any} data @param {WebSocket} ws @param {(h: any) => void} onHello
   */
  #message(data, ws, onHello) {
    if (!(data instanceof ArrayBuffer)) return;
    if (new Uint8Array(data, 0, Math.min(1, data.byteLength))[0] !== 0x85) {
      this.#frame(new DataView(data), onHello);
      return;
    }
    const bad = batchError(data);
    if (bad) {
      // The relay broke the protocol: what it sends next cannot be
      // trusted. The close says why (onclose).
      this.failure = bad;
      ws.close(4000, bad.slice(0, 120));
      return;
    }
    const b = new Uint8Array(data);
    for (let o = 1; o < b.length;) {
      const n = (b[o] << 8) | b[o + 1];
      this.#frame(new DataView(data, o + 2, n), onHello);
      o += 2 + n;
    }
  }

  /** inFlight is how many queries were sent and have neither ended nor been cancelled. */
  get inFlight() {
    return this.sent;
  }

  #pump() {
    if (this.ws?.readyState !== WebSocket.OPEN || !this.hello) return;
    const max = this.maxInFlight;
    while (this.sent < max && (this.followUps.length || this.queue.length)) {
      const q = /** @type {any} */ (this.followUps.length ? this.followUps.shift() : this.queue.shift());
      q.sent = true;
      this.sent++;
      this.queuedMs += performance.now() - q.at;
      this.#send(q.frame);
      q.handlers.sent?.();
    }
  }

  /**
   * #send sends one frame. On SUBPROTOCOL_BATCH the frames of one task go
   * together, in one BATCH sent after it (a microtask): a browser's
   * WebSocket.send costs far more per call than per byte (about 160 µs for
   * a frame of 5 to 60 bytes, 1.2 ms for a BATCH of some 44 of them, in a
   * loaded worker), and a message's replies lead to as many queries and
   * cancels.
   * @param {Uint8Array} frame
   */
  #send(frame) {
    this.framesSent++;
    if (this.ws?.protocol !== SUBPROTOCOL_BATCH || frame.length > MAX_OUT_BATCH - 3) {
      this.#flushOut();
      this.#wsSend(frame);
      return;
    }
    if (this.outBytes + 2 + frame.length > MAX_OUT_BATCH) this.#flushOut();
    this.out.push(frame);
    this.outBytes += 2 + frame.length;
    if (this.out.length === 1) queueMicrotask(() => this.#flushOut());
  }

  /** #flushOut sends the frames #send holds: one alone, more in a BATCH. */
  #flushOut() {
    const frames = this.out;
    if (!frames.length) return;
    this.out = [];
    const n = this.outBytes;
    this.outBytes = 1;
    if (this.ws?.readyState !== WebSocket.OPEN) return; // the queries fail with the close
    if (frames.length === 1) {
      this.#wsSend(frames[0]);
      return;
    }
    const m = new Uint8Array(n);
    m[0] = 0x85;
    let o = 1;
    for (const f of frames) {
      m[o] = f.length >> 8;
      m[o + 1] = f.length & 0xff;
      m.set(f, o + 2);
      o += 2 + f.length;
    }
    this.#wsSend(m);
  }

  /** #wsSend sends one message, counting it and the time WebSocket.send took. @param {Uint8Array} m */
  #wsSend(m) {
    const t0 = performance.now();
    /** @type {WebSocket} */ (this.ws).send(m);
    this.sendMs += performance.now() - t0;
    this.messagesSent++;
  }

  #finish(id, call) {
    const q = this.open.get(id);
    if (!q) return;
    this.open.delete(id);
    if (q.sent && !q.freed) this.sent--;
    try { call(q.handlers); } finally { this.#pump(); }
  }

  #frame(v, onHello) {
    const type = v.getUint8(0);
    const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    switch (type) {
      case 0x80:
        this.hello = {
          version: v.getUint8(1), maxDatagram: v.getUint16(2), replyWindow: v.getUint32(4),
          maxInFlight: v.getUint16(8), cacheTTL: v.getUint32(10),
        };
        this.retry = 0;
        performance.mark("ql-relay-hello");
        onHello(this.hello);
        this.dispatchEvent(new Event("open"));
        this.#pump();
        return;
      case 0x81: {
        const q = this.open.get(v.getUint32(1));
        if (q && !q.cancelled) q.handlers.reply?.(bytes.slice(10), v.getUint32(5) / 1000, v.getUint8(9));
        return;
      }
      case 0x82:
        this.#finish(v.getUint32(1), (hd) => hd.end?.(END_REASONS[v.getUint8(5)] ?? "window", v.getUint16(6)));
        return;
      case 0x83: {
        const id = v.getUint32(1);
        const code = v.getUint8(5);
        const n = v.getUint16(6);
        const msg = dec.decode(bytes.subarray(8, 8 + n));
        if (id === 0) { console.warn("relay error:", ERROR_CODES[code], msg); return; }
        this.#finish(id, (hd) => hd.error?.(ERROR_CODES[code] ?? `code ${code}`, msg));
        return;
      }
      case 0x84: {
        const p = this.pings.get(v.getUint32(1));
        if (p) { this.pings.delete(v.getUint32(1)); p.resolve(performance.now() - p.t0); }
        return;
      }
    }
  }

  #closed(why) {
    for (const id of [...this.open.keys()]) this.#finish(id, (hd) => hd.error?.("closed", why));
    this.queue = [];
    this.followUps = [];
    this.sent = 0;
    this.ready = null;
    this.hello = null;
    this.dispatchEvent(new CustomEvent("close", { detail: { reason: why } }));
    // Reconnect with backoff, so a relay restart heals the page.
    const delay = Math.min(30000, 1000 * 2 ** this.retry++);
    setTimeout(() => this.connect().catch(() => {}), delay);
  }
}

/**
 * converse runs one conversation of the decoder (ql.newQuery) with target
 * through the relay: it sends what start() returns, feeds every reply, sends
 * what feed() asks for (challenges), and finishes when the decoder says the
 * message is complete, when every query's reply window closed, or
 * timeoutMs after the last query it sent (so a conversation of several
 * steps, A2S's INFO, PLAYER and RULES with their challenges, gets the time
 * for each, not for all together). It never rejects.
 *
 * The server browser runs its conversations with converseSummary instead.
 *
 * A reply the relay cut at its per-query cap (END reason byte-cap) sets
 * capped, and its message (or failure's partial message) gets the
 * warning "truncated".
 *
 * @returns {Promise<{message: object|null, summary: import("./querylens").Summary|null,
 *   rtt: number|null, cached: boolean, capped: boolean,
 *   replies: number, relayError: {code: string, message: string}|null,
 *   error: object|null, packets: object[], query: Uint8Array|null}>}
 */
export function converse(ql, relay, protocol, target, options = null, opts = {}) {
  const { timeoutMs = 4000, spans = false, onPacket = () => {} } = opts;
  return new Promise((resolve) => {
    const conv = ql.newQuery(protocol, options);
    const out = { message: null, summary: null, rtt: null, cached: false, capped: false, replies: 0, relayError: null, error: null, packets: [], query: null };
    if (conv.error) {
      out.error = conv.error;
      resolve(out);
      return;
    }
    const ids = new Set();
    let finished = false;
    let timer = 0;
    const packet = (p) => {
      out.packets.push(p);
      onPacket(p);
    };
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const id of ids) relay.cancel(id);
      if (out.replies) out.message = conv.result(out.query ? { spans, query: out.query } : { spans });
      if (out.capped) markTruncated(out.message);
      conv.close();
      resolve(out);
    };
    const send = (dg, followUp = false) => {
      arm(); // each query gets the whole time: a step that answers keeps the conversation going
      out.query = dg;
      packet({ direction: "sent", data: dg, time: Date.now(), protocol, target });
      const id = relay.query(protocol, target, dg, {
        reply(bytes, rtt, flags) {
          if (finished) return;
          out.replies++;
          out.rtt ??= rtt;
          out.cached ||= (flags & 1) !== 0;
          packet({ direction: "received", data: bytes, time: Date.now(), rtt, cached: (flags & 1) !== 0, protocol, target });
          const r = conv.feed(bytes);
          for (const s of r.send) send(s, true);
          // A reply that makes the decoder ask again (a challenge, or the
          // step before the next) is all this query gives: let the relay
          // end its exchange now, not at the end of the reply window.
          if (r.send.length) relay.cancel(id);
          if (r.done) finish();
        },
        end(reason) {
          if (reason === "byte-cap") out.capped = true;
          ids.delete(id);
          if (!ids.size) finish();
        },
        error(code, message) {
          ids.delete(id);
          out.relayError = { code, message };
          if (!ids.size) finish();
        },
      }, followUp);
      ids.add(id);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(finish, timeoutMs);
    };
    for (const dg of conv.start()) send(dg);
  });
}

/**
 * markTruncated adds the warning "truncated" to a decoded message, or to a
 * failure's partial message.
 * @param {any} msg
 */
function markTruncated(msg) {
  const m = msg?.partial ?? msg;
  if (m && Array.isArray(m.warnings) && !m.warnings.includes("truncated")) m.warnings.push("truncated");
  else if (m && !m.warnings) m.warnings = ["truncated"];
}

/**
 * converseSummary runs one conversation like converse, for the server
 * browser: through a Batch, so that its requests cross into the decoder
 * together with other servers', and giving the summary a server list
 * needs (codecs.AppendSummaryJSON) instead of the decoded message. It never rejects.
 *
 * @param {Batch} dec
 * @param {Relay} relay
 * @param {string} protocol
 * @param {string} target
 * @param {import("./querylens").Options} [options]
 * @param {{timeoutMs?: number, timing?: Timing}} [opts] timing, if
 *   given, adds up where the conversation's time went
 * @returns {Promise<{summary: import("./querylens").Summary|null,
 *   rtt: number|null, cached: boolean, capped: boolean,
 *   replies: number, relayError: {code: string, message: string}|null,
 *   error: object|null, packets: {direction: string, data: Uint8Array}[]}>}
 */
export function converseSummary(dec, relay, protocol, target, options = null, opts = {}) {
  const { timeoutMs = 4000, timing = null } = opts;
  const t0 = timing ? performance.now() : 0;
  /** @type {Awaited<ReturnType<typeof converseSummary>>} */
  const out = { summary: null, rtt: null, cached: false, capped: false, replies: 0, relayError: null, error: null, packets: [] };
  return new Promise((resolve) => {
    dec.open(protocol, options).then((/** @type {any} */ o) => {
      if (o.error) {
        out.error = o.error;
        resolve(out);
        return;
      }
      const handle = o.handle;
      const ids = new Set();
      let held = true; // Go holds the conversation
      let stepping = 0; // replies waiting in the batch
      let finished = false;
      let timer = 0;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        if (timing) {
          timing.conversations++;
          timing.conversationMs += performance.now() - t0;
        }
        for (const id of ids) relay.cancel(id);
        if (!held) {
          resolve(out);
          return;
        }
        held = false;
        // After any step still waiting in the batch: a reply that came
        // with the relay's END is in the summary.
        dec.finish(handle).then((s) => {
          if (out.replies && !out.summary) out.summary = s;
          resolve(out);
        });
      };
      // The relay ends every query it reads within its reply window
      // (REPLY and END, or ERROR timeout), so while the connection is up
      // and queries are open, the timer firing means the worker has not
      // read their frames yet (a page busy, or a machine loaded, reads
      // them late; timers can run before them): it waits up to
      // LATE_READS more timeouts for them instead of ending the row as
      // offline when the server answered.
      let late = 0;
      let unsent = 0; // queries waiting in the relay client for a slot
      const expire = () => {
        if (unsent > 0 && relay.connected) {
          // Not sent yet: its time starts when it is (handlers.sent).
          timer = setTimeout(expire, timeoutMs);
          return;
        }
        if (ids.size && relay.connected && late < LATE_READS) {
          late++;
          if (timing) timing.late++;
          timer = setTimeout(expire, timeoutMs);
          return;
        }
        finish();
      };
      /** @param {Uint8Array} dg @param {boolean} [followUp] */
      const send = (dg, followUp = false) => {
        let sentAt = timing ? performance.now() : 0;
        let answered = false;
        if (timing) timing.queries++;
        // Each query gets the whole time, as in converse, from when it
        // leaves for the relay (sent below).
        clearTimeout(timer);
        late = 0;
        timer = setTimeout(expire, timeoutMs);
        const queued = relay.connected === true;
        if (queued) unsent++;
        out.packets.push({ direction: "sent", data: dg });
        const id = relay.query(protocol, target, dg, {
          sent() {
            if (queued) unsent--;
            if (finished) return;
            if (timing) sentAt = performance.now();
            clearTimeout(timer);
            late = 0;
            timer = setTimeout(expire, timeoutMs);
          },
          reply(bytes, rtt, flags) {
            if (finished) return;
            const at = timing ? performance.now() : 0;
            if (timing && !answered) {
              answered = true;
              timing.answered++;
              timing.replyWaitMs += at - sentAt;
              timing.relayRttMs += rtt;
            }
            out.replies++;
            out.rtt ??= rtt;
            out.cached ||= (flags & 1) !== 0;
            out.packets.push({ direction: "received", data: bytes });
            stepping++;
            dec.step(handle, bytes).then((/** @type {any} */ r) => {
              stepping--;
              if (timing) {
                timing.steps++;
                timing.stepWaitMs += performance.now() - at;
                if (r.send?.length) timing.followUps += r.send.length;
              }
              if (r.summary) out.summary = r.summary;
              if (r.done) held = false;
              if (finished) return;
              // A challenge's answer, or the next step, asks again; the
              // query it answered gave all it will, so it is cancelled
              // rather than left open for the rest of the reply window:
              // open, it holds one of the connection's MaxInFlight ids and
              // one of the relay's upstream exchanges, and a conversation
              // of six steps would hold six.
              const again = r.send ?? [];
              for (const s of again) send(fromHex(s), true);
              if (again.length) relay.cancel(id);
              if (r.done || (!ids.size && !stepping)) finish();
            });
          },
          end(reason) {
            if (reason === "byte-cap") out.capped = true;
            ids.delete(id);
            if (!ids.size && !stepping) finish();
          },
          error(code, message) {
            ids.delete(id);
            out.relayError = { code, message };
            if (!ids.size && !stepping) finish();
          },
        }, followUp);
        ids.add(id);
      };
      for (const s of o.send) send(fromHex(s));
    });
  });
}

/**
 * Timing adds up where converseSummary's conversations spent their time
 * (ms), for the page's benchmark: from a query sent to its first reply
 * (the relay, the server and the worker's event loop), for the queries
 * answered, and of that the relay's own round trip upstream (its rtt),
 * from a reply to its decoder step's answer (the Batch's wait and the
 * decode), and the conversations whole; late counts the timeouts that
 * found their queries still open at a live relay (converseSummary).
 * @typedef {{conversations: number, conversationMs: number, queries: number,
 *   followUps: number, steps: number, stepWaitMs: number, answered: number, replyWaitMs: number,
 *   relayRttMs: number, late: number}} Timing
 */

/** @returns {Timing} */
export function newTiming() {
  return { conversations: 0, conversationMs: 0, queries: 0, followUps: 0, steps: 0, stepWaitMs: 0, answered: 0, replyWaitMs: 0, relayRttMs: 0, late: 0 };
}

const utf8 = new TextDecoder();
const utf8enc = new TextEncoder();

/**
 * later runs f after the tasks already waiting in the event loop (the
 * replies the relay sent meanwhile): a background-priority task where
 * the browser has scheduler.postTask, else a zero timeout.
 * @param {() => void} f
 */
function later(f) {
  const s = /** @type {any} */ (globalThis).scheduler;
  if (s?.postTask) s.postTask(f, { priority: "background" });
  else setTimeout(f, 0);
}

/** LATE_READS bounds how often converseSummary waits again for frames a busy page has not read. */
const LATE_READS = 2;

/**
 * EAGER_BATCH is how many queued decoder requests a Batch runs without
 * waiting for its scheduled flush.
 */
const EAGER_BATCH = 16;

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
    const p = utf8enc.encode(protocol);
    const kv = Object.entries(options ?? {}).filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [utf8enc.encode(k), utf8enc.encode(String(v))]);
    if (p.length > 255 || kv.length > 255 || kv.some(([k, v]) => k.length > 255 || v.length > 65535)) {
      return Promise.resolve({ error: { message: "open: protocol, option names or values too long" } });
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

/** fromHex reads the decoder's lowercase hex. */
function fromHex(hex) {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

/**
 * classify turns a conversation's outcome into the row state both pages
 * use: a server state of package server (model.js State, the Go status
 * page's names), or PageState.error when the page itself failed.
 */
export function classify(r) {
  if (r.error) return { state: PageState.error, detail: r.error.message };
  if (!r.replies) {
    const e = r.relayError;
    if (!e) return { state: State.offline, detail: "No answer before the reply window closed." };
    switch (e.code) {
      case RelayCode.rateLimited: return { state: State.relayLimited, detail: `The relay is limiting queries: ${e.message}` };
      case RelayCode.denied: return { state: State.refused, detail: `The relay does not query this address: ${e.message}` };
      case RelayCode.resolve:
        // A name that resolves to an address the relay refuses is refused;
        // one that does not resolve is unreachable (rule "resolve").
        if (!e.message.startsWith("resolve:")) return { state: State.refused, detail: `The relay does not query this address: ${e.message}` };
        return { state: State.unreachable, detail: `The host name does not resolve: ${e.message}` };
      case RelayCode.timeout: return { state: State.offline, detail: "No answer before the reply window closed." };
      case RelayCode.busy: return { state: State.relayLimited, detail: `The relay is busy: ${e.message}` };
    }
    return { state: State.unreachable, detail: `${e.code}: ${e.message}` };
  }
  // A summary has kind, denied and error where a message has them.
  const m = r.summary ?? r.message;
  if (m?.error) {
    const e = m.error;
    const where = e.field ? `${e.field} at offset ${e.offset}${e.layer ? ` of ${e.layer}` : ""}: ` : "";
    const cut = r.capped ? "The reply was larger than the relay lets one query bring back, and was cut: " : "";
    return { state: State.malformed, detail: cut + where + e.message };
  }
  if (m?.kind === "denied" || m?.kind === "master-denied") {
    if (m.denied === Denied.banned) return { state: State.banned, detail: "The server refuses queries from this relay." };
    if (m.denied === Denied.wrongVersion) return { state: State.malformed, detail: "The server does not speak this protocol version." };
    return { state: State.rateLimited, detail: "The server was asked too recently (its limit is one query per 10 s)." };
  }
  const warnings = Array.isArray(m?.warnings) ? m.warnings : [];
  return { state: State.online, detail: warnings.length ? `The server answered, with warnings: ${warnings.join("; ")}.` : "" };
}

/**
 * batchError checks a BATCH message (0x85, then u16 length and frame, at
 * least once) and says what is wrong with it, or "" when nothing is.
 * @param {ArrayBuffer} buf
 */
export function batchError(buf) {
  const b = new Uint8Array(buf);
  if (b.length < 2) return "relay: BATCH with no frame";
  for (let o = 1; o < b.length;) {
    if (b.length - o < 2) return `relay: BATCH frame length cut short at byte ${o}`;
    const n = (b[o] << 8) | b[o + 1];
    if (n === 0) return `relay: BATCH frame of no bytes at byte ${o}`;
    if (n > b.length - o - 2) return `relay: BATCH frame of ${n} bytes at byte ${o + 2} runs past the message's end (${b.length - o - 2} left)`;
    if (b[o + 2] === 0x85) return `relay: BATCH inside a BATCH at byte ${o + 2}`;
    o += 2 + n;
  }
  return "";
}
