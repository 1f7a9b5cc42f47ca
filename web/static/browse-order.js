// @ts-check
// The order of the rows shown: filtering and sorting run in a second worker
// (view.js), which keeps a copy of the fields they read and answers each
// change with the ordered indexes of the rows to show, by message and, on a
// cross-origin isolated page, in memory both share; this thread sends it
// what changed, at most once per frame, and draws the orders it answers.
import { $, h } from "./ql.js";
import { State, PageState } from "./model.js";
import { BIG } from "./browse-config.js";
import { store } from "./browse-store.js";
import { rows, byKey, changedRows, modes } from "./browse-rows.js";
import { hold, HOLD_MAX_MS } from "./browse-hold.js";
import { ordered } from "./browse-asks.js";
import { showRows, markSort } from "./browse-table.js";
import { progress } from "./browse-progress.js";

/** @typedef {import("./browse-rows.js").Row} Row */

/** @type {Int32Array} the indexes of the rows shown, in order (from view.js) */
export let order = new Int32Array(0);
/** onlineCount is how many of the rows shown are online. */
export let onlineCount = 0;

// boot.js started it as the page began to load (layout.Page.View).
const viewer = /** @type {Worker|null} */ (/** @type {any} */ (globalThis).querylensBoot?.viewer);
if (!viewer) throw new Error("the page has no view worker (boot.js did not start it)");
const stateRank = {
  [State.online]: 0, [State.rateLimited]: 1, [State.relayLimited]: 1, [State.malformed]: 2,
  [PageState.querying]: 3, [PageState.pending]: 3, [State.offline]: 4,
};
viewer.postMessage({ type: "init", online: State.online, rank: stateRank });

/**
 * The orders view.js also writes to memory it shares with this page
 * (view.js's header), read at the animation frame after a query: after a
 * keystroke the browser holds this thread's other tasks (view.js's
 * message among them) until the frame that shows the typed character, so
 * an order read from the message is drawn a frame later, and the
 * keystroke costs two frames; read at that frame's start, it is drawn in
 * it. Only a cross-origin isolated page (layout.RenderPage's headers, on a
 * secure origin) may share memory; elsewhere the message alone brings the
 * order.
 * @type {{hdr: Int32Array, ord: Int32Array}|null}
 */
let shared = null;
/** The shared memory's header, by name (view.js writes it by the same). */
const HEADER = Object.freeze({ writing: 0, done: 1, length: 2, online: 3, rows: 4, narrowed: 5, size: 6 });
const canShare = globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === "function";

/**
 * orderStats counts, for measuring, the orders read from shared memory
 * (takeShared), and (view.js's count, as of the last order drawn) the
 * orders found among a recent search's rows.
 */
export const orderStats = { shared: 0, narrowed: 0 };

/** shareOrders gives view.js shared memory for orders of rows.length rows, when it has none that big. */
function shareOrders() {
  if (!canShare || (shared && shared.ord.length >= rows.length)) return;
  const capacity = Math.max(1 << 15, 2 ** Math.ceil(Math.log2(rows.length)));
  const buffer = new SharedArrayBuffer(4 * (HEADER.size + capacity));
  shared = { hdr: new Int32Array(buffer, 0, HEADER.size), ord: new Int32Array(buffer, 4 * HEADER.size) };
  viewer.postMessage({ type: "share", buffer });
}

/**
 * takeShared draws the order of query want from the shared memory, if
 * view.js has written it and no newer query was sent: a seqlock, the order
 * copied out and kept only if view.js did not start writing another
 * meanwhile.
 * @param {number} want
 */
function takeShared(want) {
  if (!shared || shownSeq >= want || seq !== want) return;
  const h = shared.hdr;
  if (Atomics.load(h, HEADER.done) !== want) return;
  const n = h[HEADER.length], online = h[HEADER.online], narrowed = h[HEADER.narrowed];
  const o = shared.ord.slice(0, n);
  if (Atomics.load(h, HEADER.writing) !== want) return;
  orderStats.shared++;
  const t = orderTimes.get(want);
  if (t) t.shared = true;
  showOrder(want, o, online, narrowed);
}

/** sharedOrder is the shared memory's last order written, as keys (null where the page shares none). */
export function sharedOrder() {
  if (!shared) return null;
  const h = shared.hdr;
  return { seq: Atomics.load(h, HEADER.done), keys: Array.from(shared.ord.subarray(0, h[HEADER.length]), (i) => rows[i].key) };
}

let dirty = false;
/** seq is the last query sent to view.js. */
export let seq = 0;
let shownSeq = 0; // the query of the order shown
/** @type {{seq: number, resolve: (v?: any) => void}[]} */
let orderWaiters = [];

