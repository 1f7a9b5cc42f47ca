// @ts-check
// Sparklines on the browse page: a 24-hour player-count image in the name
// cell of every row whose server is tracked. Separate from browse.js on
// purpose: it only watches the rows browse.js renders and adds an <img>
// (server-rendered SVG) to each, so either can change without the other.
// It follows the rows as browse.js reuses their elements for other servers.
export {}; // a module: it waits for the list with top-level await

const tracked = new Set();

async function load() {
  try {
    const res = await fetch("/history/tracked.json");
    if (!res.ok) return;
    for (const p of (await res.json()).servers ?? []) tracked.add(p);
  } catch {
    // No sparklines then; the table works without them.
  }
}

/**
 * mark gives the name link a the sparkline of its server when it is
 * tracked, and takes away one it has for another server (browse.js
 * refills a row element with another server as the table scrolls or
 * filters: the same link, another href).
 * @param {HTMLAnchorElement} a
 */
function mark(a) {
  const u = new URL(a.href, location.href);
  const src = tracked.has(u.pathname + u.search) ? u.pathname + "/spark.svg" + u.search : "";
  const next = a.nextElementSibling;
  const img = next?.classList.contains("spark") ? /** @type {HTMLImageElement} */ (next) : null;
  if (img) {
    if (!src) img.remove();
    else if (img.getAttribute("src") !== src) img.src = src;
    return;
  }
  if (!src) return;
  const el = document.createElement("img");
  el.className = "spark";
  el.alt = "";
  el.width = 96;
  el.height = 20;
  el.loading = "lazy";
  el.dataset.testid = "row-spark";
  el.src = src;
  a.after(el);
}

const NAMES = "tr.row td[data-testid=cell-name] a.name";

const rows = document.getElementById("rows");
if (rows) {
  await load();
  if (tracked.size > 0) {
    for (const a of rows.querySelectorAll(NAMES)) mark(/** @type {HTMLAnchorElement} */ (a));
    // New row elements, and a link whose href changed (its element now
    // shows another server).
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === "attributes") {
          const a = /** @type {Element} */ (r.target);
          if (a.matches(NAMES)) mark(/** @type {HTMLAnchorElement} */ (a));
          continue;
        }
        for (const n of r.addedNodes) {
          if (!(n instanceof Element)) continue;
          if (n.matches(NAMES)) mark(/** @type {HTMLAnchorElement} */ (n));
          for (const a of n.querySelectorAll(NAMES)) mark(/** @type {HTMLAnchorElement} */ (a));
        }
      }
    }).observe(rows, { childList: true, subtree: true, attributes: true, attributeFilter: ["href"] });
  }
}
