// @ts-check
// Sparklines on the browse page: a 24-hour player-count image in the name
// cell of every row whose server is tracked. Separate from browse.js on
// purpose: it only watches the rows browse.js renders and adds an <img>
// (server-rendered SVG) to each, so either can change without the other.
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

function decorate(root) {
  for (const a of root.querySelectorAll("tr.row td[data-testid=cell-name] a.name")) {
    if (a.nextElementSibling?.classList.contains("spark")) continue;
    const u = new URL(a.href, location.href);
    if (!tracked.has(u.pathname + u.search)) continue;
    const img = document.createElement("img");
    img.className = "spark";
    img.alt = "";
    img.width = 96;
    img.height = 20;
    img.loading = "lazy";
    img.dataset.testid = "row-spark";
    img.src = u.pathname + "/spark.svg" + u.search;
    a.after(img);
  }
}

const rows = document.getElementById("rows");
if (rows) {
  await load();
  if (tracked.size > 0) {
    decorate(rows);
    new MutationObserver(() => decorate(rows)).observe(rows, { childList: true, subtree: true });
  }
}
