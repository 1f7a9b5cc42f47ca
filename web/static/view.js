// @ts-check
// The server browser's view thread: it keeps a copy of what the table
// filters and sorts on, and answers each change of the rows, the filters or
// the sort with the ordered list of the rows to show, so that filtering and
// sorting 20,000 rows never blocks the page's own thread.
//
//   page → view  {type: "init", online, rank}  the online state's name, and
//                    each state's rank (answering rows first)
//                {type: "rows", rows: any[], states: any[]}  new or
//                    changed rows, one flat list of their ViewRows'
//                    fields, each row's in the order of FIELDS; and the
//                    rows whose state and ping alone changed, flat
//                    [i, state, ping, …]
//                {type: "query", seq, filter, sort, merge}  the filters
//                    and sort; merge false leaves the rows sent since the
//                    last merging query out (the order filters the rows as
//                    they were then)
//                {type: "share", buffer: SharedArrayBuffer}  memory to
//                    write each order to as well (cross-origin isolated
//                    pages only; a bigger one replaces it)
//   view → page  {type: "order", seq, order: Int32Array, online, rows, narrowed, got, done}
//                    the indexes of the rows to show, in order (the buffer
//                    is transferred); seq is the last query's; got and
//                    done when its query came and when the order was
//                    written (ms since the Unix epoch, for measuring)
//
// The shared memory is six int32s, then the order: [0] the seq of the
// order being written, [1] the seq of the last order written in full,
// [2] its length, [3] its rows online, [4] the rows known, [5] how many
// orders so far were found among a recent search's rows (the message's
// narrowed, for measuring). An order is
// written as a seqlock: [0] first, the order and counts, [1] last (both
// with Atomics.store); the page reads [1], copies the order, and keeps it
// only if [0] still says the same seq. The message is sent as well.
//
// Rows are only kept until a query asks for an order; a query is answered
// at once, with every row sent before it. While no row changed, a search
// whose text contains that of a recent one (a person typing on, or back
// with a backspace) looks only among the rows that one found (searches),
// and the same text as a recent search's finds its rows without looking.

/**
 * @typedef {{i: number, protocol: string, state: string, name: string,
 *   map: string, mode: string, players: number, bots: number, max: number,
 *   password: boolean, ping: number|null, country: string, hay: string,
 *   addrKey: string, master: string, fav: boolean, gone: boolean,
 *   x: Record<string, any>|null}} ViewRow
 * @typedef {{q: string, protocol: string, mode: string, password: string,
 *   empty: boolean, full: boolean, fav: boolean, online: boolean,
 *   ping: number|null, master: string}} Filter
 */

/** The fields of a ViewRow in the order the page sends them. */
const FIELDS = /** @type {const} */ (["i", "protocol", "state", "name", "map", "mode", "players", "bots", "max", "password", "ping",
  "country", "hay", "addrKey", "master", "fav", "gone", "x"]);

/** @type {ViewRow[]} */
const rows = [];
let online = "";
/** @type {Record<string, number>} */
let rank = {};
/** @type {Filter|null} */
let filter = null;
let sort = { key: "players", dir: -1 };
let seq = 0;
// sorted is every row in the order of sortedBy; touched holds the rows
// changed since. A query that changes only the filters filters sorted
// again, in order, without sorting (a keystroke in the search); changed
// rows are sorted alone and merged into it.
/** @type {ViewRow[]} */
let sorted = [];
let sortedBy = "";
/** @type {Set<number>} */
const touched = new Set();
/** The memory shared with the page, if it gave some. @type {{hdr: Int32Array, ord: Int32Array}|null} */
let shared = null;
/** When the last query came (ms since the Unix epoch, for measuring). */
let got = 0;
/** The shared memory's header, by name (browse.js reads it by the same). */
const HEADER = Object.freeze({ writing: 0, done: 1, length: 2, online: 3, rows: 4, narrowed: 5, size: 6 });

