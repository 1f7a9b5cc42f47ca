// @ts-check
// The table's row elements (slots): each <tr> has its cells made once and
// is refilled with another server's fields as the table scrolls
// (browse-table.js places them). Each cell's text is one Text node made
// with the cell, whose data is rewritten when it changed: the node and its
// layout object stay, so a refill styles nothing and lays out only the
// text that changed. The attributes a refill writes are kept in attrs and
// written only when they changed.
import { esc } from "./ql.js";
import { State } from "./model.js";
import { protocolTitles, EXTRA, stateLabels, antiCheatName } from "./browse-config.js";
import { store } from "./browse-store.js";
import { rows } from "./browse-rows.js";
import { active, drawStats } from "./browse-table.js";

/** @typedef {import("./browse-rows.js").Row} Row */

const LOCK = `<svg class="icon" viewBox="0 0 12 12" width="10" height="10" aria-hidden="true"><rect x="2" y="5" width="8" height="6" rx="1" fill="currentColor"/><path d="M4 5V3.5a2 2 0 0 1 4 0V5" fill="none" stroke="currentColor" stroke-width="1.3"/></svg>`;

/**
 * @typedef {{tr: HTMLTableRowElement, star: HTMLButtonElement, proto: HTMLTableCellElement,
 *   badge: HTMLButtonElement, name: HTMLAnchorElement, flags: HTMLTableCellElement,
 *   master: HTMLTableCellElement, bots: HTMLSpanElement, row: number, y: number,
 *   t: {star: CellText, proto: CellText, badge: CellText, name: CellText, players: CellText, bots: CellText, map: CellText,
 *     mode: CellText, ping: CellText, addr: CellText, country: CellText, master: CellText, extra: CellText[]},
 *   attrs: Record<string, string|boolean>, flagsSig: string}} Slot
 */

/** The slot of each row element. @type {Map<Element, Slot>} */
export const slotOf = new Map();

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

/** makeSlot builds one row element with its cells. @returns {Slot} */
export function makeSlot() {
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
export function position(s, k) {
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
export function fill(s, r, k) {
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
  // The status page's path, as the server spells it (browse-rows.js
  // addRow); none until the decoding worker found it (a favourite's,
  // before the module is ready).
  attr(s, "href", s.name, "href", r.url ?? null);
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

/** untitled takes the tooltips away from slot s, set aside, if it has them. @param {Slot} s */
export function untitled(s) {
  if (s !== titled) return;
  untitle(s);
  titled = null;
}

/** pointAt gives the row element under the pointer or the focus its tooltips. @param {Event} e */
export function pointAt(e) {
  const tr = /** @type {Element} */ (e.target).closest?.("tr");
  const s = tr ? slotOf.get(tr) : undefined;
  if (!s || s === titled) return;
  if (titled) untitle(titled);
  titled = s;
  if (s.row >= 0 && !s.tr.hidden) titles(s, rows[s.row]);
}
