// @ts-check
// The server browser: loads the masters' lists (through the relay, or from
// the server for the masters it keeps) and every server through the relay,
// decodes in the page, and shows one table that stays smooth with tens of
// thousands of rows:
//
//   - rows live in a JS array; the table body holds only the rows in view,
//     a pool of <tr> refilled as the table scrolls, each placed at its
//     position with a transform in a body as tall as the rows shown (the
//     table is laid out as a grid, app.css: a row's layout is its own);
//   - filtering and sorting run in a second worker (view.js), which keeps a
//     copy of the fields they read and answers each change with the ordered
//     indexes of the rows to show; this thread only draws;
//   - servers are asked in the order they are seen: the rows in view, then
//     the filtered rows in order, then the others, a few at a time within
//     the relay's limit (HELLO's in-flight count).
//
// The relay connection and the decoder run in a worker (worker.js); this
// thread sends it the servers to ask and gets back, at most once per frame,
// a batch of compact rows the decoder made (codecs.AppendSummaryJSON), so it
// never walks a decoded message.
import { $, config, esc, h, showRelay, showFatal, markFirstDecode, ago, hostPort, replyTimeout, download } from "./ql.js";
import { DecodeWorker } from "./live.js";
import { State, PageState, StateWord, Row } from "./model.js";

const cfg = config();
const wrap = $("table-wrap");
const tbody = $("rows");
const table = /** @type {HTMLTableElement} */ ($("servers"));

/** The row fields each protocol fills (the protocol table's "row"); a row leaves the others blank. */
const fills = Object.fromEntries((cfg.protocols ?? []).map((p) => [p.name, new Set(p.row ?? Object.keys(Row))]));
// Column labels: the title, or the name in capitals when the title is long ("OGP").
const protocolTitles = Object.fromEntries((cfg.protocols ?? []).map((p) => [p.name, p.title.length > 13 ? p.name.toUpperCase() : p.title]));
/**
 * Each protocol's list options (the protocol table's "list"): a row without
 * options of its own is asked with them, for what the row shows; its status
 * page asks everything.
 * @type {Record<string, Record<string, string>>}
 */
const listOptions = Object.fromEntries((cfg.protocols ?? []).filter((p) => p.list).map((p) => [p.name, p.list]));
/** Each protocol's master options (the protocol table's master.options). */
const masterOptions = Object.fromEntries((cfg.protocols ?? []).filter((p) => p.master).map((p) => [p.name, p.master.options ?? null]));
const LOCK = `<svg class="icon" viewBox="0 0 12 12" width="10" height="10" aria-hidden="true"><rect x="2" y="5" width="8" height="6" rx="1" fill="currentColor"/><path d="M4 5V3.5a2 2 0 0 1 4 0V5" fill="none" stroke="currentColor" stroke-width="1.3"/></svg>`;
const ROW_H = 30; // px; matches --row-h in app.css
const OVERSCAN = 2;
const ZANDRONUM_MIN_MS = 10_000; // a Zandronum server answers one IP once per 10 s
const STORE = "querylens.browse.v1";

/**
 * The row fields the table has its own columns for; any other field of
 * model.js's Row (a protocol's extra numbers) gets a column of its own,
 * added here, so a field added to the row model shows without a change to
 * this script.
 */
const KNOWN = new Set(["name", "map", "mode", "players", "bots", "max", "password", "country", "hay", "anticheat", "os", "keywords"]);
const EXTRA = Object.keys(Row).filter((k) => !KNOWN.has(k));

/**
 * @typedef {{spec: {protocol: string, addr: string, filter?: string, label?: string, kept: boolean},
 *   label: string, filter: string, state: string, detail: string, count: number,
 *   complete: boolean, loaded: number}} Master
 */
/** @type {Master[]} every configured master; a bare "host:port" is Zandronum's */
const masters = (cfg.masters ?? []).map((/** @type {any} */ m) => {
  const spec = typeof m === "string" ? { protocol: "zandronum", addr: m, kept: false } : m;
  return { spec, label: spec.label || spec.addr, filter: spec.filter ?? "", state: PageState.pending, detail: "", count: 0, complete: false, loaded: 0 };
});

/** @type {Row[]} every server, in the order first seen; a row's index is its i */
const rows = [];
const byKey = new Map();
/** @type {Int32Array} the indexes of the rows shown, in order (from view.js) */
let order = new Int32Array(0);
let active = -1; // position in order of the keyboard cursor
let sort = { key: "players", dir: -1 };
let asked = 0;
let answered = 0;
let outstanding = 0; // asks sent to the decoding worker and not answered
let connected = false;
/** @type {DecodeWorker} */
let relay;

// ---- persistence: favourites and servers added by hand ----

function loadStore() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE) ?? "{}");
    return { favourites: new Set(s.favourites ?? []), added: s.added ?? [], sort: s.sort };
  } catch {
    return { favourites: new Set(), added: [] };
  }
}
const store = loadStore();
if (store.sort?.key) sort = store.sort;

function saveStore() {
  localStorage.setItem(STORE, JSON.stringify({ favourites: [...store.favourites], added: store.added, sort }));
}

const keyOf = (protocol, addr) => `${protocol}/${addr}`;

// ---- rows ----

/**
 * addrKey sorts addresses in natural order with a plain string comparison:
 * every number is zero-padded to 5 digits ("127.0.0.2:10666" before
 * "127.0.0.10:10666"), computed once per row instead of in every compare.
 * @param {string} addr
 */
function addrKey(addr) {
  return addr.toLowerCase().replace(/\d+/g, (d) => d.padStart(5, "0"));
}

/** statusURL is the row's status page, with its query options (as the server builds it). */
function statusURL(r) {
  const q = r.options ? new URLSearchParams(Object.entries(r.options).sort()).toString() : "";
  return `/s/${encodeURIComponent(r.protocol)}/${pathAddr(r.addr)}${q ? "?" + q : ""}`;
}

/** pathAddr keeps host:port readable in a path ([v6]:port included). */
function pathAddr(addr) {
  return encodeURIComponent(addr).replace(/%3A/gi, ":").replace(/%5B/gi, "[").replace(/%5D/gi, "]");
}

/**
 * @typedef {{i: number, key: string, protocol: string, addr: string, state: string,
 *   detail: string, name: string, players: number, bots: number, max: number,
 *   map: string, mode: string, ping: number|null, country: string,
 *   password: boolean, anticheat: boolean, os: string, keywords: string,
 *   hay: string, lastAsked: number, backoff: number,
 *   source: string, received: string[]|null, queued?: boolean, want?: boolean,
 *   gone?: boolean, addrKey: string, master: string, x: Record<string, any>|null,
 *   options: Record<string, string>|null, url?: string, full?: boolean}} Row
 */

/**
 * addRow returns the row of protocol/addr, adding it when new; a row a
 * master listed says which (master: its label).
 */
function addRow(protocol, addr, source, options = null, master = "") {
  const key = keyOf(protocol, addr);
  let r = byKey.get(key);
  if (r) {
    if (!r.options && options) (r.options = options), (r.url = undefined);
    if (r.gone || (!r.master && master)) {
      if (r.gone) goneCount--;
      r.gone = false;
      r.master = master;
      changed(r);
    }
    return r;
  }
  r = {
    i: rows.length, key, protocol, addr, source, options, master, state: PageState.pending, detail: "", name: "", players: -1, bots: 0, max: 0,
    map: "", mode: "", ping: null, country: "", password: false, anticheat: false, os: "", keywords: "", hay: addr.toLowerCase(),
    addrKey: addrKey(addr), lastAsked: 0, backoff: 1, received: null, x: null,
  };
  rows.push(r);
  byKey.set(key, r);
  changed(r);
  return r;
}

