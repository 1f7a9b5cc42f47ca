// @ts-check
// Asking the servers: the page sends the decoding worker (worker.js, through
// live.js) the rows to ask, in the order they are seen (the rows in view,
// then the filtered rows in order, then the others), a few at a time within
// the relay's limit (HELLO's in-flight count), and applies the answers it
// brings back, at most once per frame.
import { showRelay, markFirstDecode, replyTimeout } from "./ql.js";
import { DecodeWorker } from "./live.js";
import { PageState } from "./model.js";
import { listOptions, minAskMs } from "./browse-config.js";
import { rows, byKey, apply, changed, linked } from "./browse-rows.js";
import { hold } from "./browse-hold.js";
import { order, orderPending, sendRows, invalidate, seq } from "./browse-order.js";
import { win, bound, drawSoon, drawHeld } from "./browse-table.js";
import { master } from "./browse-masters.js";
import { detected } from "./browse-detect.js";
import { progress } from "./browse-progress.js";

/** @typedef {import("./browse-rows.js").Row} Row */

/** The decoding worker, once start connected it. @type {DecodeWorker} */
export let relay;
/** connected says the page asks through the worker (from start until its relay failed). */
export let connected = false;
export let asked = 0;
export let answered = 0;
export let outstanding = 0; // asks sent to the decoding worker and not answered
let waiting = 0; // rows marked want (an upper bound: asks clear it lazily)
// askAfter is the first order (view.js query) that holds the rows wanted
// and not yet asked, or 0 when none waits for one.
let askAfter = 0;
let orderCursor = 0; // position in order from which pumpAsks looks for rows
let rowCursor = 0; // index in rows from which it looks for rows the filters hide

/**
 * connect adopts the decoding worker boot.js started and has it connect
 * to the relay at path; the page asks at once (the worker keeps the asks
 * until its relay connection and decoder are ready). It resolves once
 * they are, and rejects when they cannot be.
 * @param {string} path
 */
export function connect(path) {
  relay = DecodeWorker.shared();
  showRelay(relay);
  const ready = relay.start(path, results);
  connected = true;
  return ready;
}

/** disconnect forgets the asks out, after the worker failed: the rows asked wait again. */
export function disconnect() {
  connected = false;
  outstanding = 0;
  for (const r of rows) {
    r.queued = false;
    if (r.state === PageState.querying) r.state = PageState.pending, changed(r);
  }
}

/** countFound counts an answer the page got without asking (a detection's). */
export function countFound() {
  asked++;
  answered++;
}

/** minInterval is how long r waits between two asks, for its protocol and its backoff. @param {Row} r */
export function minInterval(r) {
  const base = Math.max(relay?.cacheTTL ?? 0, minAskMs[r.protocol] ?? 0);
  return base * r.backoff;
}

/**
 * ask sends r to the worker unless it was asked too recently for its
 * protocol. Callers update the progress line once after their asks.
 * @param {Row} r
 */
export function ask(r, now = Date.now()) {
  r.want = false;
  if (r.queued) return true;
  if (r.lastAsked && now - r.lastAsked < minInterval(r)) return false;
  r.queued = true;
  r.lastAsked = now;
  if (r.state === PageState.pending) {
    // Pending and querying sort and filter alike: view.js hears of the
    // row again with its answer; only the drawn rows need the new word.
    r.state = PageState.querying;
    if (bound.has(r.i)) drawSoon(r);
  }
  asked++;
  outstanding++;
  relay.ask({ key: r.key, protocol: r.protocol, target: r.addr, options: r.options ?? listOptions[r.protocol] ?? null, timeoutMs: replyTimeout(relay, 1500) });
  return true;
}

/**
 * want marks rows to be asked; pumpAsks sends them, in the order the
 * person sees them, once view.js has ordered them.
 * @param {Iterable<Row>} list
 */
export function want(list) {
  let n = 0;
  for (const r of list) if (!r.gone && !r.queued) (r.want = true), n++;
  if (n) {
    waiting += n;
    // An order asked before now, still on its way, does not hold them.
    askAfter = seq + 1;
    invalidate();
  }
}

