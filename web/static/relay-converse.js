// @ts-check
// The conversation driver: one decoder conversation with a target through
// the relay client, whatever decodes it. A Decoding says how: converse
// gives it the inspector's full decode (ql.newQuery, answered at once),
// converseSummary the server browser's summary (a Batch, answered with
// other servers' requests). The driver owns the rest, the same for both:
// the queries and their follow-ups, the cancels, the timeout per query
// from when it leaves for the relay, and the frames a busy page reads late.

import { State, PageState, RelayCode, Denied } from "./model.js";
import { fromHex } from "./ql.js";

/** LATE_READS bounds how often a conversation waits again for frames a busy page has not read. */
const LATE_READS = 2;

/**
 * @template T
 * @typedef {T | Promise<T>} Maybe
 */

/**
 * Decoding is a decoder as the driver uses it. Each call may answer at
 * once or with a promise; the driver reads the answers in the order it
 * asked.
 *
 *   - start opens the conversation: the datagrams to send first, or the
 *     error that opening it failed with; for a stream (TCP) protocol, the
 *     options to ask the relay's EXCHANGE with (the relay holds the
 *     conversation; its CHUNKs go to step, and send is what the relay's
 *     own query writes, for the record);
 *   - step feeds it a reply: the datagrams it asks for next (a challenge's
 *     answer, the next step) and whether the message is complete;
 *   - finish is called once, when the conversation ends (not after a
 *     failed start), and fills the outcome's decoded part;
 *   - sent and received record a datagram that went and one that came.
 * @typedef {{start: () => Maybe<{error?: object|null, send?: Uint8Array[], exchange?: Record<string, string>}>,
 *   step: (bytes: Uint8Array) => Maybe<{send: Uint8Array[], done: boolean}>,
 *   finish: () => Maybe<void>,
 *   sent: (dg: Uint8Array) => void,
 *   received: (bytes: Uint8Array, rtt: number, flags: number) => void}} Decoding
 */

/**
 * Outcome is what the driver fills in every conversation's result.
 * @typedef {{rtt: number|null, cached: boolean, capped: boolean, replies: number,
 *   relayError: {code: string, message: string}|null, error: object|null}} Outcome
 */

/**
 * when calls f with v: now, or once v resolves when it is a promise (a
 * decoder that answers at once is driven without a microtask between a
 * reply and what it asks for).
 * @template T
 * @param {Maybe<T>} v @param {(v: T) => void} f
 */
function when(v, f) {
  if (typeof (/** @type {any} */ (v))?.then === "function") /** @type {Promise<T>} */ (v).then(f);
  else f(/** @type {T} */ (v));
}

/**
 * drive runs one conversation of d with target through relay: it sends
 * what start returns, feeds every reply to step, sends what step asks for
 * (challenges), and finishes when the decoder says the message is
 * complete, when every query ended (its reply window closed, or the relay
 * refused it), or timeoutMs after the last query left for the relay (so a
 * conversation of several steps, A2S's INFO, PLAYER and RULES with their
 * challenges, gets the time for each, not for all together). A query that
 * waits in the relay client for an in-flight slot has its time start when
 * it leaves. It never rejects.
 *
 * A reply the relay cut at its per-query cap (END reason byte-cap) sets
 * out.capped. opts.signal, when aborted, ends the conversation at once:
 * its open queries are cancelled at the relay (their in-flight slots
 * freed) and it resolves with what came so far.
 *
 * @template {Outcome} O
 * @param {Decoding} d
 * @param {import("./relay-client.js").Relay} relay
 * @param {string} protocol
 * @param {string} target
 * @param {O} out
 * @param {{timeoutMs?: number, timing?: Timing|null, signal?: AbortSignal}} opts timing, if
 *   given, adds up where the conversation's time went
 * @returns {Promise<O>}
 */
