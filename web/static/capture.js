// @ts-check
// The inspector's view of an opened capture file: the worker
// (capture-worker.js) reads it and sends rows; this keeps them in pages
// of typed memory and draws only the rows in sight (a list of a million
// datagrams holds a few dozen row elements), with per-conversation
// "decode as" and the reading of the payloads a selection needs.
import { h } from "./ql.js";

/** Row layout: wasm/internal/capture's package comment. */
const ROW = 48;
const PAGE_ROWS = 1 << 16;
/** The row height in CSS px (app.css .vrow), and the rows drawn beyond the window. */
export const ROW_PX = 20;
const OVERSCAN = 10;
/** Browsers cap an element's height (Chromium near 33.5 million px); past this the scroll is scaled. */
const MAX_PX = 15_000_000;
const UNKNOWN = 255;
/**
 * Row flags (wasm/internal/capture): the payload kept by the reader
 * (Payload(row)), not at a file offset; lost (the reader's limit); a turn
 * of a TCP stream (its bytes kept by the reader, conv its stream's
 * conversation, query the request turn it answers); a turn the reader
 * cut at its limit; a turn next to bytes the capture lacks.
 */
export const FLAG_STORED = 1 << 0;
export const FLAG_LOST = 1 << 1;
export const FLAG_TCP = 1 << 2;
export const FLAG_CUT = 1 << 3;
export const FLAG_GAP = 1 << 4;
/** ROW_FLAGS is the flags byte's offset in a row. */
const ROW_FLAGS = 42;

/**
 * @typedef {{row: number, frame: number, micros: number, offset: number, src: number, dst: number,
 *   length: number, query: number, group: number, protocol: number, kind: number, flags: number, conv: number}} Row
 */

