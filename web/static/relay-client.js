// @ts-check
// The relay client: one WebSocket to the relay, speaking
// querylens.relay.v1 (the frames are listed in relay.js), with its HELLO,
// the queue of queries beyond the relay's in-flight limit (follow-ups
// first), the BATCH messages both ways, and the reconnect after a drop.

import { RelayCode, RelayCodeName, RelayEndName } from "./model.js";

export const SUBPROTOCOL = "querylens.relay.v1";
/** SUBPROTOCOL with BATCH messages from the relay (wire.SubprotocolBatch). */
export const SUBPROTOCOL_BATCH = "querylens.relay.v1.batch";
/**
 * SUBPROTOCOL_BATCH with stream exchanges (wire.SubprotocolStream): EXCHANGE,
 * by which the relay holds one conversation of a TCP protocol itself, and
 * CHUNK, its reply's bytes. HELLO says version 2 on it.
 */
export const SUBPROTOCOL_STREAM = "querylens.relay.v2";

/** Relay ERROR codes by number (model.js, from wire.Code). */
export const ERROR_CODES = RelayCodeName;

/** END reasons by number (model.js, from wire.EndReason): 3 and after are an EXCHANGE's. */
const END_REASONS = RelayEndName;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** CANCEL_WAIT_MS is how long a cancelled query waits for the relay's END before it ends anyway. */
const CANCEL_WAIT_MS = 3000;

/** MAX_OUT_BATCH bounds a BATCH the page sends, as the relay bounds its own (64 KiB). */
const MAX_OUT_BATCH = 64 << 10;

/**
 * STREAMS_PER_CLIENT is how many stream (TCP) exchanges the client starts
 * with in progress at once: the relay's default cap of connections in
 * progress per client address (wire.DefaultStreamsPerClient; HELLO does not
 * carry it). While exchanges wait, each one that ends raises the client's
 * cap by one, as TCP's slow start does, up to the cap the relay showed: it
 * refuses an exchange past its caps (tcp-per-client: an operator's limit,
 * another page of the same address; tcp-cap: the relay's connections in
 * all; tcp-per-target: other clients asking the same host), and the client then takes what it has in progress as the
 * cap, holds that exchange and asks again when one of its own ends (or
 * STREAM_RETRY_MS later when none is in progress), at most STREAM_RETRIES
 * times. A list of a thousand Minecraft servers is so asked in full, at the
 * relay's pace, instead of mostly refused.
 */
const STREAMS_PER_CLIENT = 8;
const STREAM_RETRIES = 6;
const STREAM_RETRY_MS = 250;

/** hostOf is target's host: "host:port" and "[v6]:port" less the port. @param {string} target */
function hostOf(target) {
  const i = target.lastIndexOf(":");
  return i > 0 ? target.slice(0, i) : target;
}

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
 * exchangeFrame is the EXCHANGE frame asking the relay to hold one
 * conversation of a stream protocol with target, the codec building its
 * query from options, or why there is none (a field longer than its
 * length byte can say). The options go in byte order of their keys, as
 * the relay wants them.
 * @param {number} id @param {string} protocol @param {string} target
 * @param {Record<string, string>} options
 * @returns {Uint8Array|string}
 */
export function exchangeFrame(id, protocol, target, options) {
  const p = enc.encode(protocol);
  const t = enc.encode(target);
  if (p.length > 255) return `protocol name of ${p.length} bytes (at most 255)`;
  if (t.length > 255) return `target of ${t.length} bytes (at most 255): ${target.slice(0, 40)}…`;
  /** @type {[Uint8Array, Uint8Array][]} */
  const pairs = [];
  for (const [k, v] of Object.entries(options ?? {})) {
    const kb = enc.encode(k);
    const vb = enc.encode(String(v));
    if (kb.length === 0 || kb.length > 255 || vb.length > 255) return `option ${k.slice(0, 40)}: key or value of more than 255 bytes, or an empty key`;
    pairs.push([kb, vb]);
  }
  pairs.sort((a, b) => compareBytes(a[0], b[0]));
  let n = 1 + 4 + 1 + p.length + 1 + t.length;
  for (const [k, v] of pairs) n += 2 + k.length + v.length;
  const buf = new Uint8Array(n);
  buf[0] = 0x05;
  new DataView(buf.buffer).setUint32(1, id);
  let o = 5;
  for (const b of [p, t]) {
    buf[o++] = b.length;
    buf.set(b, o);
    o += b.length;
  }
  for (const [k, v] of pairs) {
    buf[o++] = k.length;
    buf.set(k, o);
    o += k.length;
    buf[o++] = v.length;
    buf.set(v, o);
    o += v.length;
  }
  return buf;
}