/**
 * The rows changed since view.js last heard of them; a row's full says a
 * field other than its state and ping changed (sendRows sends the others'
 * state and ping only).
 * @type {Set<Row>}
 */
const changedRows = new Set();
/**
 * changed marks r for view.js and schedules a new order: at the next frame,
 * or, for the answers that stream in while the servers are asked (soon),
 * at most every REBUILD_MS, so that a big list spends the page's time
 * drawing, not re-sending rows to be sorted. full false says only r's
 * state and ping changed (an answer without a row: most servers of a big
 * list time out).
 * @param {Row} r
 */
function changed(r, soon = false, full = true) {
  changedRows.add(r);
  if (full) r.full = true;
  if (soon) invalidateSoon();
  else invalidate();
}

/**
 * apply copies a finished conversation (worker.js Result) into its row.
 * The row array's positions are model.js Row (codecs.RowName…); a field
 * the protocol table says the protocol does not fill stays blank.
 */
function apply(r, res) {
  r.state = res.state;
  r.detail = res.detail;
  r.ping = res.rtt != null ? Math.round(res.rtt * 10) / 10 : r.ping;
  r.received = res.received;
  const row = res.row;
  if (row) {
    const has = fills[r.protocol];
    /** field reads a row field the protocol fills, else blank. @type {(f: keyof typeof Row, blank: any) => any} */
    const field = (f, blank) => (!has || has.has(f) ? row[Row[f]] : blank);
    r.name = field("name", "");
    r.map = field("map", "");
    r.mode = field("mode", "");
    r.players = field("players", -1);
    r.bots = field("bots", 0);
    r.max = field("max", 0);
    r.password = field("password", false);
    r.country = field("country", "");
    r.anticheat = field("anticheat", false);
    r.os = field("os", "");
    r.keywords = field("keywords", "");
    r.hay = field("hay", "") + "\n" + r.addr.toLowerCase();
    if (EXTRA.length) {
      r.x = {};
      for (const f of EXTRA) if (!has || has.has(f)) r.x[f] = row[Row[f]];
    }
    addMode(r.mode);
  }
  if (res.state === State.online) r.backoff = 1;
  else if (res.state === State.rateLimited || res.state === State.relayLimited) r.backoff = Math.min(r.backoff * 2, 16);
  changed(r, true, !!row);
}

/**
 * fromSummary fills a row from a master list's entry (server.Summary), the
 * state the server last knew: shown until the page's own ask answers.
 * @param {Row} r
 * @param {any} s
 */
function fromSummary(r, s) {
  if (r.lastAsked) return; // the page's own answer is newer
  const known = Object.values(State).includes(s.state);
  r.state = known ? s.state : PageState.pending;
  r.detail = s.detail ?? "";
  r.name = s.name ?? "";
  r.map = s.map ?? "";
  r.mode = s.game ?? "";
  r.players = known ? s.players ?? -1 : -1;
  r.bots = s.bots ?? 0;
  r.max = s.max_players ?? 0;
  r.password = !!s.password;
  r.country = s.country ?? "";
  r.anticheat = !!s.anticheat;
  r.os = s.os ?? "";
  r.keywords = s.keywords ?? "";
  r.ping = s.rtt_seconds ? Math.round(s.rtt_seconds * 10000) / 10 : null;
  r.hay = [r.name, r.map, r.mode, r.addr].join("\n").toLowerCase();
  const x = EXTRA.filter((f) => s[f] != null);
  if (x.length) r.x = Object.fromEntries(x.map((f) => [f, s[f]]));
  addMode(r.mode);
}

// ---- querying ----

function minInterval(r) {
  const base = Math.max(relay?.cacheTTL ?? 0, r.protocol === "zandronum" ? ZANDRONUM_MIN_MS : 0);
  return base * r.backoff;
}

/**
 * ask sends r to the worker unless it was asked too recently for its
 * protocol. Callers update the progress line once after their asks.
 */
