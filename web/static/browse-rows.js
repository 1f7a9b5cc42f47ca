// @ts-check
// The server browser's rows: every server the page knows, in the order
// first seen, filled from the decoder's compact rows (worker.js) or from a
// kept master's list, and marked changed for the sort worker (view.js).
import { State, PageState, Row } from "./model.js";
import { DecodeWorker } from "./live.js";
import { fills, EXTRA } from "./browse-config.js";
import { keyOf } from "./browse-store.js";
import { invalidate, invalidateSoon } from "./browse-order.js";

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

/** @type {Row[]} every server, in the order first seen; a row's index is its i */
export const rows = [];
/** @type {Map<string, Row>} */
export const byKey = new Map();
let goneCount = 0;

/**
 * addrKey sorts addresses in natural order with a plain string comparison:
 * every number is zero-padded to 5 digits ("127.0.0.2:10666" before
 * "127.0.0.10:10666"), computed once per row instead of in every compare.
 * @param {string} addr
 */
function addrKey(addr) {
  return addr.toLowerCase().replace(/\d+/g, (d) => d.padStart(5, "0"));
}

/**
 * addRow returns the row of protocol/addr, adding it when new; a row a
 * master listed says which (master: its label). url is its status page's
 * path when the caller has it (the server spelt it: the page's
 * configuration, a kept list's status; or the decoding worker, with a
 * master's list); a row without one has the worker find it (link).
 * @param {string} protocol @param {string} addr @param {string} source
 * @param {Record<string, string>|null} [options] @param {string} [master] @param {string} [url]
 */
export function addRow(protocol, addr, source, options = null, master = "", url = undefined) {
  const key = keyOf(protocol, addr);
  let r = byKey.get(key);
  if (r) {
    if (!r.options && options) {
      r.options = options;
      r.url = url;
      if (!url) link(r);
    } else if (url && !r.url) {
      r.url = url; // its link was still to come from the worker
    }
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
    addrKey: addrKey(addr), lastAsked: 0, backoff: 1, received: null, x: null, url,
  };
  rows.push(r);
  byKey.set(key, r);
  if (!url) link(r);
  changed(r);
  return r;
}

/**
 * link has the decoding worker find r's status page's path, as the server
 * spells it (server.Ref's Path: package server/ident, in the browser
 * module); linked sets it when it comes, before r's answer.
 * @param {Row} r
 */
function link(r) {
  DecodeWorker.shared().link({ key: r.key, protocol: r.protocol, addr: r.addr, options: r.options });
}

/**
 * linked gives the rows the worker found status pages for (link) their
 * path, and returns those that had none (to be drawn again).
 * @param {Record<string, string>} paths by key
 * @returns {Row[]}
 */
export function linked(paths) {
  const got = [];
  for (const k in paths) {
    const r = byKey.get(k);
    // One that has its path already has it from the server (a kept
    // list's with its options), which is newer.
    if (r && !r.url) (r.url = paths[k]), got.push(r);
  }
  return got;
}

/** drop takes r out of the table (a master's list no longer holds it); addRow brings it back. @param {Row} r */
export function drop(r) {
  r.gone = true;
  goneCount++;
  r.want = false;
  changed(r);
}

/** known counts the rows in the table (not the ones a master dropped). */
export function known() {
  return rows.length - goneCount;
}

/**
 * The rows changed since view.js last heard of them; a row's full says a
 * field other than its state and ping changed (sendRows sends the others'
 * state and ping only).
 * @type {Set<Row>}
 */
export const changedRows = new Set();
/**
 * changed marks r for view.js and schedules a new order: at the next frame,
 * or, for the answers that stream in while the servers are asked (soon),
 * at most every REBUILD_MS, so that a big list spends the page's time
 * drawing, not re-sending rows to be sorted. full false says only r's
 * state and ping changed (an answer without a row: most servers of a big
 * list time out).
 * @param {Row} r
 */
export function changed(r, soon = false, full = true) {
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
export function apply(r, res) {
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
 * fromSummary fills a row from a master list's entry (server.Summary, or
 * the page's shorter form of it, browse.KeptServer, whose zero counts are
 * left out), the state the server last knew: shown until the page's own
 * ask answers.
 * @param {Row} r
 * @param {any} s
 */
export function fromSummary(r, s) {
  if (r.lastAsked) return; // the page's own answer is newer
  const known = Object.values(State).includes(s.state);
  r.state = known ? s.state : PageState.pending;
  r.detail = s.detail ?? "";
  r.name = s.name ?? "";
  r.map = s.map ?? "";
  r.mode = s.game ?? "";
  r.players = known ? s.players ?? 0 : -1;
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

/** The game modes the rows have shown, for the filter's list (dirty: one came since it was drawn). */
export const modes = { all: new Set(), dirty: false };
/** @param {string} mode */
export function addMode(mode) {
  if (mode && !modes.all.has(mode)) {
    modes.all.add(mode);
    modes.dirty = true;
  }
}