/** compareBytes orders byte strings as Go's bytes.Compare. @param {Uint8Array} a @param {Uint8Array} b */
function compareBytes(a, b) {
  for (let i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
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
    // Stream exchanges: in progress (sent, not ended) in all and per
    // target host, the caps learned from the relay's refusals, and the
    // exchanges held back by them, oldest first (#pump, #refused).
    this.streamsOpen = 0;
    /** @type {Map<string, number>} */
    this.hostStreams = new Map();
    this.streamCap = STREAMS_PER_CLIENT;
    this.streamCeiling = Infinity; // the relay's cap, once it refused one
    /** @type {Map<string, number>} */
    this.hostCaps = new Map();
    /** @type {any[]} */
    this.held = [];
    this.heldTimer = 0;
  }

  /** connect opens the socket (once) and resolves to the HELLO. */
  connect() {
    this.ready ??= new Promise((resolve, reject) => {
      // A relay that knows stream exchanges picks v2, one that knows
      // BATCH picks it; an older one picks v1.
      const ws = new WebSocket(this.url, [SUBPROTOCOL_STREAM, SUBPROTOCOL_BATCH, SUBPROTOCOL]);
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

  /**
   * exchange asks the relay to hold one conversation of a stream (TCP)
   * protocol with target, its codec building the query from options, and
   * reports the reply through handlers {chunk(bytes, offset, flags),
   * end(reason, chunks), error(code, message)} (and handlers.sent() as
   * query's): the chunks come in order, each at the offset where the one
   * before stopped, and end() says why the stream stopped (RelayEndName:
   * done, cap, the server's failures, slow-client, cancelled). A relay
   * without SUBPROTOCOL_STREAM fails it with error not-a-query. It returns
   * the id (for cancel).
   * @param {string} protocol @param {string} target @param {Record<string, string>} options
   * @param {any} handlers @param {boolean} [followUp]
   */
  exchange(protocol, target, options, handlers, followUp = false) {
    const id = this.nextId++;
    if (this.nextId > 0xffffffff) this.nextId = 1;
    const buf = exchangeFrame(id, protocol, target, options);
    const entry = { id, frame: buf, handlers, sent: false, freed: false, at: performance.now(), stream: true, host: hostOf(target), retries: 0 };
    this.open.set(id, entry);
    if (typeof buf === "string") {
      queueMicrotask(() => this.#finish(id, (hd) => hd.error?.(RelayCode.badFrame, buf)));
      return id;
    }
    (followUp ? this.followUps : this.queue).push(entry);
    if (this.ws?.readyState === WebSocket.OPEN && this.hello) this.#pump();
    else this.connect().then(() => this.#pump(), () => {});
    return id;
  }

  /** streams reports whether the relay holds stream exchanges (SUBPROTOCOL_STREAM). */
  get streams() {
    return this.ws?.protocol === SUBPROTOCOL_STREAM;
  }

  /** cancel stops listening for replies to id. */
  cancel(id) {
    const q = this.open.get(id);
    if (!q) return;
    if (!q.sent) {
      this.queue = this.queue.filter((x) => x !== q);
      this.followUps = this.followUps.filter((x) => x !== q);
      this.held = this.held.filter((x) => x !== q);
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
    // Held stream exchanges first, as far as the caps now allow.
    if (this.held.length && this.streamsOpen < this.streamCap) {
      const still = [];
      for (const q of this.held) {
        if (this.sent < max && this.#streamFits(q)) this.#start(q);
        else still.push(q);
      }
      this.held = still;
    }
    while (this.sent < max && (this.followUps.length || this.queue.length)) {
      const q = /** @type {any} */ (this.followUps.length ? this.followUps.shift() : this.queue.shift());
      if (q.stream && !this.streams) {
        // An older relay: it would refuse the frame as unknown.
        this.#finish(q.id, (hd) => hd.error?.(RelayCode.notAQuery, "not-a-stream: this relay does not hold TCP exchanges"));
        continue;
      }
      if (q.stream && !this.#streamFits(q)) {
        this.held.push(q);
        continue;
      }
      this.#start(q);
    }
  }

  /** #streamFits says whether stream exchange q may start now. @param {any} q */
  #streamFits(q) {
    return this.streamsOpen < this.streamCap && (this.hostStreams.get(q.host) ?? 0) < (this.hostCaps.get(q.host) ?? Infinity);
  }

  /** #start sends q's frame. @param {any} q */
  #start(q) {
    q.sent = true;
    this.sent++;
    if (q.stream) {
      q.counted = true;
      this.streamsOpen++;
      this.hostStreams.set(q.host, (this.hostStreams.get(q.host) ?? 0) + 1);
    }
    this.queuedMs += performance.now() - q.at;
    this.#send(q.frame);
    q.handlers.sent?.();
  }

  /** #streamDone counts stream exchange q out of those in progress. @param {any} q */
  #streamDone(q) {
    if (!q.counted) return;
    q.counted = false;
    this.streamsOpen--;
    const n = (this.hostStreams.get(q.host) ?? 1) - 1;
    if (n > 0) this.hostStreams.set(q.host, n);
    else this.hostStreams.delete(q.host);
  }

  /**
   * #refused takes the relay's refusal of stream exchange q at one of its
   * caps of connections in progress: it lowers the client's cap to what is
   * in progress without q and holds q to ask again. It reports false when
   * q has been asked too often, which then fails with the refusal.
   * @param {any} q @param {string} msg the ERROR's message, its rule first
   */
  #refused(q, msg) {
    // tcp-cap is the relay's cap in all: this client's share of it is
    // learned like its own cap.
    const perClient = msg.startsWith("tcp-per-client") || msg.startsWith("tcp-cap");
    if (!q.stream || !(perClient || msg.startsWith("tcp-per-target")) || q.retries >= STREAM_RETRIES) return false;
    q.retries++;
    this.#streamDone(q);
    if (q.sent && !q.freed) this.sent--;
    q.sent = false;
    if (perClient) this.streamCap = this.streamCeiling = Math.max(1, Math.min(this.streamCap, this.streamsOpen));
    else this.hostCaps.set(q.host, Math.max(1, this.hostStreams.get(q.host) ?? 0));
    this.held.unshift(q); // it was asked before those held by the caps

    // Held exchanges go again when one of this client's own ends; with
    // none in progress (the cap is another page's), after a pause.
    if (!this.heldTimer && (perClient ? this.streamsOpen : this.hostStreams.get(q.host) ?? 0) === 0) {
      this.heldTimer = setTimeout(() => {
        this.heldTimer = 0;
        this.streamCeiling = Infinity;
        this.hostCaps.clear();
        this.#pump();
      }, STREAM_RETRY_MS * q.retries);
    }
    return true;
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
    const batches = this.ws?.protocol === SUBPROTOCOL_BATCH || this.ws?.protocol === SUBPROTOCOL_STREAM;
    if (!batches || frame.length > MAX_OUT_BATCH - 3) {
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
    if (q.stream) {
      if (q.counted && this.held.length && this.streamCap < this.streamCeiling) this.streamCap++;
      this.#streamDone(q);
      if (!q.sent) this.held = this.held.filter((x) => x !== q);
    }
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
      case 0x86: {
        const q = this.open.get(v.getUint32(1));
        if (q && !q.cancelled) q.handlers.chunk?.(bytes.slice(10), v.getUint32(5), v.getUint8(9));
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
        const q = this.open.get(id);
        if (q?.stream && q.sent && !q.cancelled && this.#refused(q, msg)) {
          this.#pump();
          return;
        }
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
    this.held = [];
    this.sent = 0;
    this.streamsOpen = 0;
    this.hostStreams.clear();
    this.streamCap = STREAMS_PER_CLIENT;
    this.streamCeiling = Infinity;
    this.hostCaps.clear();
    clearTimeout(this.heldTimer);
    this.heldTimer = 0;
    this.ready = null;
    this.hello = null;
    this.dispatchEvent(new CustomEvent("close", { detail: { reason: why } }));
    // Reconnect with backoff, so a relay restart heals the page.
    const delay = Math.min(30000, 1000 * 2 ** this.retry++);
    setTimeout(() => this.connect().catch(() => {}), delay);
  }
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
