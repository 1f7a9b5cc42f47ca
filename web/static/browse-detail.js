// @ts-check
// A row's state in detail: the popover its state badge opens, with links
// to the server's status page and to the inspector.
import { h } from "./ql.js";
import { stateLabels } from "./browse-config.js";

/** @type {HTMLElement|undefined} */
let popover;

/**
 * showDetail opens the popover of row r by anchor (its state badge).
 * @param {import("./browse-rows.js").Row} r @param {Element} anchor
 */
export function showDetail(r, anchor) {
  popover?.remove();
  const q = new URLSearchParams({ protocol: r.protocol, target: r.addr });
  for (const [k, v] of Object.entries(r.options ?? {})) q.set(`opt.${k}`, v);
  const got = r.received ?? [];
  const inspect = `/inspect?${q}` + (got.length ? `#p=${encodeURIComponent(r.protocol)}&t=${encodeURIComponent(r.addr)}&h=${got.join(",")}` : "");
  popover = h("div", { class: "popover", role: "dialog", "aria-label": "Server state", "data-testid": "state-detail" },
    h("strong", {}, `${r.addr}: ${stateLabels[r.state] ?? r.state}`),
    r.detail ? h("pre", {}, r.detail) : null,
    r.master ? h("p", { class: "muted small" }, `Listed by ${r.master}`) : null,
    h("div", { class: "inline-form" },
      h("a", { class: "btn", href: r.url }, "Status page"),
      h("a", { class: "btn", href: inspect }, "Inspect packets"),
      h("button", { type: "button", class: "btn", onclick: () => popover.remove() }, "Close")));
  document.body.append(popover);
  const b = anchor.getBoundingClientRect();
  popover.style.left = `${Math.min(b.left, innerWidth - popover.offsetWidth - 8)}px`;
  popover.style.top = `${Math.min(b.bottom + 4, innerHeight - popover.offsetHeight - 8)}px`;
  popover.querySelector("button").focus();
}
document.addEventListener("keydown", (e) => { if (e.key === "Escape") popover?.remove(); });
document.addEventListener("click", (e) => { if (popover && !popover.contains(/** @type {Node} */ (e.target)) && !/** @type {Element} */ (e.target).closest("[data-detail]")) popover.remove(); });
