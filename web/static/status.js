// @ts-check
// Keeps a status page live. The server rendered the page from its own
// query; this fetches the same article again (GET …/live, rendered by the
// same template from a fresh query through the relay's cache) at an
// interval the game server's rate limit allows, and swaps it in. There is
// one renderer, on the server, and nothing is decoded in the page.
import { $, config, wireCopyButtons, ago, fetchFragment } from "./ql.js";
import { State } from "./model.js";

const cfg = config();
// Zandronum servers answer one address once per 10 s; the relay caches
// replies for a few seconds. 15 s stays clear of both.
const INTERVAL_MS = 15_000;

/** article is the page's current status article. */
const article = () => /** @type {HTMLElement} */ (document.querySelector("article[data-testid=status]"));

/** liveURL is the page's own URL with /live added to its path. */
function liveURL() {
  const u = new URL(location.href);
  u.pathname = u.pathname.replace(/\/+$/, "") + "/live";
  u.hash = "";
  return u.href;
}

/** note says, after the "Queried …" line, how the page stays live. */
function note(text) {
  const el = $("live-state");
  if (el) el.textContent = text;
}

let last = Date.now();

/**
 * refresh fetches the article and swaps it in, keeping the reader's place:
 * an open "All decoded fields" stays open and focus stays on the same
 * element. A rate-limited answer says nothing new about a server shown
 * online: the page keeps what it shows and says how old it is.
 */
async function refresh() {
  note("· refreshing…");
  let got;
  try {
    got = await fetchFragment(liveURL(), "article[data-testid=status]", { headers: { Accept: "text/html" }, cache: "no-store" });
  } catch (err) {
    note(`· live update failed: ${err.message}; showing data from ${ago(Date.now() - last)} ago`);
    return;
  }
  const { resp, el: next } = got;
  if (!resp.ok) {
    const wait = resp.headers.get("Retry-After");
    note(`· live update refused (${resp.status}${wait ? `, retry after ${wait} s` : ""}); showing data from ${ago(Date.now() - last)} ago`);
    return;
  }
  if (!next) {
    note("· live update failed: the server sent no status");
    return;
  }
  const cur = article();
  if (next.dataset.state === State.rateLimited && cur.dataset.state === State.online) {
    note(`· the server asked us to wait; showing data from ${ago(Date.now() - last)} ago`);
    return;
  }
  const fields = /** @type {HTMLDetailsElement|null} */ (cur.querySelector("details[data-testid=fields]"));
  const nextFields = /** @type {HTMLDetailsElement|null} */ (next.querySelector("details[data-testid=fields]"));
  if (fields?.open && nextFields) nextFields.open = true;
  const focused = document.activeElement && cur.contains(document.activeElement) ? document.activeElement.id : "";
  cur.replaceWith(next);
  wireCopyButtons(next);
  if (focused) $(focused)?.focus();
  if (next.dataset.title) document.title = next.dataset.title;
  last = Date.now();
  note(`· live, every ${INTERVAL_MS / 1000} s`);
}

wireCopyButtons();
note(`· live, every ${INTERVAL_MS / 1000} s`);
// The server's own query is fresh: the first live query waits one interval.
setInterval(() => {
  if (!document.hidden) refresh();
}, INTERVAL_MS);
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && Date.now() - last > INTERVAL_MS) refresh();
});
globalThis.querylensStatus = { refresh, config: cfg };