self.onmessage = (/** @type {MessageEvent} */ e) => {
  const m = e.data;
  switch (m.type) {
    case "init":
      online = m.online;
      rank = m.rank;
      return;
    case "rows":
      // Ordered at the next query: the page sends rows as answers come
      // and asks for an order when it means to draw one.
      for (let o = 0; o + FIELDS.length <= m.rows.length; o += FIELDS.length) {
        /** @type {any} */
        const r = {};
        for (let j = 0; j < FIELDS.length; j++) r[FIELDS[j]] = m.rows[o + j];
        rows[r.i] = r;
        touched.add(r.i);
      }
      // Rows whose state and ping alone changed: [i, state, ping, …].
      for (let o = 0; o + 3 <= (m.states?.length ?? 0); o += 3) {
        const r = rows[m.states[o]];
        if (!r) continue;
        r.state = m.states[o + 1];
        r.ping = m.states[o + 2];
        touched.add(r.i);
      }
      return;
    case "share":
      shared = { hdr: new Int32Array(m.buffer, 0, HEADER.size), ord: new Int32Array(m.buffer, 4 * HEADER.size) };
      return;
    case "query":
      got = performance.timeOrigin + performance.now();
      filter = m.filter;
      sort = m.sort;
      seq = m.seq;
      merge = m.merge !== false;
      break;
    default:
      return;
  }
  if (filter) compute();
};

/** @param {ViewRow} r @param {Filter} f */
function matches(r, f) {
  if (r.gone) return false;
  if (f.protocol && r.protocol !== f.protocol) return false;
  if (f.master && r.master !== f.master) return false;
  if (f.fav && !r.fav) return false;
  if (f.online && r.state !== online) return false;
  if (f.mode && r.mode !== f.mode) return false;
  if (f.password === "open" && r.password) return false;
  if (f.password === "locked" && !r.password) return false;
  if (f.empty && r.players - r.bots <= 0) return false;
  if (f.full && r.max > 0 && r.players >= r.max) return false;
  if (f.ping != null && (r.ping == null || r.ping > f.ping)) return false;
  if (f.q && !r.hay.includes(f.q)) return false;
  return true;
}

const collator = new Intl.Collator(undefined, { sensitivity: "base", numeric: true });
const text = (/** @type {string} */ a, /** @type {string} */ b) => collator.compare(a, b);
const byAddr = (/** @type {ViewRow} */ a, /** @type {ViewRow} */ b) => (a.addrKey < b.addrKey ? -1 : a.addrKey > b.addrKey ? 1 : 0);

/** @type {Record<string, (a: ViewRow, b: ViewRow) => number>} */
const sorters = {
  fav: (a, b) => Number(b.fav) - Number(a.fav),
  protocol: (a, b) => text(a.protocol, b.protocol),
  name: (a, b) => text(a.name || "\uffff", b.name || "\uffff"),
  players: (a, b) => a.players - b.players,
  map: (a, b) => text(a.map, b.map),
  mode: (a, b) => text(a.mode, b.mode),
  ping: (a, b) => (a.ping ?? 1e9) - (b.ping ?? 1e9),
  addr: byAddr,
  country: (a, b) => text(a.country, b.country),
  flags: (a, b) => Number(a.password) - Number(b.password),
  master: (a, b) => text(a.master, b.master),
};

/**
 * sorter compares by the sort key; "x:NAME" is a row field beyond the
 * known ones (model.js Row), compared as numbers, booleans or text.
 * @param {string} key
 */
function sorter(key) {
  if (sorters[key]) return sorters[key];
  if (key.startsWith("x:")) {
    const f = key.slice(2);
    return (/** @type {ViewRow} */ a, /** @type {ViewRow} */ b) => {
      const x = a.x?.[f] ?? "", y = b.x?.[f] ?? "";
      if (typeof x === "number" && typeof y === "number") return x - y;
      return text(String(x), String(y));
    };
  }
  return sorters.players;
}

/**
 * The searches made on sorted as it is, by their text: the positions in
 * sorted of the rows each found, all filtered alike by the rest of the
 * filters (searchRest); forgotten when sorted or the rest change. A
 * search whose text contains one of theirs looks only among the rows
 * that one found: typed on, or typed back to (a backspace), it looks at
 * few rows or none. The SEARCHES most recent are kept.
 * @type {Map<string, Int32Array>}
 */
