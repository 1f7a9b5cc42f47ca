// @ts-check
// Keeps the status page's history charts current: once a minute, while the
// tab is visible, it fetches the section rendered on the server
// (history.html, the same SVG the page came with) and swaps it in. The
// charts need no script to show; this only refreshes them.
import { fetchFragment } from "./ql.js";

const EVERY_MS = 60_000;

async function refresh() {
  /** @type {HTMLElement|null} */
  const section = document.querySelector("[data-testid=history]");
  const url = section?.dataset.fragmentUrl;
  if (!url || document.hidden) return;
  try {
    const { el } = await fetchFragment(url, "[data-testid=history]");
    if (el) section.replaceWith(el);
  } catch {
    // Keep the charts we have; the next round tries again.
  }
}

setInterval(refresh, EVERY_MS);
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refresh();
});
globalThis.querylensHistory = { refresh };
