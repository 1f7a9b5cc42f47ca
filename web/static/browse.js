// @ts-check
// The server browser: loads the masters' lists (through the relay, or from
// the server for the masters it keeps) and every server through the relay,
// decodes in a worker, and shows one table that stays smooth with tens of
// thousands of rows. This module wires the page together and starts it;
// each part is a module of its own:
//
//   browse-config.js     what the page was told: the protocol table, limits
//   browse-store.js      what the browser's storage keeps (favourites, sort)
//   browse-rows.js       the rows, in the order first seen, and their fields
//   browse-hold.js       the typing and scroll holds of a big list
//   browse-asks.js       asking the servers through the decoding worker
//                        (worker.js, via live.js) and taking the answers
//   browse-masters.js    the masters' lists, and the refresh
//   browse-order.js      filtering and sorting in view.js, the orders drawn
//   browse-table.js      the virtual table: rows in view, keyboard cursor
//   browse-slots.js      the table's row elements, refilled as it scrolls
//   browse-progress.js   the status line and the progress bar
//   browse-detect.js     which protocol an added server speaks
//   browse-input.js      the filters, the sort, the rows' clicks and keys
//   browse-detail.js     a row's state in detail (the badge's popover)
//   browse-favourites.js favourites, servers added by hand, their export
//   browse-picker.js     the game picker of the Steam masters kept
//
// The modules from browse-rows.js to browse-detect.js call each other's
// functions, so their imports go in a circle: their top-level code uses
// nothing of another module of the circle (only ql.js, model.js,
// browse-config.js and browse-store.js, which import none of them), so
// that it runs in whatever order the circle is evaluated. The modules
// after it in the list import from it and run once it has; they are what
// a person uses once rows are shown, so the page imports them once it has
// started (`later`): the first rows wait on none of their requests.
import { $, showFatal, ago } from "./ql.js";
import { DecodeWorker } from "./live.js";
import { State } from "./model.js";
import { cfg } from "./browse-config.js";
import { store } from "./browse-store.js";
import { rows, addRow, changed, addMode, known } from "./browse-rows.js";
import { relay, connect, disconnect, ask, asked, answered, outstanding } from "./browse-asks.js";
import { hold } from "./browse-hold.js";
import { loadKeptLists, askMasters, autoRefresh } from "./browse-masters.js";
import { order, seq, rebuild, whenDrawn, sharedOrder, orderTimes, orderStats } from "./browse-order.js";
import { wrap, tbody, active, rowAt, drawStats, whenRest } from "./browse-table.js";
import { drawProgress } from "./browse-progress.js";

// Auto-refresh: every few seconds, re-ask the rows whose interval passed.
setInterval(autoRefresh, 2000);

// A hook for tests and for measuring in devtools: inject synthetic rows,
// read the view, set the sort. Not used by the page itself. inject, sort
// and rebuild resolve once the new order is drawn (inject's once its rows
// link to their status pages too).
globalThis.querylensBrowse = {
  inject(list) {
    for (const x of list) {
      const r = addRow(x.protocol ?? cfg.defaultProtocol, x.addr, "injected");
      Object.assign(r, { state: State.online, detail: "", bots: 0, max: 0, ping: null, country: "", password: false, map: "", mode: "", name: "" }, x);
      r.hay = [r.name, r.map, r.mode, r.addr].join("\n").toLowerCase();
      addMode(r.mode);
      changed(r);
    }
    return DecodeWorker.shared().linked().then(() => rebuild());
  },
  view: () => Array.from(order, (i) => rows[i]).map((r) => ({
    key: r.key, name: r.name, players: r.players, ping: r.ping, state: r.state, detail: r.detail, protocol: r.protocol,
    bots: r.bots, anticheat: r.anticheat, os: r.os, keywords: r.keywords, master: r.master,
  })),
  sort(key, dir) { store.sort = { key, dir }; return rebuild(); },
  rebuild,
  rendered: () => tbody.querySelectorAll("tr.row:not([hidden])").length,
  /** whenDrawn resolves once the order for every change made so far is drawn. */
  whenDrawn,
  /**
   * whenSettled resolves once the order for every change made so far is
   * drawn in the whole window: the rows in view and those out of sight.
   */
  whenSettled: () => globalThis.querylensBrowse.whenDrawn().then(whenRest),
  /** the page's counters: rows known, asked, answered, asks out, rows shown, and answers held while typing */
  counts: () => ({ known: known(), asked, answered, outstanding, shown: order.length, held: hold.held.length }),
  /** the shared memory's last order written, as keys (null where the page shares none) */
  sharedOrder,
  /** the rows drawn so far: refilled with another server, moved, and put in the body; the orders read from shared memory, and those view.js found among a recent search's rows */
  draws: () => ({ ...drawStats, ...orderStats }),
  /** the times of query seq's order (orderTimes), or null */
  orderTimes: (/** @type {number} */ n) => orderTimes.get(n) ?? null,
  /** the last query sent to view.js */
  seq: () => seq,
  /** the worker's counters (asked, done, replies, ahead) and the batches received; sentAhead: the keys of the asks whose query left before the decoder was ready */
  stats: () => ({ ...relay?.stats, batches: relay?.batches ?? 0, times: relay?.times ?? {}, sentAhead: relay?.ahead ?? [] }),
};

// ---- start ----

async function start() {
  for (const s of cfg.servers ?? []) addRow(s.protocol, s.addr, "config", s.options ?? null, "", s.status || undefined);
  for (const s of store.added) addRow(s.protocol, s.addr, "added");
  for (const k of store.favourites) {
    const i = k.indexOf("/");
    if (i > 0) addRow(k.slice(0, i), k.slice(i + 1), "favourite");
  }
  // The lists the server keeps load while the decoder starts: the first
  // part of each, which the page came with, at once.
  const kept = loadKeptLists();
  // Ask at once: the worker keeps the asks until its relay connection and
  // decoder are ready, and runs them then without a round trip here.
  const ready = connect(cfg.relay);
  $("progress-text").textContent = "Asking the masters…";
  // The configured, added and favourite servers and the masters the page
  // asks are what boot.js had the worker ask already: asked here in the
  // same task, so that their rows wait for the answers the worker holds.
  askMasters();
  const now = Date.now();
  for (const r of rows) if (!r.master) ask(r, now);
  for (const r of kept) ask(r, now);
  drawProgress();
  try {
    await ready;
  } catch (err) {
    disconnect();
    showFatal(document.querySelector(".browse"), err);
    $("progress-text").textContent = "Not connected";
    globalThis.querylensBrowse.ready = true;
    return;
  }
  // The page is ready for a person once its controls are wired too.
  await later.catch((err) => showFatal(document.querySelector(".browse"), err));
  globalThis.querylensBrowse.ready = true;
}

start();
// The filters, the sort, the rows' clicks and keys, favourites and the
// game picker: imported once the page has asked its first servers (start
// awaits them only after its first await), not preloaded with the page's
// modules, so that the worker's script and imports, and the browser
// module, get the connections first (HTTP/1.1 allows six to the server).
const later = Promise.all([import("./browse-input.js"), import("./browse-picker.js")]);
setInterval(() => {
  // Keep "asked N s ago" style hints honest in titles without re-rendering rows.
  const r = rowAt(active);
  if (r?.lastAsked) wrap.title = `${r.addr}: asked ${ago(Date.now() - r.lastAsked)} ago`;
}, 5000);
