// @ts-check
// What the person does on the server browser: the search and the filters
// (a keystroke's query sent as the key comes), the sort by column, the
// rows' clicks (favourite, state detail, the keyboard cursor), the table's
// keys, and the Refresh button.
import { $ } from "./ql.js";
import { store, saveStore } from "./browse-store.js";
import { order, rebuild, invalidate } from "./browse-order.js";
import { wrap, tbody, table, ROW_H, active, rowAt, setActive } from "./browse-table.js";
import { slotOf, pointAt } from "./browse-slots.js";
import { toggleFavourite } from "./browse-favourites.js";
import { showDetail } from "./browse-detail.js";
import { refreshAll } from "./browse-masters.js";

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
  const sort = store.sort;
  store.sort = sort.key === key ? { key, dir: -sort.dir } : { key, dir: key === "players" || key === "fav" ? -1 : 1 };
  saveStore();
  invalidate();
});

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
  else if (e.key === "Enter" && r) r.url && (location.href = r.url);
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