export class Capture {
  /**
   * @param {{list: HTMLElement, rows: HTMLElement, spacer: HTMLElement, onSelect: (r: Row) => void}} el
   */
  constructor(el) {
    this.el = el;
    /** @type {Uint8Array[]} */
    this.pages = [];
    this.n = 0;
    /** The rows that are TCP turns (the rest are UDP datagrams). */
    this.tcp = 0;
    /** @type {string[]} */
    this.endpoints = [];
    /** @type {string[]} */
    this.kinds = [];
    /** @type {string[]} */
    this.protocols = [];
    /** "decode as": protocol name by conversation id. @type {Map<number, string>} */
    this.as = new Map();
    this.selected = -1;
    this.t0 = 0;
    this.drawn = "";
    this.frame = 0;
    el.list.addEventListener("scroll", () => this.schedule());
    el.rows.addEventListener("click", (e) => {
      const r = /** @type {HTMLElement} */ (e.target).closest("[data-row]");
      if (r) this.select(Number(/** @type {HTMLElement} */ (r).dataset.row));
    });
    el.list.addEventListener("keydown", (e) => {
      const d = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20, Home: -Infinity, End: Infinity }[e.key];
      if (d == null || !this.n) return;
      e.preventDefault();
      this.select(Math.max(0, Math.min(this.n - 1, (this.selected < 0 ? 0 : this.selected) + d)));
    });
  }

  /** reset forgets the rows (a new file). @param {string[]} protocols */
  reset(protocols) {
    this.pages = [];
    this.n = 0;
    this.tcp = 0;
    this.endpoints = [];
    this.kinds = [];
    this.protocols = protocols;
    this.as.clear();
    this.selected = -1;
    this.t0 = 0;
    this.drawn = "";
    this.schedule();
  }

  /**
   * add appends rows the worker sent.
   * @param {ArrayBuffer} buf
   * @param {number} n
   * @param {string[]} endpoints
   * @param {string[]} kinds
   */
  add(buf, n, endpoints, kinds) {
    // A loop, not push(...list): a batch of a capture with many hosts can
    // hold more endpoints than a call takes arguments.
    for (const e of endpoints) this.endpoints.push(e);
    for (const k of kinds) this.kinds.push(k);
    const src = new Uint8Array(buf);
    for (let i = 0; i < n; i++) if (src[i * ROW + ROW_FLAGS] & FLAG_TCP) this.tcp++;
    let at = 0;
    while (at < n) {
      const p = Math.floor(this.n / PAGE_ROWS);
      const i = this.n % PAGE_ROWS;
      this.pages[p] ??= new Uint8Array(PAGE_ROWS * ROW);
      const k = Math.min(n - at, PAGE_ROWS - i);
      this.pages[p].set(src.subarray(at * ROW, (at + k) * ROW), i * ROW);
      at += k;
      this.n += k;
    }
    if (n && !this.t0) this.t0 = this.get(0).micros;
    this.schedule();
  }

  /** get reads row i. @param {number} i @returns {Row} */
  get(i) {
    const page = this.pages[Math.floor(i / PAGE_ROWS)];
    const v = new DataView(page.buffer, (i % PAGE_ROWS) * ROW, ROW);
    return {
      row: i, micros: v.getFloat64(0, true), offset: v.getFloat64(8, true), frame: v.getUint32(16, true),
      src: v.getUint32(20, true), dst: v.getUint32(24, true), length: v.getUint32(28, true), query: v.getInt32(32, true),
      group: v.getUint32(36, true), protocol: v.getUint8(40), kind: v.getUint8(41), flags: v.getUint8(42), conv: v.getUint32(44, true),
    };
  }

  /** isTCP says row r is a turn of a TCP stream. @param {Row} r */
  isTCP(r) {
    return (r.flags & FLAG_TCP) !== 0;
  }

  /**
   * lost says what a TCP turn lacks: "cut" (longer than the reader
   * keeps), "gap" (next to bytes the capture lacks), or "".
   * @param {Row} r
   */
  lost(r) {
    return r.flags & FLAG_CUT ? "cut" : r.flags & FLAG_GAP ? "gap" : "";
  }

  /** protocolOf is the row's protocol name: its conversation's "decode as", else the reader's guess. @param {Row} r */
  protocolOf(r) {
    return this.as.get(r.conv) ?? (r.protocol === UNKNOWN ? null : this.protocols[r.protocol] ?? null);
  }

  /** kindOf is the reader's kind, when the protocol is its own guess. @param {Row} r */
  kindOf(r) {
    if (this.as.has(r.conv)) return "";
    return this.readerKind(r);
  }

  /** readerKind is the kind the reader gave the row, whatever it is decoded as. @param {Row} r */
  readerKind(r) {
    return r.kind === UNKNOWN ? "?" : this.kinds[r.kind] ?? "?";
  }

  /** endpoint names an endpoint id. @param {number} id */
  endpoint(id) {
    return this.endpoints[id] ?? "?";
  }

  /**
   * decodeAs sets (or, with "", clears) the protocol of a conversation
   * (a pair of endpoints over UDP, a TCP stream).
   * @param {number} conv
   * @param {string} protocol
   */
  decodeAs(conv, protocol) {
    if (protocol) this.as.set(conv, protocol);
    else this.as.delete(conv);
    this.drawn = "";
    this.schedule();
  }

  /**
   * answer is the rows of the answer row r is part of (its group's
   * datagrams from the same sender, in order), looked for near r. A TCP
   * turn is its answer whole: the reader joined its segments.
   * @param {Row} r
   */
  answer(r) {
    if (r.flags & FLAG_TCP) return [r];
    const out = [];
    const lo = Math.max(0, r.row - 4096);
    const hi = Math.min(this.n, r.row + 4096);
    for (let i = lo; i < hi; i++) {
      const x = this.get(i);
      if (x.group === r.group && x.src === r.src && x.query === r.query) out.push(x);
    }
    return out;
  }

  /** select makes row i the selected one and tells the page. @param {number} i */
  select(i) {
    if (i < 0 || i >= this.n) return;
    this.selected = i;
    this.scrollTo(i);
    this.drawn = "";
    this.draw();
    this.el.onSelect(this.get(i));
  }

  /** scale maps row positions to scroll px when the list is taller than MAX_PX. */
  scale() {
    const total = this.n * ROW_PX;
    return total > MAX_PX ? MAX_PX / total : 1;
  }

  /** scrollTo brings row i into sight. @param {number} i */
  scrollTo(i) {
    const list = this.el.list;
    const y = i * ROW_PX * this.scale();
    const head = ROW_PX;
    if (y < list.scrollTop) list.scrollTop = y;
    else if (y + ROW_PX + head > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW_PX + head - list.clientHeight;
  }

  schedule() {
    this.frame ||= requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** draw puts the rows in sight (and OVERSCAN more each way) in the list. */
  draw() {
    const { list, rows, spacer } = this.el;
    const s = this.scale();
    spacer.style.height = `${Math.ceil(this.n * ROW_PX * s) + ROW_PX}px`;
    const first = Math.max(0, Math.floor(list.scrollTop / (ROW_PX * s)) - OVERSCAN);
    const count = Math.ceil(list.clientHeight / ROW_PX) + 2 * OVERSCAN;
    const last = Math.min(this.n, first + count);
    const key = `${first}:${last}:${this.selected}`;
    if (key === this.drawn) return;
    this.drawn = key;
    rows.style.transform = `translateY(${first * ROW_PX * s}px)`;
    const els = [];
    for (let i = first; i < last; i++) {
      const r = this.get(i);
      const proto = this.protocolOf(r);
      const kind = this.kindOf(r);
      const answers = r.query >= 0 ? `↩ #${this.get(r.query).frame}` : "";
      // A TCP turn says so with its stream (the list's conversation
      // number) and what the capture lost of it; the column is narrow, so
      // the cell's title says it all.
      let note = /** @type {any} */ (answers);
      let title = null;
      if (r.flags & FLAG_TCP) {
        const lost = this.lost(r);
        title = `TCP stream ${r.conv}: a turn, the bytes one side sent before the other answered${r.query >= 0 ? `; answers frame ${this.get(r.query).frame}` : ""}` +
          `${lost === "cut" ? "; longer than the reader keeps, the rest dropped" : lost === "gap" ? "; next to bytes the capture lacks" : ""}`;
        note = [h("span", { class: "tag", "data-testid": "capture-tcp" }, `TCP ${r.conv}`),
          lost ? h("span", { class: "tag synthetic", "data-testid": "capture-lost" }, `⚠ ${lost}`) : null,
          answers ? ` ${answers}` : null];
      }
      els.push(h("div", { class: `vrow${i === this.selected ? " on" : ""}${r.group % 2 ? " odd" : ""}`, role: "row", "data-row": String(i), "aria-selected": String(i === this.selected), "aria-rowindex": String(i + 2), "data-testid": "capture-row" },
        h("span", { class: "num" }, String(r.frame)),
        h("span", { class: "num" }, ((r.micros - this.t0) / 1e6).toFixed(6)),
        h("span", {}, this.endpoint(r.src)),
        h("span", {}, this.endpoint(r.dst)),
        h("span", { class: this.as.has(r.conv) ? "as" : "" }, proto ?? "?"),
        h("span", {}, kind),
        h("span", { class: "num" }, String(r.length)),
        h("span", { class: "muted", title }, note)));
    }
    rows.replaceChildren(...els);
    list.setAttribute("aria-rowcount", String(this.n + 1));
  }
}
