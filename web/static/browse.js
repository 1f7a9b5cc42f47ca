// @ts-check
// The server browser: loads the masters' lists and every server through
// the relay, decodes in the page, and shows one table that stays smooth with
// thousands of rows: rows live in a JS array and only the rows in view are in
// the DOM (a virtualised body with spacer rows above and below).
//
// The relay connection and the decoder run in a worker (worker.js); this
// thread sends it the servers to ask and gets back, at most once per frame,
// a batch of compact rows the decoder made (codecs.AppendSummaryJSON), so it never
// walks a decoded message.
import { $, config, esc, h, showRelay, showFatal, markFirstDecode, ago, hostPort, replyTimeout, download } from "./ql.js";
import { DecodeWorker } from "./live.js";
import { State, PageState, StateWord, Row } from "./model.js";

const cfg = config();
const wrap = $("table-wrap");
const tbody = $("rows");
const table = $("servers");

// Column labels: the title, or the name in capitals when the title is long ("OGP").
/** The row fields each protocol fills (the protocol table's "row"); a row leaves the others blank. */
const fills = Object.fromEntries((cfg.protocols ?? []).map((p) => [p.name, new Set(p.row ?? Object.keys(Row))]));
const titles = Object.fromEntries((cfg.protocols ?? []).map((p) => [p.name, p.title.length > 13 ? p.name.toUpperCase() : p.title]));
const LOCK = `<svg class="icon" viewBox="0 0 12 12" width="10" height="10" aria-hidden="true"><rect x="2" y="5" width="8" height="6" rx="1" fill="currentColor"/><path d="M4 5V3.5a2 2 0 0 1 4 0V5" fill="none" stroke="currentColor" stroke-width="1.3"/></svg>`;
const ROW_H = 30; // px; matches --row-h in app.css
const OVERSCAN = 12;
const ZANDRONUM_MIN_MS = 10_000; // a Zandronum server answers one IP once per 10 s
const STORE = "querylens.browse.v1";

/** @type {Row[]} every server, in the order first seen */
const rows = [];
const byKey = new Map();
let view = []; // rows after filtering and sorting
let active = -1; // index in view of the keyboard cursor
let sort = { key: "players", dir: -1 };
let asked = 0;
let answered = 0;
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

/** byAddr compares rows by addrKey. */
const byAddr = (a, b) => (a.addrKey < b.addrKey ? -1 : a.addrKey > b.addrKey ? 1 : 0);

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
 * @typedef {{key: string, protocol: string, addr: string, state: string,
 *   detail: string, name: string, players: number, bots: number, max: number,
 *   map: string, mode: string, ping: number|null, country: string,
 *   password: boolean, hay: string, lastAsked: number, backoff: number,
 *   source: string, received: string[]|null, queued?: boolean, addrKey: string,
 *   options: Record<string, string>|null}} Row
 */
function addRow(protocol, addr, source, options = null) {
  const key = keyOf(protocol, addr);
  let r = byKey.get(key);
  if (r) {
    r.options ??= options;
    return r;
  }
  r = {
    key, protocol, addr, source, options, state: PageState.pending, detail: "", name: "", players: -1, bots: 0, max: 0,
    map: "", mode: "", ping: null, country: "", password: false, anticheat: false, os: "", keywords: "", hay: addr.toLowerCase(), addrKey: addrKey(addr),
    lastAsked: 0, backoff: 1, received: null,
  };
  rows.push(r);
  byKey.set(key, r);
  invalidate();
  return r;
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
    if (r.mode && !modes.has(r.mode)) {
      modes.add(r.mode);
      modesDirty = true;
    }
  }
  if (res.state === State.online) r.backoff = 1;
  else if (res.state === State.rateLimited || res.state === State.relayLimited) r.backoff = Math.min(r.backoff * 2, 16);
}

// ---- querying ----

function minInterval(r) {
  const base = Math.max(relay?.cacheTTL ?? 0, r.protocol === "zandronum" ? ZANDRONUM_MIN_MS : 0);
  return base * r.backoff;
}

/**
 * ask sends r to the worker unless it was asked too recently for its
 * protocol. Callers update the progress bar once after their asks.
 */
