// @ts-check
// The masters' lists: asked through the relay (a master the server does
// not keep, Zandronum's), or read from the server (the lists it keeps,
// GET /api/v1/masters/…), their servers added as rows and asked; and the
// refresh of everything, by hand and every few seconds.
import { $, replyTimeout } from "./ql.js";
import { State, PageState } from "./model.js";
import { cfg, masterOptions, minAskMs } from "./browse-config.js";
import { store } from "./browse-store.js";
import { rows, addRow, drop, changed, fromSummary } from "./browse-rows.js";
import { relay, connected, want, minInterval } from "./browse-asks.js";
import { progress, drawProgress } from "./browse-progress.js";

/**
 * @typedef {{spec: {protocol: string, addr: string, filter?: string, label?: string, kept: boolean, query?: string[], list?: any},
 *   label: string, filter: string, state: string, detail: string, count: number,
 *   complete: boolean, loaded: number}} Master
 */
/** @type {Master[]} every configured master; a bare "host:port" is the default protocol's (cfg.defaultProtocol) */
export const masters = (cfg.masters ?? []).map((/** @type {any} */ m) => {
  const spec = typeof m === "string" ? { protocol: cfg.defaultProtocol, addr: m, kept: false } : m;
  return { spec, label: spec.label || spec.addr, filter: spec.filter ?? "", state: PageState.pending, detail: "", count: 0, complete: false, loaded: 0 };
});

/** When each master was last asked through the relay, by key. @type {Map<string, number>} */
const masterAsked = new Map();
/** When each kept list was last read. @type {Map<Master, number>} */
const keptAt = new Map();

/** loadMaster asks m's list: from the server when it keeps it, else through the relay. @param {Master} m */
function loadMaster(m, now = Date.now()) {
  if (m.spec.kept) return loadKept(m);
  const key = masterKey(m);
  const last = masterAsked.get(key) ?? 0;
  if (now - last < (minAskMs[m.spec.protocol] ?? 0)) return;
  masterAsked.set(key, now);
  m.state = PageState.querying;
  // query: the list's first request, built by the server (browse.Master),
  // which the worker sends before its decoder is ready.
  relay.ask({ key, protocol: m.spec.protocol, target: m.spec.addr, options: masterOptions[m.spec.protocol] ?? null, timeoutMs: replyTimeout(relay, 2000), query: m.spec.query });
}

/**
 * loadKeptLists shows the lists the server keeps: the first servers of each
 * the page came with (spec.list, as the server had the list when it sent
 * the page), then the rest of it read from the server, or the whole list
 * read when the page came with none. It returns the rows the page came
 * with, for the page to ask at once: boot.js had the worker ask them
 * already, as it asks the configured servers.
 * @returns {import("./browse-rows.js").Row[]}
 */
export function loadKeptLists() {
  const first = [];
  for (const m of masters) {
    if (!m.spec.kept) continue;
    keptAt.set(m, Date.now());
    const list = m.spec.list;
    if (!list) {
      loadKept(m);
      continue;
    }
    const n = ++m.loaded;
    first.push(...showKept(m, list));
    readRest(m, list, n);
  }
  return first;
}

/** askMasters asks the masters the server does not keep through the relay. */
export function askMasters() {
  for (const m of masters) if (!m.spec.kept) loadMaster(m);
}

/**
 * masterKey is the key of a master's conversation: "master:host:port" for
 * the default protocol's (cfg.defaultProtocol, as the browse handler's boot
 * asks it: browse.MasterKey), else
 * "master:protocol/host:port".
 * @param {Master} m
 */
function masterKey(m) {
  return m.spec.protocol === cfg.defaultProtocol ? `master:${m.spec.addr}` : `master:${m.spec.protocol}/${m.spec.addr}`;
}

/**
 * master adds the servers of a master's list the relay brought, and asks
 * them once view.js has put them in order.
 * @param {any} res
 */
