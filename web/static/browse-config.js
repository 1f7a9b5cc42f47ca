// @ts-check
// What the server browser was told (<script id="ql-config">): the protocol
// table read once into the lookups the other modules use, and the limits
// they share. Nothing here changes after the page loads.
import { config } from "./ql.js";
import { PageState, StateWord, Row } from "./model.js";

export const cfg = config();

/** The row fields each protocol fills (the protocol table's "row"); a row leaves the others blank. */
export const fills = Object.fromEntries((cfg.protocols ?? []).map((p) => [p.name, new Set(p.row ?? Object.keys(Row))]));
// Column labels: the title, or the name in capitals when the title is long ("OGP").
export const protocolTitles = Object.fromEntries((cfg.protocols ?? []).map((p) => [p.name, p.title.length > 13 ? p.name.toUpperCase() : p.title]));
/**
 * Each protocol's list options (the protocol table's "list"): a row without
 * options of its own is asked with them, for what the row shows; its status
 * page asks everything.
 * @type {Record<string, Record<string, string>>}
 */
export const listOptions = Object.fromEntries((cfg.protocols ?? []).filter((p) => p.list).map((p) => [p.name, p.list]));
/** Each protocol's master options (the protocol table's master.options). */
export const masterOptions = Object.fromEntries((cfg.protocols ?? []).filter((p) => p.master).map((p) => [p.name, p.master.options ?? null]));

export const ZANDRONUM_MIN_MS = 10_000; // a Zandronum server answers one IP once per 10 s

/**
 * BIG is the size of list past which the page holds what the answers
 * would move while the person types or scrolls (browse-hold.js), and
 * reorders less often (browse-order.js).
 */
export const BIG = 5000;

/**
 * The row fields the table has its own columns for; any other field of
 * model.js's Row (a protocol's extra numbers) gets a column of its own,
 * added here, so a field added to the row model shows without a change to
 * this script.
 */
const KNOWN = new Set(["name", "map", "mode", "players", "bots", "max", "password", "country", "hay", "anticheat", "os", "keywords"]);
export const EXTRA = Object.keys(Row).filter((k) => !KNOWN.has(k));

/** The row's words for each state (short: they sit in the name cell). */
/** @type {Record<string, string>} */
export const stateLabels = {
  ...StateWord, [PageState.error]: "error", [PageState.pending]: "waiting", [PageState.querying]: "asking…",
};
