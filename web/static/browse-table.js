// @ts-check
// The table: a virtual list that stays smooth with tens of thousands of
// rows. The rows live in a JS array (browse-rows.js); the table body holds
// only the rows in view, a pool of <tr> (browse-slots.js) refilled as the
// table scrolls, each placed at its position with a transform in a body as
// tall as the rows shown (the table is laid out as a grid, app.css: a row's
// layout is its own). This module also keeps the keyboard cursor (active).
import { $, h } from "./ql.js";
import { EXTRA } from "./browse-config.js";
import { rows, known } from "./browse-rows.js";
import { hold } from "./browse-hold.js";
import { order, orderPending, indexOfKey } from "./browse-order.js";
import { makeSlot, fill, position, slotOf, untitled } from "./browse-slots.js";

/** @typedef {import("./browse-rows.js").Row} Row */
/** @typedef {import("./browse-slots.js").Slot} Slot */

export const wrap = $("table-wrap");
export const tbody = $("rows");
export const table = /** @type {HTMLTableElement} */ ($("servers"));
export const ROW_H = 30; // px; matches --row-h in app.css
const OVERSCAN = 2;

// The extra columns: a header per field, after the fixed ones.
for (const f of EXTRA) {
  const th = h("th", { scope: "col", role: "columnheader", class: "c-extra", "data-sort": `x:${f}` }, h("button", { type: "button" }, f.charAt(0).toUpperCase() + f.slice(1)));
  table.tHead.rows[0].append(th);
}
// The extra columns widen the grid's column template (app.css --cols).
if (EXTRA.length) {
  table.style.setProperty("--extra", `repeat(${EXTRA.length}, var(--extra-w))`);
  table.style.minWidth = `calc(var(--min-w) + ${EXTRA.length} * var(--extra-w))`;
}

/** The pool of row elements (browse-slots.js). @type {Slot[]} */
const pool = [];
tbody.replaceChildren();

/** active is the position in order of the keyboard cursor. */
export let active = -1;

/**
 * drawStats counts, for measuring, the rows refilled with another server,
 * moved, and put in the body.
 */
export const drawStats = { refills: 0, moves: 0, inserts: 0 };

/** win is the part of the order the body holds. */
export const win = { first: 0, last: 0 };
const CHUNK = 8;
// windowStale says the rows or their order changed since the window was
// drawn: renderWindow draws even when the window did not move.
let windowStale = true;
/** The slot each drawn row has, by row index. @type {Map<number, Slot>} */
export const bound = new Map();

/**
 * renderWindow puts the rows in view (plus some overscan) in the pool's
 * elements, each placed at its row's position by a transform. A server
 * that stays in view keeps its element, whatever its new position: the
 * element is moved (its transform), not refilled, so a scroll of one row
 * refills one element, and a new order (a keystroke, answers that reorder
 * the rows) refills only the elements of the servers that came into view,
 * taking the elements of those that left in the body's order. Elements no
 * row needs are hidden, and the pool grows when the window did.
 */