/**
 * orderPending says a query's order is on its way from view.js: the
 * drawing the answers ask for (a row's new state, the status line) waits
 * for it, as its drawing refills the rows in view anyway.
 */
export function orderPending() {
  return shownSeq < seq;
}

/**
 * invalidate sends view.js what changed (rows, filters, sort) once per
 * frame, or at once when the page is hidden (no frames).
 */
export function invalidate() {
  if (dirty) return;
  dirty = true;
  // A rebuild made meanwhile (a keystroke's) has sent this change too.
  const later = () => dirty && rebuild();
  if (document.hidden) setTimeout(later, 0);
  else requestAnimationFrame(later);
}

/**
 * invalidateSoon is invalidate at most every REBUILD_MS, or BIG_REBUILD_MS
 * for a list of more than BIG rows, whose every new order redraws the
 * rows in view and moves them under the reader's eyes (the first change
 * after a quiet spell still shows at the next frame). In a big list, the
 * answers' new places also wait while the person types or scrolls (until
 * the hold's TYPING_HOLD_MS after the last keystroke or scroll, at most
 * HOLD_MAX_MS after the last order that took them in): rows do not
 * reshuffle between keys or under a scrolling reader, and a keystroke's
 * frame draws its own order only.
 */
const REBUILD_MS = 200;
const BIG_REBUILD_MS = 500;
let soonTimer = 0;
let lastRebuild = 0;
export function invalidateSoon() {
  if (dirty || soonTimer) return;
  const big = rows.length > BIG;
  let at = lastRebuild + (big ? BIG_REBUILD_MS : REBUILD_MS);
  if (big) at = Math.max(at, Math.min(hold.movesAt(), lastRebuild + HOLD_MAX_MS));
  const wait = at - performance.now();
  if (wait <= 0) return invalidate();
  // Looked at again when due: a key typed meanwhile moves it on.
  soonTimer = setTimeout(() => {
    soonTimer = 0;
    invalidateSoon();
  }, wait);
}

/**
 * viewRow appends to list what view.js filters and sorts on, in the order
 * of view.js's FIELDS: the rows of a batch are one flat list (a list
 * clones faster than an object, whose every field name would be sent too,
 * and one list faster than a list per row).
 * @param {any[]} list @param {Row} r
 */
function viewRow(list, r) {
  list.push(
    r.i, r.protocol, r.state, r.name, r.map, r.mode, r.players, r.bots, r.max, r.password, r.ping, r.country, r.hay,
    r.addrKey, r.master, store.favourites.has(r.key), !!r.gone, r.x,
  );
}

/** The filter form's fields, looked up once (a form's named access is slow). @type {any} */
let filterFields = null;
function filters(/** @type {string|undefined} */ text = undefined) {
  const form = /** @type {HTMLFormElement} */ ($("filters"));
  // Each field by its name (every filter is one element), read off the
  // form once rather than spelt here.
  const f = (filterFields ??= Object.fromEntries(Array.from(form.elements, (e) => [/** @type {any} */ (e).name, e]).filter(([n]) => n).reverse()));
  return {
    q: (text ?? f.q.value).trim().toLowerCase(),
    protocol: f.protocol.value,
    mode: f.mode.value,
    password: f.password.value,
    empty: f.empty.checked,
    full: f.full.checked,
    fav: f.fav.checked,
    online: f.online.checked,
    ping: f.ping.value === "" ? null : Number(f.ping.value),
    master: "",
  };
}

/** fillModes gives the mode filter the modes the rows have shown. */
function fillModes() {
  modes.dirty = false;
  const sel = /** @type {HTMLSelectElement} */ ($("f-mode"));
  const cur = sel.value;
  sel.replaceChildren(h("option", { value: "" }, "All modes"), ...[...modes.all].sort((a, b) => a.localeCompare(b)).map((m) => h("option", { value: m }, m)));
  sel.value = cur;
}

/**
 * sendRows sends view.js the rows changed since it last heard; it orders
 * them at the next query. The answers' rows are sent with each batch of
 * answers, not with the query a keystroke makes, which then costs its
 * frame only the query.
 */
export function sendRows() {
  if (!changedRows.size) return;
  const list = [];
  /** @type {any[]} */
  const states = [];
  for (const r of changedRows) {
    if (r.full) {
      r.full = false;
      viewRow(list, r);
    } else states.push(r.i, r.state, r.ping);
  }
  changedRows.clear();
  viewer.postMessage({ type: "rows", rows: list, states });
  unmerged = true;
}
/** unmerged says view.js holds rows sent since the last query that took them in. */
let unmerged = false;

