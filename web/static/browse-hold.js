// @ts-check
// The typing and scroll holds of a big list: while the person types in its
// filters or scrolls it, the page draws the keystrokes' orders and the
// scroll only. The servers' answers wait (held) and are applied together
// once typing pauses; new asks wait for typing to pause and scrolling to
// rest, and then go to the rows the last search shows and the rows in
// view; the answers' new places wait too (browse-order.js).
import { BIG } from "./browse-config.js";
import { rows } from "./browse-rows.js";

const TYPING_HOLD_MS = 400;
const SCROLL_HOLD_MS = 250;
/** HOLD_MAX_MS bounds how long answers are held, and an order's rows wait for the answers' places. */
export const HOLD_MAX_MS = 2000;

/** @typedef {import("./browse-rows.js").Row} Row */

/**
 * Hold is the state of the holds: when the person last typed and
 * scrolled, and the answers held since typing began.
 */
class Hold {
  lastKey = -Infinity;
  lastScroll = -Infinity;
  /**
   * The answers held while the person types (browse-asks.js results),
   * applied at most TYPING_HOLD_MS after the last keystroke and
   * HOLD_MAX_MS after the first of them came.
   * @type {{r: Row, res: any}[]}
   */
  held = [];
  heldSince = 0;
  timer = 0;

  /** key notes a keystroke in the filters at now. @param {number} now */
  key(now) {
    this.lastKey = now;
  }

  /** scroll notes a scroll at now. @param {number} now */
  scroll(now) {
    this.lastScroll = now;
  }

  /**
   * typing says whether the person is typing in a big list's filters at now
   * (a keystroke within TYPING_HOLD_MS): the page then draws the keystrokes'
   * orders only; answers wait (holding) and so do new asks (pumpAsks), which
   * go, once typing pauses, to the rows the last search shows.
   * @param {number} now
   */
  typing(now) {
    return rows.length > BIG && !document.hidden && now - this.lastKey < TYPING_HOLD_MS;
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
  scrolling(now) {
    return rows.length > BIG && !document.hidden && now - this.lastScroll < SCROLL_HOLD_MS;
  }

  /** holding says whether answers coming at now are held. @param {number} now */
  holding(now) {
    return this.typing(now) && (!this.held.length || now - this.heldSince < HOLD_MAX_MS);
  }

  /** movesAt is when the answers' new places may show: TYPING_HOLD_MS after the last keystroke or scroll. */
  movesAt() {
    return Math.max(this.lastKey, this.lastScroll) + TYPING_HOLD_MS;
  }

  /** keep holds r's answer res. @param {Row} r @param {any} res */
  keep(r, res) {
    this.held.push({ r, res });
  }

  /** take returns the held answers and holds none. */
  take() {
    this.heldSince = 0;
    const list = this.held;
    this.held = [];
    return list;
  }

  /**
   * afterPause looks again, when due, at what waits for typing to pause
   * and scrolling to rest: it applies the held answers (release) once
   * typing paused or they waited HOLD_MAX_MS, and asks again (pump) once
   * typing paused and scrolling rested, while rows wait to be asked
   * (waiting).
   * @param {{waiting: () => number, release: () => void, pump: () => void}} then
   */
  afterPause(then) {
    if (this.held.length) this.heldSince ||= performance.now();
    if (this.timer) return;
    const due = () => {
      let at = Infinity;
      if (this.held.length) at = Math.min(this.lastKey + TYPING_HOLD_MS, this.heldSince + HOLD_MAX_MS);
      const quiet = Math.max(this.lastKey + TYPING_HOLD_MS, this.lastScroll + SCROLL_HOLD_MS);
      if (then.waiting() > 0 && quiet > performance.now()) at = Math.min(at, quiet);
      return at;
    };
    const arm = () => {
      const at = due();
      if (at < Infinity) this.timer = setTimeout(check, Math.max(0, at - performance.now()));
    };
    const check = () => {
      this.timer = 0;
      const now = performance.now();
      if (this.held.length && !this.holding(now)) then.release();
      if (!this.typing(now) && !this.scrolling(now)) then.pump();
      arm();
    };
    arm();
  }
}

/** hold is the page's one Hold. */
export const hold = new Hold();