function renderWindow(all = false) {
  // From the last scroll and resize, not read here: reading layout after
  // the rows changed would force a layout of the whole page.
  // The window starts on a multiple of CHUNK rows and holds a CHUNK more
  // than the view: scrolling within a chunk changes nothing in the table
  // (no layout, the scroll is the compositor's), and crossing into the
  // next one moves the window by CHUNK rows at once.
  const top = Math.max(0, viewport.top - viewport.head);
  const from = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const first = Math.min(from - (from % CHUNK), order.length);
  const count = Math.ceil(viewport.height / ROW_H) + 2 * OVERSCAN + CHUNK;
  const last = Math.min(order.length, first + count);
  // (With rows still to draw out of sight, any call draws them.)
  if (first === win.first && last === win.last && !windowStale && !all && !outOfSight) return;
  // A new order (a keystroke's, the answers'): the frame that shows it
  // refills the elements of the rows in view; the rows that came into the
  // window out of sight are drawn after that frame (restSoon), before a
  // scroll could show them.
  let inView = first, inViewEnd = last;
  if (windowStale && !all) {
    inView = Math.min(last, Math.max(first, Math.floor(viewport.top / ROW_H)));
    inViewEnd = Math.max(inView, Math.min(last, Math.ceil((viewport.top + viewport.height - viewport.head) / ROW_H)));
  }
  // A scroll (no new order, not the rows out of sight) leaves the
  // elements' order in the body for later (arrangeLater).
  const scrolled = !windowStale && !all;
  windowStale = false;
  win.first = first;
  win.last = last;
  setHeight(order.length * ROW_H);
  // The elements whose servers left the window are free, in the body's
  // order: the servers that came in take them in the order shown, so
  // that as few as can have to move in the body (arrange).
  /** @type {Slot[]} */
  const free = [];
  for (let el = tbody.firstElementChild; el; el = el.nextElementSibling) {
    const s = /** @type {Slot} */ (slotOf.get(el));
    if (s.row >= 0 && positions(s.row, first, last) < 0) {
      bound.delete(s.row);
      s.row = -1;
    }
    if (s.row < 0) free.push(s);
  }
  /** @type {Slot[]} */
  const shown = [];
  let f = 0;
  let later = false;
  for (let k = first; k < last; k++) {
    const i = order[k];
    let s = bound.get(i);
    if (!s) {
      if (k < inView || k >= inViewEnd) {
        // Out of sight: an element whose server left (shown, not yet
        // hidden) takes the row's place and number now, and is refilled
        // later (restSoon); hiding it now and showing it again then
        // would build its boxes anew. Until then it shows another
        // server: assistive technology is not to read it.
        later = true;
        const c = free[f];
        if (!c || c.tr.hidden) continue;
        f++;
        c.row = i;
        bound.set(i, c);
        if (!c.attrs.stale) {
          c.attrs.stale = true;
          c.tr.setAttribute("aria-hidden", "true");
        }
        position(c, k);
        move(c, k);
        shown.push(c);
        continue;
      }
      s = free[f++];
      if (!s) {
        s = makeSlot();
        pool.push(s);
      }
      s.row = i;
      bound.set(i, s);
    }
    draw(s, k);
    shown.push(s);
  }
  for (; f < free.length; f++) if (!free[f].tr.hidden) hide(free[f]);
  if (scrolled) {
    for (const s of shown) if (!s.tr.parentNode) tbody.append(s.tr);
    arrangeLater = true;
  } else {
    arrange(shown);
    arrangeLater = false;
  }
  markActive(first, last);
  outOfSight = later;
  if (later || arrangeLater) restSoon();
  else restDone();
}

/** outOfSight says rows of the window out of sight wait to be drawn (restSoon). */
let outOfSight = false;

/**
 * arrangeLater says the elements in the body are not in the order shown:
 * while a person scrolls, the elements of the rows that come into view
 * stay where they are in the body (a moved element is styled and laid out
 * anew), and are put in order (arrange) once the scrolling rests
 * (restSoon), when after a long scroll most are in order already.
 */
let arrangeLater = false;

/**
 * restSoon draws the rows out of sight (renderWindow) once the order has
 * stayed the same for REST_AFTER_MS, when the page is idle (within REST_MS
 * more): while a person types, each keystroke's order replaces the last
 * before anyone could scroll to it, and only the order typing stops on is
 * drawn out of sight, once. A scroll draws what it shows at its own frame
 * (renderWindow draws every row of the window while some wait), without
 * waiting for this.
 */
const REST_AFTER_MS = 300;
const REST_MS = 200;
let restQueued = false;
let restTimer = 0;
function restSoon() {
  restQueued = true;
  clearTimeout(restTimer);
  restTimer = setTimeout(() => {
    restTimer = 0;
    const rest = () => restQueued && renderWindow(true);
    if (document.hidden) rest();
    else if (globalThis.requestIdleCallback) requestIdleCallback(rest, { timeout: REST_MS });
    else requestAnimationFrame(() => setTimeout(rest, 0));
  }, document.hidden ? 0 : REST_AFTER_MS);
}

/** restDone says every row of the window is drawn: who waited for it is told. */
function restDone() {
  if (!restQueued) return;
  restQueued = false;
  clearTimeout(restTimer);
  restTimer = 0;
  const done = restWaiters;
  restWaiters = [];
  for (const resolve of done) resolve(undefined);
}
/** Who waits for the whole window to be drawn. @type {((v: any) => void)[]} */
let restWaiters = [];