function ask(r, now = Date.now()) {
  if (r.queued) return true;
  if (r.lastAsked && now - r.lastAsked < minInterval(r)) return false;
  r.queued = true;
  r.lastAsked = now;
  if (r.state === PageState.pending) r.state = PageState.querying;
  asked++;
  relay.ask({ key: r.key, protocol: r.protocol, target: r.addr, options: r.options, timeoutMs: replyTimeout(relay, 1500) });
  return true;
}

/** results applies a batch of finished conversations from the worker. */
function results(list) {
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
    r.queued = false;
    answered++;
    apply(r, res);
  }
  markFirstDecode();
  // The last answer of a refresh is drawn at once; the others at most
  // every REBUILD_MS.
  if (answered === asked) invalidate();
  else invalidateSoon();
  progress();
}

function loadMaster(m, now = Date.now()) {
  const addr = m.addr;
  const key = `master:${addr}`;
  const last = masterAsked.get(key) ?? 0;
  if (now - last < ZANDRONUM_MIN_MS) return;
  masterAsked.set(key, now);
  if (m.kept) {
    loadKept(m);
    return;
  }
  relay.ask({ key, protocol: "zandronum", target: addr, options: { master: "true" }, timeoutMs: replyTimeout(relay, 2000) });
}

/**
 * loadKept reads a list the server keeps (Steam's, Quake III's masters:
 * GET /api/v1/masters/…, server.MasterList) and asks its servers; while
 * the server is still paging through the master, it reads it again.
 */
async function loadKept(m) {
  let list;
  try {
    const res = await fetch(`/api/v1/masters/${m.protocol}/${m.addr}`);
    list = await res.json();
    if (!res.ok) throw new Error(list.error ?? res.statusText);
  } catch (e) {
    masterState.set(m.addr, { state: "unavailable", detail: String(e), count: 0 });
    progress();
    return;
  }
  const servers = (list.servers ?? []).filter((s) => s.state !== State.refused);
  masterState.set(m.addr, { state: servers.length || list.complete ? State.online : "unavailable", detail: list.error ?? "", count: servers.length });
  const added = servers.filter((s) => !byKey.has(keyOf(m.protocol, s.address))).map((s) => addRow(m.protocol, s.address, "master"));
  askSoon(added);
  progress();
  if (!list.complete && !list.error) setTimeout(() => loadKept(m), KEPT_POLL_MS);
}
const KEPT_POLL_MS = 3000;

/**
 * master adds the servers of a master's list, shows them, and asks them
 * once the list has been drawn: a thousand conversations starting at once
 * keep the worker and the relay busy, and on a machine with few cores the
 * page's next frame would wait for them. The asks go out after the next
 * paint (rAF, then a task), or after MASTER_ASK_MS when no frame comes (a
 * hidden tab draws none).
 */
function master(res) {
  const addr = res.key.slice("master:".length);
  const list = res.servers ?? [];
  masterState.set(addr, { state: res.state, detail: res.detail, count: list.length });
  askSoon(list.map((s) => addRow("zandronum", s, "master")));
}

/** askSoon asks the rows a master listed once the list is drawn. */
function askSoon(added) {
  if (!added.length) return;
  rebuild();
  let sent = false;
  const askAll = () => {
    if (sent) return;
    sent = true;
    const now = Date.now();
    for (const r of added) ask(r, now);
    progress();
  };
  requestAnimationFrame(() => setTimeout(askAll, 0));
  setTimeout(askAll, MASTER_ASK_MS);
}
const MASTER_ASK_MS = 100;
const masterAsked = new Map();
const masterState = new Map();

function refreshAll() {
  const now = Date.now();
  let skipped = 0;
  for (const m of cfg.masters ?? []) loadMaster(m, now);
  for (const r of rows) if (!ask(r, now)) skipped++;
  progress();
  if (skipped) {
    $("progress-text").textContent = `${skipped} server${skipped > 1 ? "s were" : " was"} asked moments ago and will be refreshed when the server allows it`;
  }
}

// ---- view: filter, sort, render ----

const modes = new Set();
let modesDirty = false;
let dirty = false;

/** invalidate schedules one re-filter, re-sort and render per frame. */
function invalidate() {
  if (dirty) return;
  dirty = true;
  requestAnimationFrame(() => {
    dirty = false;
    rebuild();
  });
}

/**
 * invalidateSoon is invalidate for replies arriving during a refresh: the
 * table is rebuilt at most every REBUILD_MS, not on every frame, so a big
 * list spends its time decoding replies rather than re-sorting the table.
 * The first reply still shows at once.
 */