/**
 * inFlightLimit is how many asks may wait in the decoding worker: as many
 * as the relay lets it run at once, so that what the person scrolls to
 * next is asked next, not after a queue of thousands.
 */
function inFlightLimit() {
  return Math.max(8, relay?.maxInFlight ?? 16);
}

/**
 * pumpAsks asks wanted rows while fewer than inFlightLimit are out: first
 * the rows drawn, then the rows shown in their order, then the rest; not
 * while the person types in or scrolls a big list (hold), and then first
 * the rows the last search shows and the rows in view.
 */
export function pumpAsks() {
  // Rows just wanted are asked once view.js has put them in order (and
  // they are drawn): ask in the order shown, and show before asking.
  if (!connected || waiting <= 0 || askAfter) return;
  const at = performance.now();
  if (hold.typing(at) || hold.scrolling(at)) return afterPause();
  const limit = inFlightLimit();
  if (outstanding >= limit) return;
  const now = Date.now();
  const take = (/** @type {Row|undefined} */ r) => {
    if (r?.want && !r.gone) ask(r, now);
    return outstanding >= limit;
  };
  for (let k = win.first; k < win.last && k < order.length; k++) if (take(rows[order[k]])) return progress();
  for (; orderCursor < order.length; orderCursor++) if (take(rows[order[orderCursor]])) return progress();
  for (; rowCursor < rows.length; rowCursor++) if (take(rows[rowCursor])) return progress();
  waiting = 0; // every wanted row was looked at
  progress();
}

/**
 * ordered is told the order of view.js query n is drawn: the rows are
 * asked in it, from its start, and the rows wanted before its query was
 * sent may go (not those wanted while it was on its way: they are not in
 * it yet).
 * @param {number} n
 */
export function ordered(n) {
  orderCursor = 0;
  if (askAfter && n >= askAfter) {
    askAfter = 0;
    rowCursor = 0;
  }
  pumpAsks();
}

/**
 * results applies a batch of finished conversations from the worker.
 * While the person types in a big list (hold.holding), the servers'
 * answers are kept (held) and applied together once typing pauses:
 * nothing is drawn, sent to view.js or counted for them until then, so
 * that a keystroke's frames draw the keystroke's order only.
 * The status pages' paths the worker found (link) come first: an
 * answer's row links to its server when it is drawn.
 * @param {any[]} list @param {object} _stats
 * @param {Record<string, string>|null} paths
 */
function results(list, _stats, paths) {
  if (paths) for (const r of linked(paths)) if (bound.has(r.i)) drawSoon(r);
  if (!list.length) return;
  const holding = hold.holding(performance.now());
  if (!holding && hold.held.length) applyHeld();
  for (const res of list) {
    if (res.key.startsWith("master:")) {
      master(res);
      continue;
    }
    if (res.key.startsWith("detect:")) {
      detected(res);
      continue;
    }
    const r = byKey.get(res.key);
    if (!r) continue;
    if (r.queued) {
      r.queued = false;
      outstanding--;
    }
    if (holding) hold.keep(r, res);
    else answer(r, res);
  }
  markFirstDecode();
  // Held answers mean typing, when no ask goes either (pumpAsks).
  if (holding) return afterPause();
  // While an order is on its way (a keystroke's), the answers' rows wait:
  // sent now, they would be cloned in the frames that draw that order and
  // make view.js order them first; they go with the next batch or order.
  if (!orderPending()) sendRows();
  pumpAsks();
  progress();
}

/** answer applies res to r and counts it answered. @param {Row} r @param {any} res */
function answer(r, res) {
  answered++;
  apply(r, res);
}

/** afterPause has the hold release the answers and ask again once typing pauses and scrolling rests. */
function afterPause() {
  hold.afterPause({ waiting: () => waiting, release, pump: pumpAsks });
}

/** applyHeld applies the held answers and draws the rows in view they and the asks meanwhile changed. */
function applyHeld() {
  for (const { r, res } of hold.take()) answer(r, res);
  drawHeld();
}

/** release applies the held answers, sends their rows to view.js, and asks on. */
function release() {
  applyHeld();
  if (!orderPending()) sendRows();
  pumpAsks();
  progress();
}