export function master(res) {
  const m = masters.find((x) => masterKey(x) === res.key);
  const protocol = m?.spec.protocol ?? cfg.defaultProtocol;
  const addr = m?.spec.addr ?? res.key.slice("master:".length);
  const list = res.servers ?? [];
  if (m) Object.assign(m, { state: res.state, detail: res.detail, count: list.length, complete: true });
  const paths = res.paths ?? [];
  want(list.map((s, i) => addRow(protocol, s, "master", null, m?.label ?? addr, paths[i] || undefined)));
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
export async function loadKept(m, after = 0) {
  const n = ++m.loaded;
  m.state = PageState.querying;
  progress();
  const params = new URLSearchParams();
  if (m.filter) params.set("filter", m.filter);
  if (after) params.set("after", String(after));
  const q = params.toString() ? `?${params}` : "";
  let list;
  try {
    const resp = await fetch(`/api/v1/masters/${encodeURIComponent(m.spec.protocol)}/${encodeURI(m.spec.addr)}${q}`, { headers: { Accept: "application/json" } });
    if (!resp.ok) throw new Error(`${resp.status} ${(await resp.text()).trim().slice(0, 200)}`);
    list = await resp.json();
  } catch (err) {
    if (n !== m.loaded) return;
    Object.assign(m, { state: PageState.error, detail: `the list did not load: ${err.message}` });
    progress();
    return;
  }
  if (n !== m.loaded) return; // a newer load (another game) is under way
  const added = showKept(m, list);
  want(added.filter((r) => !r.lastAsked)); // a re-read while the server pages asks only the new ones
  progress();
  readRest(m, list, n);
}
const KEPT_POLL_MS = 3000;

/**
 * readRest reads what m's list holds past the part just shown (list, of
 * load n): at once when the server has more (the page came with the
 * list's first part), else again in KEPT_POLL_MS while the server is
 * still fetching it.
 * @param {Master} m @param {any} list @param {number} n
 */
function readRest(m, list, n) {
  const read = (list.offset ?? 0) + (list.servers?.length ?? 0);
  if ((list.total ?? read) > read) loadKept(m, read);
  else if (!list.complete && !list.error) setTimeout(() => n === m.loaded && loadKept(m, read), KEPT_POLL_MS);
}

/**
 * showKept adds the servers of a kept list (a server.MasterList, or the
 * part of it after list.offset; or the page's form of its first part,
 * browse.KeptList, whose servers name their protocol only when it is not
 * the master's) as m's rows with their last known state, and returns them.
 * @param {Master} m @param {any} list
 */
function showKept(m, list) {
  // offset 0: the whole list (also when the server replaced the one read).
  const offset = list.offset ?? 0;
  // A server the relay refuses to ask is no use in the table.
  const servers = (list.servers ?? []).filter((/** @type {any} */ s) => s.state !== State.refused);
  const count = (offset ? m.count : 0) + servers.length;
  Object.assign(m, { state: list.error && !count ? PageState.error : State.online, detail: list.error ?? "", count, complete: !!list.complete });
  const listed = new Set();
  const added = [];
  for (const s of servers) {
    const r = addRow(s.protocol ?? m.spec.protocol, s.address, "master", s.options ?? null, m.label, s.status || undefined);
    fromSummary(r, s);
    changed(r);
    listed.add(r);
    added.push(r);
  }
  // While the server is still paging through the master, the list grows:
  // rows leave only when a complete list, read whole, does not hold them.
  for (const r of list.complete && !offset ? rows : []) {
    if (r.master === m.label && r.source === "master" && !listed.has(r) && !r.gone && !store.favourites.has(r.key)) drop(r);
  }
  return added;
}

/** refreshAll asks every master and server again (the Refresh button). */
export function refreshAll() {
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

/**
 * autoRefresh re-asks, every `auto` seconds (the page's select), the lists
 * and the rows whose interval passed; ask() itself refuses servers asked
 * within their protocol's limit. The page calls it every few seconds.
 */
export function autoRefresh() {
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
}