const REBUILD_MS = 200;
let soonTimer = 0;
let lastRebuild = 0;
function invalidateSoon() {
  if (dirty || soonTimer) return;
  const wait = lastRebuild + REBUILD_MS - performance.now();
  if (wait <= 0) return invalidate();
  soonTimer = setTimeout(() => {
    soonTimer = 0;
    invalidate();
  }, wait);
}

function filters() {
  const f = $("filters");
  return {
    q: f.q.value.trim().toLowerCase(),
    protocol: f.protocol.value,
    mode: f.mode.value,
    password: f.password.value,
    empty: f.empty.checked,
    full: f.full.checked,
    fav: f.fav.checked,
    online: f.online.checked,
    ping: f.ping.value === "" ? Infinity : Number(f.ping.value),
  };
}

function matches(r, f) {
  if (f.protocol && r.protocol !== f.protocol) return false;
  if (f.fav && !store.favourites.has(r.key)) return false;
  if (f.online && r.state !== State.online) return false;
  if (f.mode && r.mode !== f.mode) return false;
  if (f.password === "open" && r.password) return false;
  if (f.password === "locked" && !r.password) return false;
  if (f.empty && r.players - r.bots <= 0) return false;
  if (f.full && r.max > 0 && r.players >= r.max) return false;
  if (f.ping !== Infinity && (r.ping == null || r.ping > f.ping)) return false;
  if (f.q && !r.hay.includes(f.q)) return false;
  return true;
}

const stateRank = {
  [State.online]: 0, [State.rateLimited]: 1, [State.relayLimited]: 1, [State.malformed]: 2,
  [PageState.querying]: 3, [PageState.pending]: 3, [State.offline]: 4,
};
/** @type {Intl.Collator|null} */
let collator = null;
/**
 * compareText compares names, maps and modes as a reader expects. The
 * collator is made on first use: making one takes 20–40 ms of this thread on
 * a loaded machine, and the default sort (players) needs none, so a page
 * that opens sorted by players makes it after its start, if at all.
 * @param {string} a
 * @param {string} b
 */
const compareText = (a, b) => (collator ??= new Intl.Collator(undefined, { sensitivity: "base", numeric: true })).compare(a, b);
const sorters = {
  fav: (a, b) => (store.favourites.has(b.key) ? 1 : 0) - (store.favourites.has(a.key) ? 1 : 0),
  protocol: (a, b) => compareText(a.protocol, b.protocol),
  name: (a, b) => compareText(a.name || "\uffff", b.name || "\uffff"),
  players: (a, b) => a.players - b.players,
  map: (a, b) => compareText(a.map, b.map),
  mode: (a, b) => compareText(a.mode, b.mode),
  ping: (a, b) => (a.ping ?? 1e9) - (b.ping ?? 1e9),
  addr: byAddr,
  country: (a, b) => compareText(a.country, b.country),
  flags: (a, b) => Number(a.password) - Number(b.password),
};

let onlineCount = 0;

function rebuild() {
  lastRebuild = performance.now();
  onlineCount = rows.reduce((n, r) => n + (r.state === State.online ? 1 : 0), 0);
  const f = filters();
  const cmp = sorters[sort.key] ?? sorters.players;
  const activeKey = view[active]?.key;
  view = rows.filter((r) => matches(r, f));
  // Servers that did not answer sink below the ones that did, whichever
  // way the column is sorted; ties keep a stable, readable order.
  view.sort((a, b) => (stateRank[a.state] ?? 5) - (stateRank[b.state] ?? 5) || sort.dir * cmp(a, b) || byAddr(a, b));
  if (activeKey) active = view.findIndex((r) => r.key === activeKey);
  if (modesDirty) fillModes();
  for (const th of table.tHead.rows[0].cells) {
    th.setAttribute("aria-sort", th.dataset.sort === sort.key ? (sort.dir > 0 ? "ascending" : "descending") : "none");
  }
  table.setAttribute("aria-rowcount", String(view.length + 1));
  $("empty-state").hidden = view.length > 0 || rows.length === 0;
  $("counts").textContent = `${view.length} shown of ${rows.length}`;
  renderWindow();
  progress();
}

