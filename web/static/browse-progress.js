// @ts-check
// The status line and the progress bar: the servers known, asked,
// answered and online, and each master's list.
import { $ } from "./ql.js";
import { State } from "./model.js";
import { stateLabels } from "./browse-config.js";
import { known } from "./browse-rows.js";
import { asked, answered, connected } from "./browse-asks.js";
import { onlineCount, orderPending } from "./browse-order.js";
import { masters } from "./browse-masters.js";
import { text } from "./browse-table.js";

/**
 * progress redraws the status line and the bar at a frame, at most every
 * PROGRESS_MS: while answers stream in, a new line of text each frame is
 * a layout of the page's top for a count nobody reads that fast.
 */
let progressQueued = false;
let lastProgress = -Infinity;
const PROGRESS_MS = 250;
export function progress() {
  if (progressQueued) return;
  progressQueued = true;
  const wait = Math.max(0, lastProgress + PROGRESS_MS - performance.now());
  if (document.hidden) setTimeout(drawProgress, wait);
  else if (wait > 0) setTimeout(() => requestAnimationFrame(drawProgress), wait);
  else requestAnimationFrame(drawProgress);
}

/** @type {Element|null} */
let progressBar = null;
export function drawProgress() {
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