const searches = new Map();
const SEARCHES = 16;
let searchRest = "";
/** The rows online in sorted as it is (counted by the last full search). */
let lastUp = 0;
/** The orders found among a kept search's rows (for measuring). */
let narrowed = 0;
/** Whether the last query takes in the rows sent since the last that did. */
let merge = true;

function compute() {
  const f = /** @type {Filter} */ (filter);
  const cmp = sorter(sort.key);
  const dir = sort.dir;
  // Servers that did not answer sink below the ones that did, whichever
  // way the column is sorted; ties keep a stable, readable order.
  const full = (/** @type {ViewRow} */ a, /** @type {ViewRow} */ b) => (rank[a.state] ?? 5) - (rank[b.state] ?? 5) || dir * cmp(a, b) || byAddr(a, b);
  const by = `${sort.key}|${dir}`;
  // same: sorted holds the rows of the last search, in the same places.
  const same = by === sortedBy && (touched.size === 0 || !merge);
  if (by !== sortedBy || (merge && touched.size * 8 > sorted.length)) {
    sorted = [];
    for (const r of rows) if (r) sorted.push(r);
    sorted.sort(full);
    sortedBy = by;
    touched.clear();
  } else if (merge && touched.size) {
    /** @type {ViewRow[]} */
    const fresh = [];
    for (const i of touched) if (rows[i]) fresh.push(rows[i]);
    fresh.sort(full);
    /** @type {ViewRow[]} */
    const merged = new Array(sorted.length - touched.size + fresh.length);
    let n = 0, j = 0;
    for (const r of sorted) {
      if (touched.has(r.i)) continue;
      while (j < fresh.length && full(fresh[j], r) < 0) merged[n++] = fresh[j++];
      merged[n++] = r;
    }
    while (j < fresh.length) merged[n++] = fresh[j++];
    merged.length = n;
    sorted = merged;
    touched.clear();
  }
  const rest = JSON.stringify({ ...f, q: "" });
  if (!same || rest !== searchRest) {
    searches.clear();
    searchRest = rest;
  }
  // The longest kept search whose text this one contains: a row it did
  // not find cannot match.
  /** @type {Int32Array|null} */
  let from = null;
  let longest = -1;
  for (const [q, found] of searches) {
    if (q.length > longest && f.q.includes(q)) {
      from = found;
      longest = q.length;
    }
  }
  let up = lastUp;
  const order = new Int32Array(from ? from.length : sorted.length);
  // again: the same text as a kept search's (a backspace, the text typed
  // again), whose rows are the order as they are.
  const again = from !== null && longest === f.q.length;
  const at = again ? /** @type {Int32Array} */ (from) : new Int32Array(order.length);
  let k = 0;
  if (again) {
    narrowed++;
    for (; k < at.length; k++) order[k] = sorted[at[k]].i;
  } else if (from) {
    narrowed++;
    for (let j = 0; j < from.length; j++) {
      const r = sorted[from[j]];
      if (r.hay.includes(f.q)) {
        order[k] = r.i;
        at[k++] = from[j];
      }
    }
  } else {
    up = 0;
    for (let p = 0; p < sorted.length; p++) {
      const r = sorted[p];
      if (r.state === online && !r.gone) up++;
      if (matches(r, f)) {
        order[k] = r.i;
        at[k++] = p;
      }
    }
  }
  searches.delete(f.q);
  // A copy: the array is sized for every row, the search found k.
  searches.set(f.q, again ? at : at.slice(0, k));
  if (searches.size > SEARCHES) searches.delete(/** @type {string} */ (searches.keys().next().value));
  lastUp = up;
  if (shared && k <= shared.ord.length) {
    const h = shared.hdr;
    Atomics.store(h, HEADER.writing, seq);
    shared.ord.set(order.subarray(0, k));
    h[HEADER.length] = k;
    h[HEADER.online] = up;
    h[HEADER.rows] = rows.length;
    h[HEADER.narrowed] = narrowed;
    Atomics.store(h, HEADER.done, seq);
  }
  const done = performance.timeOrigin + performance.now();
  /** @type {any} */ (self).postMessage({ type: "order", seq, order: order.subarray(0, k), online: up, rows: rows.length, narrowed, got, done }, [order.buffer]);
}

export {};