function fillModes() {
  modesDirty = false;
  const sel = $("f-mode");
  const cur = sel.value;
  sel.replaceChildren(h("option", { value: "" }, "All modes"), ...[...modes].sort(compareText).map((m) => h("option", { value: m }, m)));
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

function rowHTML(r, i) {
  const fav = store.favourites.has(r.key);
  const url = statusURL(r);
  const ok = r.state === State.online;
  const badge = ok ? "" : `<button type="button" class="state state-${r.state}" data-detail="${i}" title="${esc(r.detail || stateLabels[r.state])}" data-testid="row-state">${esc(stateLabels[r.state] ?? r.state)}</button> `;
  const name = `${badge}<a class="name" href="${esc(url)}" tabindex="-1">${esc(r.name || r.addr)}</a>`;
  const players = ok && r.players >= 0
    ? `${r.players - r.bots}${r.max ? "/" + r.max : ""}${r.bots ? `<span class="bots" title="${r.bots} bot${r.bots > 1 ? "s" : ""}">+${r.bots} bot${r.bots > 1 ? "s" : ""}</span>` : ""}`
    : "";
  const flags = (r.password ? `<span class="tag" title="Password required">${LOCK} password</span>` : "") + extraTags(r);
  return `<tr class="row${ok ? "" : " dim"}${i === active ? " active" : ""}" id="row-${i}" aria-rowindex="${i + 2}" data-i="${i}" data-key="${esc(r.key)}" data-state="${r.state}" data-testid="server-row">` +
    `<td><button type="button" class="star" aria-pressed="${fav}" aria-label="Favourite" data-fav="${i}">${fav ? "★" : "☆"}</button></td>` +
    `<td title="${esc(r.protocol)}">${esc(titles[r.protocol] ?? r.protocol)}</td>` +
    `<td data-testid="cell-name">${name}</td>` +
    `<td class="num" data-testid="cell-players">${players}</td>` +
    `<td>${esc(r.map)}</td><td>${esc(r.mode)}</td>` +
    `<td class="num" data-testid="cell-ping">${r.ping == null ? "" : r.ping < 1 ? "&lt;1 ms" : Math.round(r.ping) + " ms"}</td>` +
    `<td class="mono">${esc(r.addr)}</td><td>${esc(r.country)}</td><td>${flags}</td></tr>`;
}

let lastWindow = "";

/** renderWindow puts only the rows in view (plus some overscan) in the DOM. */
function renderWindow(force = true) {
  // From the last scroll and resize, not read here: reading layout after
  // the rows changed would force a layout of the whole page on every
  // rebuild.
  const top = Math.max(0, viewport.top - viewport.head);
  const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const count = Math.ceil(viewport.height / ROW_H) + 2 * OVERSCAN;
  const last = Math.min(view.length, first + count);
  const sig = `${first}:${last}`;
  if (!force && sig === lastWindow) return;
  lastWindow = sig;
  let html = `<tr class="spacer" aria-hidden="true"><td colspan="10" style="height:${first * ROW_H}px"></td></tr>`;
  for (let i = first; i < last; i++) html += rowHTML(view[i], i);
  html += `<tr class="spacer" aria-hidden="true"><td colspan="10" style="height:${(view.length - last) * ROW_H}px"></td></tr>`;
  tbody.innerHTML = html;
  if (active >= first && active < last) wrap.setAttribute("aria-activedescendant", `row-${active}`);
  else wrap.removeAttribute("aria-activedescendant");
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
  if (scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => {
    scrollQueued = false;
    renderWindow(false);
  });
}, { passive: true });
new ResizeObserver(() => {
  measure();
  renderWindow(false);
}).observe(wrap);

function progress() {
  const bar = document.querySelector(".progress [role=progressbar]");
  bar.setAttribute("aria-valuemax", String(asked));
  bar.setAttribute("aria-valuenow", String(answered));
  $("bar").style.transform = `scaleX(${asked ? answered / asked : 0})`;
  const online = onlineCount; // counted by rebuild, which follows every reply
  const masters = [...masterState.entries()].map(([a, s]) => s.state === State.online ? `${a}: ${s.count} servers` : `${a}: ${s.state}`).join(", ");
  if (!connected) return;
  $("progress-text").textContent = asked
    ? `${answered} / ${asked} answered · ${online} online${masters ? " · master " + masters : ""}`
    : masters ? `master ${masters}` : "Asking the masters…";
}

// ---- interaction ----