/**
 * rebuild sends view.js the changed rows and the current filters and sort
 * (with text as the search's, when given: a keystroke's, foreseen);
 * it resolves once the order it asked for is drawn. A filter typed in a
 * list of more than BIG rows within HOLD_MAX_MS of the last order that
 * took in the answers leaves them for the next one (invalidateSoon, once
 * typing pauses): view.js then filters the rows as that order had them,
 * among the rows a recent search found when the text contains that
 * search's, and the order is ready by the frame that shows the key typed
 * (takeShared). The rows' cells show their answers meanwhile; only their
 * places wait.
 * @param {boolean} typing a change of the filters, not of the rows or the sort
 * @param {string} [text] the search's text, if not the box's yet
 * @returns {Promise<void>}
 */
export function rebuild(typing = false, text = undefined) {
  dirty = false;
  const now = performance.now();
  if (typing) hold.key(now);
  const merge = !(typing && rows.length > BIG && now - lastRebuild < HOLD_MAX_MS);
  if (merge) {
    lastRebuild = now;
    // This order takes in every change so far: a background one waiting
    // for its turn (invalidateSoon) waits a whole interval from now, so
    // that it never draws right after the order of a keystroke.
    if (soonTimer) {
      clearTimeout(soonTimer);
      soonTimer = 0;
    }
    sendRows();
    unmerged = false;
  }
  shareOrders();
  const mine = ++seq;
  viewer.postMessage({ type: "query", seq: mine, filter: filters(text), sort: store.sort, merge });
  orderTimes.set(mine, { sent: now, got: 0, done: 0, drawn: 0, shared: false, merge, foreseen: text !== undefined });
  if (orderTimes.size > 256) orderTimes.delete(/** @type {number} */ (orderTimes.keys().next().value));
  if (!merge && (unmerged || changedRows.size)) invalidateSoon();
  if (shared && !document.hidden) requestAnimationFrame(() => takeShared(mine));
  if (modes.dirty) fillModes();
  markSort(store.sort);
  return new Promise((resolve) => orderWaiters.push({ seq: mine, resolve }));
}

/** whenDrawn resolves once the order for every change made so far is drawn. */
export function whenDrawn() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
    if (dirty) rebuild().then(resolve);
    else if (shownSeq >= seq) resolve(undefined);
    else orderWaiters.push({ seq, resolve });
  }, 0)));
}

viewer.onmessage = (e) => {
  const m = e.data;
  // An order older than the last query asked is not drawn: the newer one
  // is on its way and takes in the same changes. One drawn already from
  // the shared memory (takeShared) is not drawn again.
  if (m.type !== "order") return;
  const t = orderTimes.get(m.seq);
  if (t) {
    t.got = m.got - performance.timeOrigin;
    t.done = m.done - performance.timeOrigin;
  }
  if (m.seq < seq || m.seq <= shownSeq) return;
  showOrder(m.seq, m.order, m.online, m.narrowed);
};

/**
 * orderTimes keeps, for measuring, when the last queries were sent, came
 * to view.js, had their order written, and were drawn (ms on this page's
 * clock; 0 for what did not happen), whether from the shared memory,
 * whether the query took in the changed rows, and whether it was sent for
 * a keystroke foreseen (beforeinput).
 * @type {Map<number, {sent: number, got: number, done: number, drawn: number, shared: boolean, merge: boolean, foreseen: boolean}>}
 */
export const orderTimes = new Map();

/**
 * showOrder draws the order of query n: ord, the indexes of the rows
 * shown, online of them online; narrowed is view.js's count of orders
 * found among a recent search's rows (for measuring).
 * @param {number} n @param {Int32Array} ord @param {number} online @param {number} narrowed
 */
function showOrder(n, ord, online, narrowed) {
  orderStats.narrowed = narrowed;
  const t = orderTimes.get(n);
  if (t) t.drawn = performance.now();
  const was = order;
  shownSeq = n;
  order = ord;
  onlineCount = online;
  showRows(was);
  ordered(n);
  progress();
  // The answers' rows held back while this order was on its way.
  if (changedRows.size) setTimeout(() => orderPending() || sendRows(), 0);
  const done = orderWaiters.filter((w) => w.seq <= n);
  orderWaiters = orderWaiters.filter((w) => w.seq > n);
  for (const w of done) w.resolve();
}

/** indexOfKey is the position in order of the row with key, or -1. @param {string} key */
export function indexOfKey(key) {
  const r = byKey.get(key);
  if (!r) return -1;
  return order.indexOf(r.i);
}