/**
 * markActive points the table at the active row when it is drawn: that
 * row's element alone has an id (row-K), which the table's
 * aria-activedescendant names.
 * @param {number} first @param {number} last
 */
function markActive(first, last) {
  const s = active >= first && active < last ? bound.get(order[active]) : undefined;
  const el = s && s.y === active && !s.attrs.stale ? s.tr : null;
  if (activeEl && activeEl !== el) activeEl.removeAttribute("id");
  activeEl = el;
  if (el) {
    const id = `row-${active}`;
    if (el.id !== id) el.id = id;
    if (wrap.getAttribute("aria-activedescendant") !== id) wrap.setAttribute("aria-activedescendant", id);
  } else if (wrap.hasAttribute("aria-activedescendant")) wrap.removeAttribute("aria-activedescendant");
}
/** The element that has the active row's id. @type {Element|null} */
let activeEl = null;

/** hide sets aside a slot no row needs: not shown, not read, not reached. @param {Slot} s */
function hide(s) {
  s.tr.hidden = true;
  s.tr.setAttribute("aria-hidden", "true");
  if (s.tr === activeEl) {
    s.tr.removeAttribute("id");
    activeEl = null;
  }
  s.attrs.pos = "";
  // Out of the way, above the body, where no scroll reaches.
  s.y = -1;
  s.tr.style.transform = "translateY(-100000px)";
  untitled(s);
}

/** draw fills slot s with the row at position k of the order and puts it there. @param {Slot} s @param {number} k */
function draw(s, k) {
  fill(s, rows[order[k]], k);
  move(s, k);
}

/** move puts slot s at position k. @param {Slot} s @param {number} k */
function move(s, k) {
  if (s.y !== k) {
    drawStats.moves++;
    s.y = k;
    s.tr.style.transform = `translateY(${k * ROW_H}px)`;
  }
}

/**
 * arrange puts the rows' elements in the body in the order shown, for
 * reading and tabbing (where they are drawn is their transform's). Moving
 * an element in the body styles and lays it out anew, so as few move as
 * can: the longest run of elements already in order (a longest increasing
 * subsequence of their places in shown) stays, and only the others move.
 * @param {Slot[]} shown the slots drawn, in the order shown
 */
function arrange(shown) {
  /** @type {Map<Slot, number>} */
  const at = new Map();
  for (let j = 0; j < shown.length; j++) at.set(shown[j], j);
  /** @type {number[]} */
  const seq = [];
  for (let el = tbody.firstElementChild; el; el = el.nextElementSibling) {
    const j = at.get(/** @type {Slot} */ (slotOf.get(el)));
    if (j !== undefined) seq.push(j);
  }
  const stay = new Uint8Array(shown.length);
  for (const j of longestRun(seq)) stay[j] = 1;
  /** @type {Element|null} */
  let anchor = null;
  for (let j = shown.length - 1; j >= 0; j--) {
    const tr = shown[j].tr;
    if (!stay[j]) {
      tbody.insertBefore(tr, anchor);
      drawStats.inserts++;
    }
    anchor = tr;
  }
}

/**
 * longestRun is a longest increasing subsequence of seq (distinct
 * numbers): its values, in order.
 * @param {number[]} seq
 */
function longestRun(seq) {
  /** @type {number[]} tails[n] is the index in seq of the last value of the best run of length n+1 */
  const tails = [];
  const prev = new Int32Array(seq.length);
  for (let i = 0; i < seq.length; i++) {
    let lo = 0, hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seq[tails[mid]] < seq[i]) lo = mid + 1;
      else hi = mid;
    }
    prev[i] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = i;
  }
  const run = new Array(tails.length);
  for (let n = tails.length - 1, i = tails[n] ?? -1; n >= 0; n--, i = prev[i]) run[n] = seq[i];
  return run;
}

/**
 * positions tells whether row index i is shown in [first, last) of the
 * order: its position, or -1. The rows in view are few, so a scan of the
 * window is cheaper than an index of the whole order.
 * @param {number} i @param {number} first @param {number} last
 */