function ask(r, now = Date.now()) {
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
function want(list) {
  let n = 0;
  for (const r of list) if (!r.gone && !r.queued) (r.want = true), n++;
  if (n) {
    waiting += n;
    askAfterOrder = true;
    invalidate();
  }
}
let waiting = 0; // rows marked want (an upper bound: asks clear it lazily)
let askAfterOrder = false;
let orderCursor = 0; // position in order from which pumpAsks looks for rows
let rowCursor = 0; // index in rows from which it looks for rows the filters hide

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
 * while the person types in or scrolls a big list (typing, scrolling),
 * and then first the rows the last search shows and the rows in view.
 */
function pumpAsks() {
  // Rows just wanted are asked once view.js has put them in order (and
  // they are drawn): ask in the order shown, and show before asking.
  if (!connected || waiting <= 0 || askAfterOrder) return;
  const at = performance.now();
  if (typing(at) || scrolling(at)) return afterPause();
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
 * results applies a batch of finished conversations from the worker.
 * While the person types in a big list (holding), the servers' answers
 * are kept (held) and applied together once typing pauses: nothing is
 * drawn, sent to view.js or counted for them until then, so that a
 * keystroke's frames draw the keystroke's order only.
 */
function results(list) {
  const hold = holding(performance.now());
  if (!hold && held.length) applyHeld();
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
    if (hold) held.push({ r, res });
    else answer(r, res);
  }
  markFirstDecode();
  // Held answers mean typing, when no ask goes either (pumpAsks).
  if (hold) return afterPause();
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

/**
 * The answers held while the person types (results), applied at most
 * TYPING_HOLD_MS after the last keystroke and HOLD_MAX_MS after the first
 * of them came.
 * @type {{r: Row, res: any}[]}
 */
let held = [];
let heldSince = 0;
let pauseTimer = 0;

/**
 * typing says whether the person is typing in a big list's filters at now
 * (a keystroke within TYPING_HOLD_MS): the page then draws the keystrokes'
 * orders only; answers wait (holding) and so do new asks (pumpAsks), which
 * go, once typing pauses, to the rows the last search shows.
 * @param {number} now
 */
function typing(now) {
  return rows.length > BIG && !document.hidden && now - lastKey < TYPING_HOLD_MS;
}

/**
 * scrolling says whether the person is scrolling a big list at now (a
 * scroll within SCROLL_HOLD_MS): new asks wait for the scrolling to rest
 * (pumpAsks), and then go first to the rows in view, not to the rows
 * scrolled past; the answers to the asks already out are drawn as they
 * come. Asked while scrolling, a refresh's answers would share each
 * scroll's frames (~36 µs of the page's time per answer, thousands a
 * second on a fast network).
 * @param {number} now
 */
function scrolling(now) {
  return rows.length > BIG && !document.hidden && now - lastScroll < SCROLL_HOLD_MS;
}

/** holding says whether answers coming at now are held. @param {number} now */
function holding(now) {
  return typing(now) && (!held.length || now - heldSince < HOLD_MAX_MS);
}

/**
 * afterPause looks again, when due, at what waits for typing to pause and
 * scrolling to rest: it applies the held answers once typing paused or
 * they waited HOLD_MAX_MS, and asks again once typing paused and
 * scrolling rested.
 */
function afterPause() {
  if (held.length) heldSince ||= performance.now();
  if (pauseTimer) return;
  const due = () => {
    let at = Infinity;
    if (held.length) at = Math.min(lastKey + TYPING_HOLD_MS, heldSince + HOLD_MAX_MS);
    const quiet = Math.max(lastKey + TYPING_HOLD_MS, lastScroll + SCROLL_HOLD_MS);
    if (waiting > 0 && quiet > performance.now()) at = Math.min(at, quiet);
    return at;
  };
  const arm = () => {
    const at = due();
    if (at < Infinity) pauseTimer = setTimeout(check, Math.max(0, at - performance.now()));
  };
  const check = () => {
    pauseTimer = 0;
    const now = performance.now();
    if (held.length && !holding(now)) release();
    if (!typing(now) && !scrolling(now)) pumpAsks();
    arm();
  };
  arm();
}

/** applyHeld applies the held answers and draws the rows in view they and the asks meanwhile changed. */
function applyHeld() {
  heldSince = 0;
  const list = held;
  held = [];
  for (const { r, res } of list) answer(r, res);
  if (redraw.size) drawSoon();
}

/** release applies the held answers, sends their rows to view.js, and asks on. */
function release() {
  applyHeld();
  if (!orderPending()) sendRows();
  pumpAsks();
  progress();
}

/** loadMaster asks m's list: from the server when it keeps it, else through the relay. @param {Master} m */
function loadMaster(m, now = Date.now()) {
  if (m.spec.kept) return loadKept(m);
  const key = masterKey(m);
  const last = masterAsked.get(key) ?? 0;
  if (now - last < ZANDRONUM_MIN_MS) return;
  masterAsked.set(key, now);
  m.state = PageState.querying;
  relay.ask({ key, protocol: m.spec.protocol, target: m.spec.addr, options: masterOptions[m.spec.protocol] ?? null, timeoutMs: replyTimeout(relay, 2000) });
}
const masterAsked = new Map();

/**
 * masterKey is the key of a master's conversation: "master:host:port" for
 * Zandronum's (as the browse handler's boot asks it), else
 * "master:protocol/host:port".
 * @param {Master} m
 */
function masterKey(m) {
  return m.spec.protocol === "zandronum" ? `master:${m.spec.addr}` : `master:${m.spec.protocol}/${m.spec.addr}`;
}

/**
 * master adds the servers of a master's list the relay brought, and asks
 * them once view.js has put them in order.
 */
function master(res) {
  const m = masters.find((x) => masterKey(x) === res.key);
  const protocol = m?.spec.protocol ?? "zandronum";
  const addr = m?.spec.addr ?? res.key.slice("master:".length);
  const list = res.servers ?? [];
  if (m) Object.assign(m, { state: res.state, detail: res.detail, count: list.length, complete: true });
  want(list.map((s) => addRow(protocol, s, "master", null, m?.label ?? addr)));
  progress();
}


/**
 * loadKept loads a list the server keeps (GET /api/v1/masters/…, a
 * server.MasterList): its servers show at once with their last known state,
 * then are asked through the relay as any other. The rows of the master's
 * previous list that this one does not hold leave the table. While the
 * server is still fetching the list, it is re-read every KEPT_POLL_MS with
 * ?after=N: only the servers that came since the last read travel.
 * @param {Master} m
 * @param {number} [after] servers of the list already read
 */
async function loadKept(m, after = 0) {
  const n = ++m.loaded;
  m.state = PageState.querying;
  progress();
  const params = new URLSearchParams();
  if (m.filter) params.set("filter", m.filter);
  if (after) params.set("after", String(after));
  const q = params.toString() ? `?${params}` : "";
  let list;
  try {
    const resp = await fetch(`/api/v1/masters/${encodeURIComponent(m.spec.protocol)}/${pathAddr(m.spec.addr)}${q}`, { headers: { Accept: "application/json" } });
    if (!resp.ok) throw new Error(`${resp.status} ${(await resp.text()).trim().slice(0, 200)}`);
    list = await resp.json();
  } catch (err) {
    if (n !== m.loaded) return;
    Object.assign(m, { state: PageState.error, detail: `the list did not load: ${err.message}` });
    progress();
    return;
  }
  if (n !== m.loaded) return; // a newer load (another game) is under way
  // offset 0: the whole list (also when the server replaced the one read).
  const offset = list.offset ?? 0;
  const got = list.servers ?? [];
  // A server the relay refuses to ask is no use in the table.
  const servers = got.filter((/** @type {any} */ s) => s.state !== State.refused);
  const count = (offset ? m.count : 0) + servers.length;
  Object.assign(m, { state: list.error && !count ? PageState.error : State.online, detail: list.error ?? "", count, complete: !!list.complete });
  const listed = new Set();
  const added = [];
  for (const s of servers) {
    const r = addRow(s.protocol, s.address, "master", s.options ?? null, m.label);
    fromSummary(r, s);
    changed(r);
    listed.add(r);
    added.push(r);
  }
  // While the server is still paging through the master, the list grows:
  // rows leave only when a complete list, read whole, does not hold them.
  for (const r of list.complete && !offset ? rows : []) {
    if (r.master === m.label && r.source === "master" && !listed.has(r) && !r.gone && !store.favourites.has(r.key)) {
      r.gone = true;
      goneCount++;
      r.want = false;
      changed(r);
    }
  }
  want(added.filter((r) => !r.lastAsked)); // a re-read while the server pages asks only the new ones
  progress();
  if (!list.complete && !list.error) setTimeout(() => n === m.loaded && loadKept(m, offset + got.length), KEPT_POLL_MS);
}
const KEPT_POLL_MS = 3000;

function refreshAll() {
  const now = Date.now();
  for (const m of masters) loadMaster(m, now);
  const again = rows.filter((r) => !r.gone && !r.queued);
  const skipped = again.filter((r) => r.lastAsked && now - r.lastAsked < minInterval(r)).length;
  want(again);
  drawProgress();
  if (skipped) {
    $("progress-text").textContent = `${skipped} server${skipped > 1 ? "s were" : " was"} asked moments ago and will be refreshed when the server allows it`;
  }
}

// ---- view: filter and sort (in view.js), render ----

const modes = new Set();
let modesDirty = false;
/** @param {string} mode */
function addMode(mode) {
  if (mode && !modes.has(mode)) {
    modes.add(mode);
    modesDirty = true;
  }
}

const viewer = new Worker(/** @type {any} */ (import.meta).resolve("/static/view.js"), { type: "module", name: "querylens view" });
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
  drawStats.shared++;
  const t = orderTimes.get(want);
  if (t) t.shared = true;
  showOrder(want, o, online, narrowed);
}

let dirty = false;
let seq = 0; // the last query sent to view.js
let shownSeq = 0; // the query of the order shown
/** @type {{seq: number, resolve: (v?: any) => void}[]} */
let orderWaiters = [];
let onlineCount = 0;

/**
 * orderPending says a query's order is on its way from view.js: the
 * drawing the answers ask for (a row's new state, the status line) waits
 * for it, as its drawing refills the rows in view anyway.
 */
function orderPending() {
  return shownSeq < seq;
}

/**
 * invalidate sends view.js what changed (rows, filters, sort) once per
 * frame, or at once when the page is hidden (no frames).
 */
function invalidate() {
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
 * TYPING_HOLD_MS after the last keystroke or scroll, at most HOLD_MAX_MS
 * after the last order that took them in): rows do not reshuffle between
 * keys or under a scrolling reader, and a keystroke's frame draws its own
 * order only.
 */
const REBUILD_MS = 200;
const BIG = 5000;
const BIG_REBUILD_MS = 500;
const TYPING_HOLD_MS = 400;
const SCROLL_HOLD_MS = 250;
const HOLD_MAX_MS = 2000;
let soonTimer = 0;
let lastRebuild = 0;
let lastKey = -Infinity;
let lastScroll = -Infinity;
function invalidateSoon() {
  if (dirty || soonTimer) return;
  const big = rows.length > BIG;
  let at = lastRebuild + (big ? BIG_REBUILD_MS : REBUILD_MS);
  if (big) at = Math.max(at, Math.min(Math.max(lastKey, lastScroll) + TYPING_HOLD_MS, lastRebuild + HOLD_MAX_MS));
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

/**
 * sendRows sends view.js the rows changed since it last heard; it orders
 * them at the next query. The answers' rows are sent with each batch of
 * answers, not with the query a keystroke makes, which then costs its
 * frame only the query.
 */
function sendRows() {
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
function rebuild(typing = false, text = undefined) {
  dirty = false;
  const now = performance.now();
  if (typing) lastKey = now;
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
  viewer.postMessage({ type: "query", seq: mine, filter: filters(text), sort, merge });
  orderTimes.set(mine, { sent: now, got: 0, done: 0, drawn: 0, shared: false, merge, foreseen: text !== undefined });
  if (orderTimes.size > 256) orderTimes.delete(/** @type {number} */ (orderTimes.keys().next().value));
  if (!merge && (unmerged || changedRows.size)) invalidateSoon();
  if (shared && !document.hidden) requestAnimationFrame(() => takeShared(mine));
  if (modesDirty) fillModes();
  for (const th of table.tHead.rows[0].cells) {
    const v = th.dataset.sort === sort.key ? (sort.dir > 0 ? "ascending" : "descending") : "none";
    if (th.getAttribute("aria-sort") !== v) th.setAttribute("aria-sort", v);
  }
  return new Promise((resolve) => orderWaiters.push({ seq: mine, resolve }));
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
const orderTimes = new Map();

/**
 * showOrder draws the order of query n: ord, the indexes of the rows
 * shown, online of them online; narrowed is view.js's count of orders
 * found among a recent search's rows (for measuring).
 * @param {number} n @param {Int32Array} ord @param {number} online @param {number} narrowed
 */
function showOrder(n, ord, online, narrowed) {
  drawStats.narrowed = narrowed;
  const t = orderTimes.get(n);
  if (t) t.drawn = performance.now();
  const activeKey = rows[order[active]]?.key;
  shownSeq = n;
  order = ord;
  onlineCount = online;
  if (activeKey) active = indexOfKey(activeKey);
  orderCursor = 0;
  const count = String(order.length + 1);
  if (table.getAttribute("aria-rowcount") !== count) table.setAttribute("aria-rowcount", count);
  const empty = $("empty-state"), none = order.length > 0 || rows.length === 0;
  if (empty.hidden !== none) empty.hidden = none;
  text($("counts"), `${order.length} shown of ${known()}`);
  windowStale = true;
  renderWindow();
  if (askAfterOrder) {
    askAfterOrder = false;
    rowCursor = 0;
  }
  pumpAsks();
  progress();
  // The answers' rows held back while this order was on its way.
  if (changedRows.size) setTimeout(() => orderPending() || sendRows(), 0);
  const done = orderWaiters.filter((w) => w.seq <= n);
  orderWaiters = orderWaiters.filter((w) => w.seq > n);
  for (const w of done) w.resolve();
}

/** indexOfKey is the position in order of the row with key, or -1. @param {string} key */
function indexOfKey(key) {
  const r = byKey.get(key);
  if (!r) return -1;
  return order.indexOf(r.i);
}

/** known counts the rows in the table (not the ones a master dropped). */
function known() {
  return rows.length - goneCount;
}
let goneCount = 0;

function fillModes() {
  modesDirty = false;
  const sel = /** @type {HTMLSelectElement} */ ($("f-mode"));
  const cur = sel.value;
  sel.replaceChildren(h("option", { value: "" }, "All modes"), ...[...modes].sort((a, b) => a.localeCompare(b)).map((m) => h("option", { value: m }, m)));
  sel.value = cur;
}

/** The row's words for each state (short: they sit in the name cell). */
/** @type {Record<string, string>} */
const stateLabels = {
  ...StateWord, [PageState.error]: "error", [PageState.pending]: "waiting", [PageState.querying]: "asking…",
};

/** The anti-cheat's name where a protocol names it (row field "anticheat"). @type {Record<string, string>} */
const antiCheatName = { a2s: "VAC" };

/** extraTags shows the row fields only some protocols fill: anti-cheat, OS and keywords. */
function extraTags(r) {
  let s = "";
  if (r.anticheat) s += ` <span class="tag" title="Anti-cheat on" data-testid="tag-anticheat">${esc(antiCheatName[r.protocol] ?? "anti-cheat")}</span>`;
  if (r.os) s += ` <span class="tag" data-testid="tag-os">${esc(r.os)}</span>`;
  if (r.keywords) {
    const short = r.keywords.length > 24 ? r.keywords.slice(0, 23) + "…" : r.keywords;
    s += ` <span class="tag" title="${esc(r.keywords)}" data-testid="tag-keywords">${esc(short)}</span>`;
  }
  return s;
}

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

/**
 * The pool of row elements: each <tr> has its cells made once and is
 * refilled with another server's fields as the table scrolls. Each cell's
 * text is one Text node made with the cell, whose data is rewritten when
 * it changed: the node and its layout object stay, so a refill styles
 * nothing and lays out only the text that changed. The attributes a
 * refill writes are kept in attrs and written only when they changed.
 * @typedef {{tr: HTMLTableRowElement, star: HTMLButtonElement, proto: HTMLTableCellElement,
 *   badge: HTMLButtonElement, name: HTMLAnchorElement, flags: HTMLTableCellElement,
 *   master: HTMLTableCellElement, bots: HTMLSpanElement, row: number, y: number,
 *   t: {star: CellText, proto: CellText, badge: CellText, name: CellText, players: CellText, bots: CellText, map: CellText,
 *     mode: CellText, ping: CellText, addr: CellText, country: CellText, master: CellText, extra: CellText[]},
 *   attrs: Record<string, string|boolean>, flagsSig: string}} Slot
 */
/** @type {Slot[]} */
const pool = [];
/** The slot of each row element. @type {Map<Element, Slot>} */
const slotOf = new Map();
tbody.replaceChildren();

/**
 * A cell's Text node, with the text last written to it (shown): fill
 * compares with that, not with the node's data, whose every read makes a
 * new script string.
 * @typedef {Text & {shown: string}} CellText
 */

/** textIn gives el an empty Text node of its own and returns it. @param {Element} el */
function textIn(el) {
  const t = /** @type {CellText} */ (document.createTextNode(""));
  t.shown = "";
  el.append(t);
  return t;
}

/** makeSlot builds one row element with its cells. @returns {Slot} */
function makeSlot() {
  const tr = document.createElement("tr");
  tr.innerHTML = `<td role="cell"><button type="button" class="star" aria-label="Favourite" aria-pressed="false" data-fav></button></td>` +
    `<td role="cell" class="dm"></td><td role="cell" data-testid="cell-name"><button type="button" class="state" data-detail data-testid="row-state"></button><a class="name" tabindex="-1"></a></td>` +
    `<td role="cell" class="num" data-testid="cell-players"></td><td role="cell" class="dm"></td><td role="cell" class="dm"></td><td role="cell" class="num dm" data-testid="cell-ping"></td>` +
    `<td role="cell" class="mono dm"></td><td role="cell" class="dm"></td><td role="cell"></td><td role="cell" class="listed" data-testid="cell-listed"></td>` + EXTRA.map(() => `<td role="cell" class="dm"></td>`).join("");
  tr.setAttribute("data-testid", "server-row");
  tr.setAttribute("role", "row");
  tr.className = "row";
  const td = tr.cells;
  const star = /** @type {HTMLButtonElement} */ (td[0].firstChild);
  const badge = /** @type {HTMLButtonElement} */ (td[2].firstChild);
  const name = /** @type {HTMLAnchorElement} */ (td[2].lastChild);
  const players = textIn(td[3]);
  const bots = document.createElement("span");
  bots.className = "bots";
  bots.hidden = true;
  td[3].append(bots);
  /** @type {Slot} */
  const s = {
    tr, star, proto: td[1], badge, name, flags: td[9], master: td[10], bots, row: -1, y: -1,
    t: {
      star: textIn(star), proto: textIn(td[1]), badge: textIn(badge), name: textIn(name), players, bots: textIn(bots),
      map: textIn(td[4]), mode: textIn(td[5]), ping: textIn(td[6]), addr: textIn(td[7]), country: textIn(td[8]),
      master: textIn(td[10]), extra: [...td].slice(11).map(textIn),
    },
    attrs: { cls: "row" }, flagsSig: "",
  };
  slotOf.set(tr, s);
  return s;
}

/** show puts a value in a cell only when it changed (no layout otherwise). */
function text(/** @type {HTMLElement} */ el, /** @type {string} */ s) {
  if (el.textContent !== s) el.textContent = s;
}

/** data rewrites a cell's Text node when its text changed. @param {CellText} t @param {string} s */
function data(t, s) {
  if (t.shown === s) return;
  t.shown = s;
  t.data = s;
}

/**
 * attr sets el's attribute name to v when the slot's last written value
 * differs (key names it in the slot; null removes the attribute).
 * @param {Slot} s @param {string} key @param {Element} el @param {string} name @param {string|null} v
 */
function attr(s, key, el, name, v) {
  if (s.attrs[key] === (v ?? false)) return;
  s.attrs[key] = v ?? false;
  if (v == null) el.removeAttribute(name);
  else el.setAttribute(name, v);
}

/**
 * position numbers slot s as the row at position k of the order (its
 * aria-rowindex; the slot's y says where it is drawn, and markActive
 * gives the active row its id).
 * @param {Slot} s @param {number} k
 */
function position(s, k) {
  const pos = String(k + 2);
  if (s.attrs.pos === pos) return;
  s.attrs.pos = pos;
  s.tr.setAttribute("aria-rowindex", pos);
}

/** extraText is an extra field as the table shows it. @param {any} v */
function extraText(v) {
  if (v == null || v === "") return "";
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

/**
 * fill writes row r (at position k of the order) into slot s: only what
 * differs from what the slot shows is written, so a row element that
 * shows the same server again (a search that keeps it in view) changes
 * nothing but its position.
 * @param {Slot} s @param {Row} r @param {number} k
 */
function fill(s, r, k) {
  const fav = store.favourites.has(r.key);
  const ok = r.state === State.online;
  const tr = s.tr;
  const t = s.t;
  if (tr.hidden || s.attrs.stale) {
    tr.hidden = false;
    s.attrs.stale = false;
    tr.removeAttribute("aria-hidden");
  }
  position(s, k);
  const cls = ok ? (k === active ? "row active" : "row") : k === active ? "row dim active" : "row dim";
  if (s.attrs.cls !== cls) {
    s.attrs.cls = cls;
    tr.className = cls;
  }
  if (s.attrs.key !== r.key) drawStats.refills++;
  attr(s, "key", tr, "data-key", r.key);
  attr(s, "state", tr, "data-state", r.state);
  attr(s, "fav", s.star, "aria-pressed", fav ? "true" : "false");
  data(t.star, fav ? "★" : "☆");
  data(t.proto, protocolTitles[r.protocol] ?? r.protocol);
  // The badge keeps its box whatever the state: an online row's is empty
  // and unseen (app.css .state-online), not display: none, so a row that
  // goes from asked to online and back restyles the badge but never
  // builds its boxes again.
  attr(s, "badge", s.badge, "class", ok ? "state state-online" : `state state-${r.state}`);
  data(t.badge, ok ? "" : stateLabels[r.state] ?? r.state);
  const url = r.url ?? (r.url = statusURL(r));
  attr(s, "href", s.name, "href", url);
  data(t.name, r.name || r.addr);
  // The players' cell keeps its text node and its bots' span: refilled,
  // never parsed again.
  const counted = ok && r.players >= 0;
  data(t.players, counted ? `${r.players - r.bots}${r.max ? "/" + r.max : ""}` : "");
  const botCount = counted ? r.bots : 0;
  if (s.attrs.bots !== String(botCount)) {
    s.attrs.bots = String(botCount);
    s.bots.hidden = !botCount;
    if (botCount) data(t.bots, `+${botCount} bot${botCount > 1 ? "s" : ""}`);
  }
  data(t.map, r.map);
  data(t.mode, r.mode);
  data(t.ping, r.ping == null ? "" : r.ping < 1 ? "<1 ms" : Math.round(r.ping) + " ms");
  data(t.addr, r.addr);
  data(t.country, r.country);
  const flags = r.password || r.anticheat || r.os || r.keywords
    ? (r.password ? `<span class="tag" title="Password required">${LOCK} password</span>` : "") + extraTags(r) : "";
  if (s.flagsSig !== flags) {
    s.flagsSig = flags;
    s.flags.innerHTML = flags;
  }
  data(t.master, r.master);
  for (let j = 0; j < EXTRA.length; j++) data(t.extra[j], extraText(r.x?.[EXTRA[j]]));
  if (s === titled) titles(s, r);
}

/**
 * titled is the slot whose tooltips (title attributes) are written: the
 * row under the pointer or holding the focus. Writing or changing a title
 * restyles its element (the browser's own style sheet reads [title]), so
 * the rows a keystroke or a scroll refills carry none, and the row a
 * person points at or tabs into gets them then, kept as it is refilled.
 * @type {Slot|null}
 */
let titled = null;

/** titles writes the tooltips of slot s, which shows row r. @param {Slot} s @param {Row} r */
function titles(s, r) {
  const ok = r.state === State.online;
  const name = r.name || r.addr;
  attr(s, "title", s.name, "title", r.master ? `${name} · listed by ${r.master}` : name);
  attr(s, "detail", s.badge, "title", ok ? null : r.detail || stateLabels[r.state] || r.state);
  attr(s, "proto", s.proto, "title", r.protocol);
  attr(s, "listed", s.master, "title", r.master ? `listed by ${r.master}` : null);
  const bots = ok && r.players >= 0 ? r.bots : 0;
  attr(s, "botsTitle", s.bots, "title", bots ? `${bots} bot${bots > 1 ? "s" : ""}` : null);
}

/** untitle takes slot s's tooltips away. @param {Slot} s */
function untitle(s) {
  for (const [key, el] of /** @type {[string, Element][]} */ ([["title", s.name], ["detail", s.badge], ["proto", s.proto], ["listed", s.master], ["botsTitle", s.bots]])) {
    attr(s, key, el, "title", null);
  }
}

/** pointAt gives the row element under the pointer or the focus its tooltips. @param {Event} e */
function pointAt(e) {
  const tr = /** @type {Element} */ (e.target).closest?.("tr");
  const s = tr ? slotOf.get(tr) : undefined;
  if (!s || s === titled) return;
  if (titled) untitle(titled);
  titled = s;
  if (s.row >= 0 && !s.tr.hidden) titles(s, rows[s.row]);
}

/**
 * drawStats counts, for measuring, the rows refilled with another server,
 * moved, and put in the body, the orders read from shared memory
 * (takeShared), and (view.js's count, as of the last order drawn) the
 * orders found among a recent search's rows.
 */
const drawStats = { refills: 0, moves: 0, inserts: 0, shared: 0, narrowed: 0 };

/** win is the part of the order the body holds. */
const win = { first: 0, last: 0 };
const CHUNK = 8;
// windowStale says the rows or their order changed since the window was
// drawn: renderWindow draws even when the window did not move.
let windowStale = true;
/** The slot each drawn row has, by row index. @type {Map<number, Slot>} */
const bound = new Map();

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
  if (s === titled) {
    untitle(s);
    titled = null;
  }
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
function drawSoon(r) {
  if (r) redraw.add(r);
  // While answers are held, so are the rows asked meanwhile (release).
  if (drawQueued || held.length) return;
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
function measure() {
  viewport.top = wrap.scrollTop;
  viewport.height = wrap.clientHeight;
  viewport.head = table.tHead.offsetHeight;
}
measure();

let scrollQueued = false;
wrap.addEventListener("scroll", () => {
  viewport.top = wrap.scrollTop;
  lastScroll = performance.now();
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

/**
 * progress redraws the status line and the bar at a frame, at most every
 * PROGRESS_MS: while answers stream in, a new line of text each frame is
 * a layout of the page's top for a count nobody reads that fast.
 */
let progressQueued = false;
let lastProgress = -Infinity;
const PROGRESS_MS = 250;
function progress() {
  if (progressQueued) return;
  progressQueued = true;
  const wait = Math.max(0, lastProgress + PROGRESS_MS - performance.now());
  if (document.hidden) setTimeout(drawProgress, wait);
  else if (wait > 0) setTimeout(() => requestAnimationFrame(drawProgress), wait);
  else requestAnimationFrame(drawProgress);
}

/** @type {Element|null} */
let progressBar = null;
function drawProgress() {
  progressQueued = false;
  // An order on its way calls progress() again once drawn.
  if (orderPending()) return;
  lastProgress = performance.now();
  const bar = (progressBar ??= /** @type {Element} */ (document.querySelector(".progress [role=progressbar]")));
  if (bar.getAttribute("aria-valuemax") !== String(asked)) bar.setAttribute("aria-valuemax", String(asked));
  if (bar.getAttribute("aria-valuenow") !== String(answered)) bar.setAttribute("aria-valuenow", String(answered));
  /** @type {HTMLElement} */ ($("bar")).style.transform = `scaleX(${asked ? answered / asked : 0})`;
  if (!connected) return;
  const ms = masters.map((m) => m.state === State.online ? `${m.label}: ${m.count}${m.complete ? "" : "+"} servers` : `${m.label}: ${stateLabels[m.state] ?? m.state}`).join(", ");
  const n = known();
  text($("progress-text"), n || asked
    ? `${n} known · ${asked} asked · ${answered} answered · ${onlineCount} online${ms ? " · " + ms : ""}`
    : ms ? `master ${ms}` : "Asking the masters…");
}

// ---- interaction ----

/**
 * foreseen is the search's text a keystroke's query was sent for before
 * the box took the key (beforeinput), or null: the input that follows
 * sends no query of its own when the box then says the same.
 * @type {string|null}
 */
let foreseen = null;

/**
 * foresee is the search box's text once the edit e announces is made, or
 * null when that is not plain to see: a character typed or pasted over
 * the selection (within the box's maxlength), or a backspace deleting the
 * selection or one plain character (a composing IME, a surrogate pair, a
 * word deleted: left to the input event).
 * @param {InputEvent} e @returns {string|null}
 */
function foresee(e) {
  const box = /** @type {HTMLInputElement} */ (e.target);
  const v = box.value, a = box.selectionStart, b = box.selectionEnd;
  if (e.isComposing || a == null || b == null) return null;
  if ((e.inputType === "insertText" || e.inputType === "insertFromPaste") && e.data != null) {
    const w = v.slice(0, a) + e.data + v.slice(b);
    // Beyond the box's maxlength the box cuts the text or refuses it.
    return box.maxLength >= 0 && w.length > box.maxLength ? null : w;
  }
  if (e.inputType === "deleteContentBackward") {
    if (a !== b) return v.slice(0, a) + v.slice(b);
    if (a > 0 && /[\x20-\x7e]/.test(v[a - 1])) return v.slice(0, a - 1) + v.slice(a);
  }
  return null;
}

// A keystroke's query goes to view.js as the key comes (beforeinput),
// before the box takes it in (its editing and layout take a millisecond
// or two): the order is then more often ready by the frame that shows
// the key typed, which then shows its rows too. The input event that
// follows checks the box says what was foreseen; a key the box did not
// take as foreseen sends its query then.
$("filters").addEventListener("beforeinput", (e) => {
  foreseen = null;
  if (/** @type {Element} */ (e.target).id !== "q" || e.defaultPrevented) return;
  const box = /** @type {HTMLInputElement} */ (e.target);
  const v = foresee(/** @type {InputEvent} */ (e));
  // A key that leaves the search as it was (a space at its end) asks nothing.
  if (v == null || v.trim().toLowerCase() === box.value.trim().toLowerCase()) return;
  foreseen = v;
  rebuild(true, v);
  // A key foreseen that the box then did not take (no input event
  // follows): the box's own search is sent.
  setTimeout(() => {
    if (foreseen !== null && box.value !== foreseen) rebuild(true);
    foreseen = null;
  }, 0);
});
$("filters").addEventListener("input", (e) => {
  const box = /** @type {HTMLInputElement} */ (e.target);
  if (box.id === "f-game") return;
  const was = foreseen;
  foreseen = null;
  if (was !== null && box.id === "q" && box.value === was) return;
  // A keystroke's query goes to view.js at once, not at the next frame:
  // its order is drawn a frame sooner, and a keystroke is one query.
  rebuild(true);
});
$("filters").addEventListener("submit", (e) => e.preventDefault());

table.tHead.addEventListener("click", (e) => {
  const th = /** @type {HTMLElement|null} */ (/** @type {Element} */ (e.target).closest("th[data-sort]"));
  if (!th) return;
  const key = th.dataset.sort;
  sort = sort.key === key ? { key, dir: -sort.dir } : { key, dir: key === "players" || key === "fav" ? -1 : 1 };
  saveStore();
  invalidate();
});

function toggleFavourite(r) {
  if (store.favourites.has(r.key)) store.favourites.delete(r.key);
  else store.favourites.add(r.key);
  saveStore();
  changed(r);
}

/** rowAt is the row shown at position k. @param {number} k */
const rowAt = (k) => rows[order[k]];

tbody.addEventListener("click", (e) => {
  const t = /** @type {Element} */ (e.target);
  const tr = /** @type {HTMLElement|null} */ (t.closest("tr.row"));
  if (!tr) return;
  const k = slotOf.get(tr)?.y ?? -1;
  if (k < 0) return;
  if (t.closest("[data-fav]")) {
    e.preventDefault();
    toggleFavourite(rowAt(k));
    return;
  }
  const st = t.closest("[data-detail]");
  if (st) {
    e.preventDefault();
    showDetail(rowAt(k), st);
    return;
  }
  setActive(k, false);
});

tbody.addEventListener("pointerover", pointAt);
tbody.addEventListener("focusin", pointAt);

let popover;
function showDetail(r, anchor) {
  popover?.remove();
  const q = new URLSearchParams({ protocol: r.protocol, target: r.addr });
  for (const [k, v] of Object.entries(r.options ?? {})) q.set(`opt.${k}`, v);
  const got = r.received ?? [];
  const inspect = `/inspect?${q}` + (got.length ? `#p=${encodeURIComponent(r.protocol)}&t=${encodeURIComponent(r.addr)}&h=${got.join(",")}` : "");
  popover = h("div", { class: "popover", role: "dialog", "aria-label": "Server state", "data-testid": "state-detail" },
    h("strong", {}, `${r.addr}: ${stateLabels[r.state] ?? r.state}`),
    r.detail ? h("pre", {}, r.detail) : null,
    r.master ? h("p", { class: "muted small" }, `Listed by ${r.master}`) : null,
    h("div", { class: "inline-form" },
      h("a", { class: "btn", href: statusURL(r) }, "Status page"),
      h("a", { class: "btn", href: inspect }, "Inspect packets"),
      h("button", { type: "button", class: "btn", onclick: () => popover.remove() }, "Close")));
  document.body.append(popover);
  const b = anchor.getBoundingClientRect();
  popover.style.left = `${Math.min(b.left, innerWidth - popover.offsetWidth - 8)}px`;
  popover.style.top = `${Math.min(b.bottom + 4, innerHeight - popover.offsetHeight - 8)}px`;
  popover.querySelector("button").focus();
}
document.addEventListener("keydown", (e) => { if (e.key === "Escape") popover?.remove(); });
document.addEventListener("click", (e) => { if (popover && !popover.contains(/** @type {Node} */ (e.target)) && !/** @type {Element} */ (e.target).closest("[data-detail]")) popover.remove(); });

function setActive(k, scroll = true) {
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

wrap.tabIndex = 0;
wrap.setAttribute("role", "region");
wrap.setAttribute("aria-label", "Server list; arrow keys move, Enter opens");
wrap.addEventListener("keydown", (e) => {
  const page = Math.max(1, Math.floor(wrap.clientHeight / ROW_H) - 1);
  const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
  if (/** @type {Element} */ (e.target).closest("thead")) return;
  const r = rowAt(active);
  if (e.key in moves) setActive((active < 0 ? -1 : active) + moves[e.key]);
  else if (e.key === "Home") setActive(0);
  else if (e.key === "End") setActive(order.length - 1);
  else if (e.key === "Enter" && r) location.href = statusURL(r);
  else if (e.key === "f" && r) toggleFavourite(r);
  else return;
  e.preventDefault();
});
document.addEventListener("keydown", (e) => {
  if (e.key === "/" && !/** @type {Element} */ (e.target).closest("input, textarea, select")) {
    e.preventDefault();
    $("q").focus();
  }
});

$("refresh").addEventListener("click", refreshAll);

// ---- the game picker: the filter of the Steam masters the server keeps ----

const steamMasters = masters.filter((m) => m.spec.kept && m.spec.protocol === "a2s");
const gamePick = /** @type {HTMLInputElement|null} */ (document.getElementById("f-game"));
if (gamePick && steamMasters.length) {
  /** @type {HTMLElement} */ (gamePick.closest("[data-testid=game-picker]")).hidden = false;
  gamePick.addEventListener("change", () => pickGame(gamePick.value));
}

/**
 * appIDOf reads what a person typed or picked: a game's name, the picker's
 * "Name (app ID)", or any app ID; 0 for all the games the master's own
 * filter lists, -1 for what it cannot read.
 * @param {string} typed
 */
function appIDOf(typed) {
  const t = typed.trim();
  if (!t) return 0;
  const id = /^(?:.*\()?\s*(\d+)\s*\)?$/.exec(t);
  if (id) return Number(id[1]);
  const g = (cfg.games ?? []).find((/** @type {{name: string}} */ g) => g.name.toLowerCase() === t.toLowerCase());
  return g ? g.appid : -1;
}

/**
 * pickGame sets the filter of every Steam master the server keeps to the
 * game's (\appid\N; the configured filter for none) and reloads their lists.
 * @param {string} typed
 */
function pickGame(typed) {
  const id = appIDOf(typed);
  const msg = $("game-msg");
  if (id < 0) {
    msg.textContent = `No game called "${typed.trim()}": pick one from the list or type an app ID`;
    return;
  }
  const g = (cfg.games ?? []).find((/** @type {{appid: number}} */ g) => g.appid === id);
  msg.textContent = id ? `${g ? g.name : "app " + id}: \\appid\\${id}` : "";
  for (const m of steamMasters) {
    m.filter = id ? `\\appid\\${id}` : m.spec.filter ?? "";
    loadKept(m);
  }
}

// Auto-refresh: every few seconds, re-ask the rows whose interval passed;
// ask() itself refuses servers asked within their protocol's limit.
setInterval(() => {
  const every = Number(/** @type {HTMLSelectElement} */ ($("auto")).value) * 1000;
  if (!every || !connected || document.hidden) return;
  const now = Date.now();
  for (const m of masters) {
    if (m.spec.kept) {
      if (now - (keptAt.get(m) ?? 0) >= every) keptAt.set(m, now), loadKept(m);
    } else if (now - (masterAsked.get(masterKey(m)) ?? 0) >= every) loadMaster(m, now);
  }
  want(rows.filter((r) => !r.gone && !r.queued && now - r.lastAsked >= Math.max(every, minInterval(r))));
  progress();
}, 2000);
const keptAt = new Map();

/** @type {Map<string, {left: number, resolve: (r: {protocol: string, res: any}|null) => void}>} */
const detecting = new Map();

/**
 * detectProtocol asks addr in every protocol at once through the worker
 * (each protocol's own query, as `querylens query` does without -p) and
 * resolves to the first protocol whose reply decodes, with that result (so
 * the row is filled without asking again: a Zandronum server answers once
 * per 10 s), or null when none does before the relay's reply window closes.
 * @param {string} addr host:port
 * @returns {Promise<{protocol: string, res: any}|null>}
 */
function detectProtocol(addr) {
  const names = (cfg.protocols ?? []).map((p) => p.name);
  return new Promise((resolve) => {
    if (!names.length || detecting.has(addr)) return resolve(null);
    detecting.set(addr, { left: names.length, resolve });
    for (const p of names) {
      relay.ask({ key: `detect:${p}/${addr}`, protocol: p, target: addr, options: null, timeoutMs: replyTimeout(relay, 1500) });
    }
  });
}

/**
 * detected takes one protocol's answer to a detection. A protocol is found
 * when its reply decoded: online, or a refusal the server itself sent in
 * that protocol (banned, asked too soon), never the relay's own refusals.
 * @param {any} res
 */
function detected(res) {
  const rest = res.key.slice("detect:".length);
  const slash = rest.indexOf("/");
  const protocol = rest.slice(0, slash), addr = rest.slice(slash + 1);
  const d = detecting.get(addr);
  if (!d) return; // already found; later answers are ignored
  const spoke = res.state === State.online || ((res.state === State.banned || res.state === State.rateLimited) && res.received?.length > 0);
  if (spoke) {
    detecting.delete(addr);
    d.resolve({ protocol, res });
  } else if (--d.left === 0) {
    detecting.delete(addr);
    d.resolve(null);
  }
}

$("add-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  let protocol = $("add-protocol").value;
  const addr = hostPort($("add-addr").value, (cfg.protocols ?? []).find((p) => p.name === protocol)?.default_port);
  if (!addr) {
    $("add-msg").textContent = "Enter host:port";
    return;
  }
  let found = null;
  if (protocol === "detect") {
    if (!connected) {
      $("add-msg").textContent = "Not connected to the relay yet";
      return;
    }
    $("add-msg").textContent = `Detecting the protocol of ${addr}…`;
    found = await detectProtocol(addr);
    if (!found) {
      $("add-msg").textContent = `No protocol answered at ${addr}`;
      return;
    }
    protocol = found.protocol;
  }
  if (!store.added.some((s) => s.protocol === protocol && s.addr === addr)) {
    store.added.push({ protocol, addr });
    saveStore();
  }
  const r = addRow(protocol, addr, "added");
  if (found) {
    asked++;
    answered++;
    r.lastAsked = Date.now();
    apply(r, found.res);
    await rebuild(); // at once: the message below says the row is there
    const title = (cfg.protocols ?? []).find((p) => p.name === protocol)?.title ?? protocol;
    $("add-msg").textContent = `Added ${addr}: ${title} answered`;
  } else {
    if (connected) ask(r);
    $("add-msg").textContent = `Added ${addr}`;
  }
  $("add-addr").value = "";
});

$("fav-export").addEventListener("click", () => {
  const list = (keys) => [...keys].map((k) => { const i = k.indexOf("/"); return { protocol: k.slice(0, i), addr: k.slice(i + 1) }; });
  const data = { querylens: "favourites", version: 1, favourites: list(store.favourites), added: store.added };
  download(JSON.stringify(data, null, 2), "application/json", "querylens-favourites.json");
});

$("fav-import").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  try {
    const data = JSON.parse(await file.text());
    if (data.querylens !== "favourites") throw new Error("not a querylens favourites file");
    let n = 0;
    for (const s of data.favourites ?? []) {
      if (typeof s?.protocol !== "string" || typeof s?.addr !== "string") continue;
      store.favourites.add(keyOf(s.protocol, s.addr));
      const r = addRow(s.protocol, s.addr, "favourite");
      if (connected) ask(r);
      n++;
    }
    for (const s of data.added ?? []) {
      if (typeof s?.protocol !== "string" || typeof s?.addr !== "string") continue;
      if (!store.added.some((x) => x.protocol === s.protocol && x.addr === s.addr)) store.added.push({ protocol: s.protocol, addr: s.addr });
      const r = addRow(s.protocol, s.addr, "added");
      if (connected) ask(r);
    }
    saveStore();
    $("fav-msg").textContent = `Imported ${n} favourite${n === 1 ? "" : "s"}`;
  } catch (err) {
    $("fav-msg").textContent = `Import failed: ${err.message}`;
  }
  e.target.value = "";
});

// A hook for tests and for measuring in devtools: inject synthetic rows,
// read the view, set the sort. Not used by the page itself. inject, sort
// and rebuild resolve once the new order is drawn.
globalThis.querylensBrowse = {
  inject(list) {
    for (const x of list) {
      const r = addRow(x.protocol ?? "zandronum", x.addr, "injected");
      Object.assign(r, { state: State.online, detail: "", bots: 0, max: 0, ping: null, country: "", password: false, map: "", mode: "", name: "" }, x);
      r.hay = [r.name, r.map, r.mode, r.addr].join("\n").toLowerCase();
      addMode(r.mode);
      changed(r);
    }
    return rebuild();
  },
  view: () => Array.from(order, (i) => rows[i]).map((r) => ({
    key: r.key, name: r.name, players: r.players, ping: r.ping, state: r.state, detail: r.detail, protocol: r.protocol,
    bots: r.bots, anticheat: r.anticheat, os: r.os, keywords: r.keywords, master: r.master,
  })),
  sort(key, dir) { sort = { key, dir }; return rebuild(); },
  rebuild,
  rendered: () => tbody.querySelectorAll("tr.row:not([hidden])").length,
  /** whenDrawn resolves once the order for every change made so far is drawn. */
  whenDrawn: () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
    if (dirty) rebuild().then(resolve);
    else if (shownSeq >= seq) resolve(undefined);
    else orderWaiters.push({ seq, resolve });
  }, 0))),
  /**
   * whenSettled resolves once the order for every change made so far is
   * drawn in the whole window: the rows in view and those out of sight.
   */
  whenSettled: () => globalThis.querylensBrowse.whenDrawn().then(() => new Promise((resolve) => {
    if (restQueued) restWaiters.push(resolve);
    else resolve(undefined);
  })),
  /** the page's counters: rows known, asked, answered, asks out, rows shown, and answers held while typing */
  counts: () => ({ known: known(), asked, answered, outstanding, shown: order.length, held: held.length }),
  /** the shared memory's last order written, as keys (null where the page shares none) */
  sharedOrder: () => {
    if (!shared) return null;
    const h = shared.hdr;
    return { seq: Atomics.load(h, HEADER.done), keys: Array.from(shared.ord.subarray(0, h[HEADER.length]), (i) => rows[i].key) };
  },
  /** the rows drawn so far: refilled with another server, moved, and put in the body; the orders read from shared memory, and those view.js found among a recent search's rows */
  draws: () => ({ ...drawStats }),
  /** the times of query seq's order (orderTimes), or null */
  orderTimes: (/** @type {number} */ n) => orderTimes.get(n) ?? null,
  /** the last query sent to view.js */
  seq: () => seq,
  /** the worker's counters (asked, done, replies) and the batches received */
  stats: () => ({ ...relay?.stats, batches: relay?.batches ?? 0, times: relay?.times ?? {} }),
};

// ---- start ----

async function start() {
  for (const s of cfg.servers ?? []) addRow(s.protocol, s.addr, "config", s.options ?? null);
  for (const s of store.added) addRow(s.protocol, s.addr, "added");
  for (const k of store.favourites) {
    const i = k.indexOf("/");
    if (i > 0) addRow(k.slice(0, i), k.slice(i + 1), "favourite");
  }
  // The lists the server keeps load while the decoder starts.
  for (const m of masters) if (m.spec.kept) keptAt.set(m, Date.now()), loadKept(m);
  relay = DecodeWorker.shared();
  showRelay(relay);
  const ready = relay.start(cfg.relay, results);
  // Ask at once: the worker keeps the asks until its relay connection and
  // decoder are ready, and runs them then without a round trip here.
  connected = true;
  $("progress-text").textContent = "Asking the masters…";
  // The configured, added and favourite servers and the masters the page
  // asks are what boot.js had the worker ask already: asked here in the
  // same task, so that their rows wait for the answers the worker holds.
  for (const m of masters) if (!m.spec.kept) loadMaster(m);
  const now = Date.now();
  for (const r of rows) if (!r.master) ask(r, now);
  drawProgress();
  try {
    await ready;
  } catch (err) {
    connected = false;
    outstanding = 0;
    for (const r of rows) {
      r.queued = false;
      if (r.state === PageState.querying) r.state = PageState.pending, changed(r);
    }
    showFatal(document.querySelector(".browse"), err);
    $("progress-text").textContent = "Not connected";
    globalThis.querylensBrowse.ready = true;
    return;
  }
  globalThis.querylensBrowse.ready = true;
}

start();
setInterval(() => {
  // Keep "asked N s ago" style hints honest in titles without re-rendering rows.
  const r = rowAt(active);
  if (r?.lastAsked) wrap.title = `${r.addr}: asked ${ago(Date.now() - r.lastAsked)} ago`;
}, 5000);