$("filters").addEventListener("input", () => invalidate());
$("filters").addEventListener("submit", (e) => e.preventDefault());

table.tHead.addEventListener("click", (e) => {
  const th = e.target.closest("th[data-sort]");
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
  invalidate();
}

tbody.addEventListener("click", (e) => {
  const fav = e.target.closest("[data-fav]");
  if (fav) {
    e.preventDefault();
    toggleFavourite(view[Number(fav.dataset.fav)]);
    return;
  }
  const st = e.target.closest("[data-detail]");
  if (st) {
    e.preventDefault();
    showDetail(view[Number(st.dataset.detail)], st);
    return;
  }
  const tr = e.target.closest("tr.row");
  if (tr) setActive(Number(tr.dataset.i), false);
});

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

function setActive(i, scroll = true) {
  active = Math.max(0, Math.min(view.length - 1, i));
  if (scroll) {
    const head = table.tHead.offsetHeight;
    const y = active * ROW_H;
    if (y < wrap.scrollTop) wrap.scrollTop = y;
    else if (y + ROW_H + head > wrap.scrollTop + wrap.clientHeight) wrap.scrollTop = y + ROW_H + head - wrap.clientHeight;
    measure();
  }
  renderWindow();
}

wrap.tabIndex = 0;
wrap.setAttribute("role", "region");
wrap.setAttribute("aria-label", "Server list; arrow keys move, Enter opens");
wrap.addEventListener("keydown", (e) => {
  const page = Math.max(1, Math.floor(wrap.clientHeight / ROW_H) - 1);
  const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
  if (e.target.closest("thead")) return;
  if (e.key in moves) setActive((active < 0 ? -1 : active) + moves[e.key]);
  else if (e.key === "Home") setActive(0);
  else if (e.key === "End") setActive(view.length - 1);
  else if (e.key === "Enter" && view[active]) location.href = statusURL(view[active]);
  else if (e.key === "f" && view[active]) toggleFavourite(view[active]);
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

// Auto-refresh: every few seconds, re-ask the rows whose interval passed;
// ask() itself refuses servers asked within their protocol's limit.
setInterval(() => {
  const every = Number($("auto").value) * 1000;
  if (!every || !connected || document.hidden) return;
  const now = Date.now();
  for (const m of cfg.masters ?? []) if (now - (masterAsked.get(`master:${m.addr}`) ?? 0) >= every) loadMaster(m, now);
  for (const r of rows) if (now - r.lastAsked >= Math.max(every, minInterval(r))) ask(r, now);
  progress();
}, 2000);

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
    rebuild(); // at once: the message below says the row is there
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
// read the view, set the sort. Not used by the page itself.
globalThis.querylensBrowse = {
  inject(list) {
    for (const x of list) {
      const r = addRow(x.protocol ?? "zandronum", x.addr, "injected");
      Object.assign(r, { state: State.online, detail: "", bots: 0, max: 0, ping: null, country: "", password: false, map: "", mode: "", name: "" }, x);
      r.hay = [r.name, r.map, r.mode, r.addr].join("\n").toLowerCase();
      if (r.mode) modes.add(r.mode), (modesDirty = true);
    }
    rebuild();
  },
  view: () => view.map((r) => ({
    key: r.key, name: r.name, players: r.players, ping: r.ping, state: r.state, detail: r.detail, protocol: r.protocol,
    bots: r.bots, anticheat: r.anticheat, os: r.os, keywords: r.keywords,
  })),
  sort(key, dir) { sort = { key, dir }; rebuild(); },
  rebuild,
  rendered: () => tbody.querySelectorAll("tr.row").length,
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
  relay = DecodeWorker.shared();
  showRelay(relay);
  const ready = relay.start(cfg.relay, results);
  // Ask at once: the worker keeps the asks until its relay connection and
  // decoder are ready, and runs them then without a round trip here.
  connected = true;
  $("progress-text").textContent = "Asking the masters…";
  refreshAll();
  try {
    await ready;
  } catch (err) {
    connected = false;
    for (const r of rows) {
      r.queued = false;
      if (r.state === PageState.querying) r.state = PageState.pending;
    }
    invalidate();
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
  const r = view[active];
  if (r?.lastAsked) wrap.title = `${r.addr}: asked ${ago(Date.now() - r.lastAsked)} ago`;
}, 5000);