function positions(i, first, last) {
  for (let k = first; k < last; k++) if (order[k] === i) return k;
  return -1;
}

/** setHeight sets the body's height (every row shown) when it changed. @param {number} px */
let bodyHeight = -1;
function setHeight(px) {
  if (bodyHeight === px) return;
  bodyHeight = px;
  tbody.style.height = `${px}px`;
}

/**
 * drawSoon refills r's row element at the next frame, with the rows drawn
 * that changed meanwhile; not while an order is on its way, whose drawing
 * refills every row in view, and not while answers are held (release
 * draws them).
 * @param {Row} [r]
 */
let drawQueued = false;
/** @type {Set<Row>} */
const redraw = new Set();
export function drawSoon(r) {
  if (r) redraw.add(r);
  // While answers are held, so are the rows asked meanwhile (release).
  if (drawQueued || hold.held.length) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    if (!orderPending()) {
      for (const r of redraw) {
        const s = bound.get(r.i);
        if (s && s.y >= 0 && order[s.y] === r.i) fill(s, r, s.y);
      }
    }
    redraw.clear();
  });
}

/** viewport is the table's scroll position and size, kept by measure(). */
const viewport = { top: 0, height: 0, head: 0 };
export function measure() {
  viewport.top = wrap.scrollTop;
  viewport.height = wrap.clientHeight;
  viewport.head = table.tHead.offsetHeight;
}
measure();

let scrollQueued = false;
wrap.addEventListener("scroll", () => {
  viewport.top = wrap.scrollTop;
  hold.scroll(performance.now());
  if (scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => {
    scrollQueued = false;
    renderWindow();
  });
}, { passive: true });
new ResizeObserver(() => {
  measure();
  renderWindow();
}).observe(wrap);

/** text puts a value in an element only when it changed (no layout otherwise). */
export function text(/** @type {HTMLElement} */ el, /** @type {string} */ s) {
  if (el.textContent !== s) el.textContent = s;
}

/** drawHeld draws the rows in view that changed while answers were held (browse-hold.js). */
export function drawHeld() {
  if (redraw.size) drawSoon();
}

/** rowAt is the row shown at position k. @param {number} k */
export const rowAt = (k) => rows[order[k]];

/**
 * showRows draws a new order, the one before it was: the keyboard cursor
 * stays on its server, and the rows in view are refilled.
 * @param {Int32Array} was
 */
export function showRows(was) {
  const activeKey = rows[was[active]]?.key;
  if (activeKey) active = indexOfKey(activeKey);
  const count = String(order.length + 1);
  if (table.getAttribute("aria-rowcount") !== count) table.setAttribute("aria-rowcount", count);
  const empty = $("empty-state"), none = order.length > 0 || rows.length === 0;
  if (empty.hidden !== none) empty.hidden = none;
  text($("counts"), `${order.length} shown of ${known()}`);
  windowStale = true;
  renderWindow();
}

/** markSort says on the column headers which the rows are sorted by. @param {{key: string, dir: number}} sort */
export function markSort(sort) {
  for (const th of table.tHead.rows[0].cells) {
    const v = th.dataset.sort === sort.key ? (sort.dir > 0 ? "ascending" : "descending") : "none";
    if (th.getAttribute("aria-sort") !== v) th.setAttribute("aria-sort", v);
  }
}

/** setActive moves the keyboard cursor to position k, scrolled into view unless scroll is false. @param {number} k */
export function setActive(k, scroll = true) {
  active = Math.max(0, Math.min(order.length - 1, k));
  if (scroll) {
    const head = table.tHead.offsetHeight;
    const y = active * ROW_H;
    if (y < wrap.scrollTop) wrap.scrollTop = y;
    else if (y + ROW_H + head > wrap.scrollTop + wrap.clientHeight) wrap.scrollTop = y + ROW_H + head - wrap.clientHeight;
    measure();
  }
  windowStale = true;
  renderWindow();
}

/** whenRest resolves once the whole window is drawn: the rows in view and those out of sight. */
export function whenRest() {
  return new Promise((resolve) => {
    if (restQueued) restWaiters.push(resolve);
    else resolve(undefined);
  });
}