function drive(d, relay, protocol, target, out, opts) {
  const { timeoutMs = 4000, timing = null, signal } = opts;
  const t0 = timing ? performance.now() : 0;
  return new Promise((resolve) => when(d.start(), (o) => {
    if (o.error) {
      out.error = o.error;
      resolve(out);
      return;
    }
    const ids = new Set();
    let stepping = 0; // replies the decoder has not answered yet
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
      // After any step still waiting in the decoder: a reply that came
      // with the relay's END is in the result.
      when(d.finish(), () => resolve(out));
    };
    if (signal?.aborted) {
      finish();
      return;
    }
    signal?.addEventListener("abort", finish, { once: true });
    // The relay ends every query it reads within its reply window
    // (REPLY and END, or ERROR timeout), so while the connection is up
    // and queries are open, the timer firing means the page has not
    // read their frames yet (a page busy, or a machine loaded, reads
    // them late; timers can run before them): it waits up to
    // LATE_READS more timeouts for them instead of ending the
    // conversation unanswered when the server answered.
    let late = 0;
    let unsent = 0; // queries waiting in the relay client for a slot
    const expire = () => {
      if (unsent > 0 && relay.connected) {
        // Not sent yet: its time starts when it is (handlers.sent).
        restart();
        return;
      }
      if (ids.size && relay.connected && late < LATE_READS) {
        late++;
        if (timing) timing.late++;
        restart();
        return;
      }
      finish();
    };
    // The wait restarts with every query that leaves and every step, and
    // most conversations end long before it does: restarting moves due
    // alone, and a timer is set only when none is pending (one that fires
    // before due sets itself again for the rest). A worker's setTimeout
    // and clearTimeout cost some 10 µs each when it is busy, and a
    // thousand A2S conversations restarted their wait some 6,000 times.
    let due = 0;
    const wake = () => {
      timer = 0;
      if (finished) return;
      const left = due - performance.now();
      if (left > 0) timer = setTimeout(wake, left);
      else expire();
    };
    const restart = () => {
      due = performance.now() + timeoutMs;
      if (!timer) timer = setTimeout(wake, timeoutMs);
    };
    /** @param {Uint8Array} dg @param {boolean} [followUp] */
    const send = (dg, followUp = false) => {
      let sentAt = timing ? performance.now() : 0;
      let answered = false;
      if (timing) timing.queries++;
      // Each query gets the whole time, from when it leaves for the relay
      // (sent below): a step that answers keeps the conversation going.
      late = 0;
      restart();
      const queued = relay.connected === true;
      if (queued) unsent++;
      d.sent(dg);
      const id = relay.query(protocol, target, dg, {
        sent() {
          if (queued) unsent--;
          if (finished) return;
          if (timing) sentAt = performance.now();
          late = 0;
          restart();
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
          d.received(bytes, rtt, flags);
          stepping++;
          when(d.step(bytes), (r) => {
            stepping--;
            if (timing) {
              timing.steps++;
              timing.stepWaitMs += performance.now() - at;
              if (r.send.length) timing.followUps += r.send.length;
            }
            if (finished) return;
            // A challenge's answer, or the next step, asks again; the
            // query it answered gave all it will, so it is cancelled
            // rather than left open for the rest of the reply window:
            // open, it holds one of the connection's MaxInFlight ids and
            // one of the relay's upstream exchanges, and a conversation
            // of six steps would hold six.
            for (const s of r.send) send(s, true);
            if (r.send.length) relay.cancel(id);
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
    if (o.exchange) {
      // A stream protocol: one EXCHANGE, which the relay ends (END) within
      // its deadline; the timer only guards a relay that never does.
      for (const dg of o.send ?? []) d.sent(dg);
      timer = setTimeout(finish, Math.max(timeoutMs, 8000));
      let sentAt = performance.now();
      const id = relay.exchange(protocol, target, o.exchange, {
        sent() {
          sentAt = performance.now();
        },
        /** @param {Uint8Array} bytes @param {number} _offset @param {number} flags */
        chunk(bytes, _offset, flags) {
          if (finished) return;
          const rtt = performance.now() - sentAt;
          out.replies++;
          out.rtt ??= rtt;
          out.cached ||= (flags & 1) !== 0;
          d.received(bytes, rtt, flags);
          stepping++;
          when(d.step(bytes), (r) => {
            stepping--;
            if (finished) return;
            if (r.done || (!ids.size && !stepping)) finish();
          });
        },
        /** @param {string} reason */
        end(reason) {
          if (reason === "cap") out.capped = true;
          ids.delete(id);
          if (!stepping) finish();
        },
        /** @param {string} code @param {string} message */
        error(code, message) {
          ids.delete(id);
          out.relayError = { code, message };
          if (!stepping) finish();
        },
      });
      ids.add(id);
      return;
    }
    for (const dg of o.send ?? []) send(dg);
  }));
}

/**
 * converse runs one conversation of the decoder (ql.newQuery) with target
 * through the relay (drive), and gives the decoded message with every
 * packet that went and came (onPacket hears of each as it does). It
 * never rejects.
 *
 * The server browser runs its conversations with converseSummary instead.
 *
 * A reply the relay cut at its per-query cap (END reason byte-cap) sets
 * capped, and its message (or failure's partial message) gets the
 * warning "truncated".
 *
 * @param {import("./querylens").QueryLens} ql
 * @param {import("./relay-client.js").Relay} relay
 * @param {string} protocol
 * @param {string} target
 * @param {Record<string, any>|null} [options]
 * @param {{timeoutMs?: number, spans?: boolean, onPacket?: (p: object) => void, timing?: Timing}} [opts]
 * @returns {Promise<{message: object|null, summary: import("./querylens").Summary|null,
 *   rtt: number|null, cached: boolean, capped: boolean,
 *   replies: number, relayError: {code: string, message: string}|null,
 *   error: object|null, packets: object[], query: Uint8Array|null}>}
 */
export function converse(ql, relay, protocol, target, options = null, opts = {}) {
  const { spans = false, onPacket = () => {} } = opts;
  const out = { message: null, summary: null, rtt: null, cached: false, capped: false, replies: 0, relayError: null, error: null, packets: [], query: null };
  /** @param {object} p */
  const packet = (p) => {
    out.packets.push(p);
    onPacket(p);
  };
  /** @type {any} */
  let conv = null;
  return drive({
    start() {
      conv = ql.newQuery(protocol, options);
      if (conv.error) return { error: conv.error };
      // A stream protocol's conversation is the relay's to hold (EXCHANGE).
      return conv.stream ? { send: conv.start(), exchange: stringOptions(options) } : { send: conv.start() };
    },
    step: (bytes) => conv.feed(bytes),
    finish() {
      if (out.replies) out.message = conv.result(out.query ? { spans, query: out.query } : { spans });
      if (out.capped) markTruncated(out.message);
      conv.close();
    },
    sent(dg) {
      out.query = dg;
      packet({ direction: "sent", data: dg, time: Date.now(), protocol, target });
    },
    received(bytes, rtt, flags) {
      packet({ direction: "received", data: bytes, time: Date.now(), rtt, cached: (flags & 1) !== 0, protocol, target });
    },
  }, relay, protocol, target, out, opts);
}

/**
 * stringOptions is a conversation's options as an EXCHANGE carries them.
 * @param {Record<string, any>|null|undefined} options
 * @returns {Record<string, string>}
 */
function stringOptions(options) {
  /** @type {Record<string, string>} */
  const o = {};
  for (const [k, v] of Object.entries(options ?? {})) if (v !== null && v !== undefined) o[k] = String(v);
  return o;
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
 * @param {import("./relay-batch.js").Batch} dec
 * @param {import("./relay-client.js").Relay} relay
 * @param {string} protocol
 * @param {string} target
 * @param {import("./querylens").Options} [options]
 * @param {{timeoutMs?: number, timing?: Timing, signal?: AbortSignal}} [opts] timing, if
 *   given, adds up where the conversation's time went; signal ends it (drive)
 * @returns {Promise<{summary: import("./querylens").Summary|null,
 *   rtt: number|null, cached: boolean, capped: boolean,
 *   replies: number, relayError: {code: string, message: string}|null,
 *   error: object|null, packets: {direction: string, data: Uint8Array}[]}>}
 */
export function converseSummary(dec, relay, protocol, target, options = null, opts = {}) {
  /** @type {Awaited<ReturnType<typeof converseSummary>>} */
  const out = { summary: null, rtt: null, cached: false, capped: false, replies: 0, relayError: null, error: null, packets: [] };
  let handle = 0;
  let held = false; // Go holds the conversation
  return drive({
    start: () => dec.open(protocol, options).then((/** @type {any} */ o) => {
      if (o.error) return { error: o.error };
      handle = o.handle;
      held = true;
      const send = o.send.map(fromHex);
      return o.stream ? { send, exchange: stringOptions(options) } : { send };
    }),
    step: (bytes) => dec.step(handle, bytes).then((/** @type {any} */ r) => {
      if (r.summary) out.summary = r.summary;
      if (r.done) held = false;
      return { send: (r.send ?? []).map(fromHex), done: !!r.done };
    }),
    finish() {
      if (!held) return;
      held = false;
      return dec.finish(handle).then((/** @type {any} */ s) => {
        if (out.replies && !out.summary) out.summary = s;
      });
    },
    sent(dg) {
      out.packets.push({ direction: "sent", data: dg });
    },
    received(bytes) {
      out.packets.push({ direction: "received", data: bytes });
    },
  }, relay, protocol, target, out, opts);
}

/**
 * Timing adds up where the conversations spent their time (ms), for the
 * page's benchmark: from a query sent to its first reply (the relay, the
 * server and the worker's event loop), for the queries answered, and of
 * that the relay's own round trip upstream (its rtt), from a reply to its
 * decoder step's answer (the Batch's wait and the decode), and the
 * conversations whole; late counts the timeouts that found their queries
 * still open at a live relay (drive).
 * @typedef {{conversations: number, conversationMs: number, queries: number,
 *   followUps: number, steps: number, stepWaitMs: number, answered: number, replyWaitMs: number,
 *   relayRttMs: number, late: number}} Timing
 */

/** @returns {Timing} */
export function newTiming() {
  return { conversations: 0, conversationMs: 0, queries: 0, followUps: 0, steps: 0, stepWaitMs: 0, answered: 0, replyWaitMs: 0, relayRttMs: 0, late: 0 };
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
