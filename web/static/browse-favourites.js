// @ts-check
// The servers a person keeps: favourites (starred rows), the servers added
// by hand (the add form, with detection), and their export and import.
import { $, download } from "./ql.js";
import { cfg } from "./browse-config.js";
import { store, saveStore, keyOf } from "./browse-store.js";
import { addRow, apply, changed } from "./browse-rows.js";
import { connected, ask, countFound, relay } from "./browse-asks.js";
import { rebuild } from "./browse-order.js";
import { detectProtocol } from "./browse-detect.js";

/** toggleFavourite stars or unstars r. @param {import("./browse-rows.js").Row} r */
export function toggleFavourite(r) {
  if (store.favourites.has(r.key)) store.favourites.delete(r.key);
  else store.favourites.add(r.key);
  saveStore();
  changed(r);
}

$("add-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  let protocol = $("add-protocol").value;
  // The address as the server reads it (package server/ident, in the
  // decoder's worker): canonical, the protocol's default port added.
  const addr = await relay.model("hostPort", $("add-addr").value, (cfg.protocols ?? []).find((p) => p.name === protocol)?.default_port);
  if (typeof addr !== "string") {
    $("add-msg").textContent = "Enter host:port";
    return;
  }
  let found = null;
  if (protocol === "detect") {
    if (!connected) {
      $("add-msg").textContent = "Not connected to the relay yet";
      return;
    }
    $("add-msg").textContent = `Detecting the protocol of ${addr}…`;
    found = await detectProtocol(addr);
    if (!found) {
      $("add-msg").textContent = `No protocol answered at ${addr}`;
      return;
    }
    protocol = found.protocol;
  }
  if (!store.added.some((s) => s.protocol === protocol && s.addr === addr)) {
    store.added.push({ protocol, addr });
    saveStore();
  }
  const r = addRow(protocol, addr, "added");
  if (found) {
    countFound();
    r.lastAsked = Date.now();
    apply(r, found.res);
    await rebuild(); // at once: the message below says the row is there
    const title = (cfg.protocols ?? []).find((p) => p.name === protocol)?.title ?? protocol;
    $("add-msg").textContent = `Added ${addr}: ${title} answered`;
  } else {
    if (connected) ask(r);
    $("add-msg").textContent = `Added ${addr}`;
  }
  $("add-addr").value = "";
});

$("fav-export").addEventListener("click", () => {
  const list = (keys) => [...keys].map((k) => { const i = k.indexOf("/"); return { protocol: k.slice(0, i), addr: k.slice(i + 1) }; });
  const data = { querylens: "favourites", version: 1, favourites: list(store.favourites), added: store.added };
  download(JSON.stringify(data, null, 2), "application/json", "querylens-favourites.json");
});

$("fav-import").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  try {
    const data = JSON.parse(await file.text());
    if (data.querylens !== "favourites") throw new Error("not a querylens favourites file");
    let n = 0;
    for (const s of data.favourites ?? []) {
      if (typeof s?.protocol !== "string" || typeof s?.addr !== "string") continue;
      store.favourites.add(keyOf(s.protocol, s.addr));
      const r = addRow(s.protocol, s.addr, "favourite");
      if (connected) ask(r);
      n++;
    }
    for (const s of data.added ?? []) {
      if (typeof s?.protocol !== "string" || typeof s?.addr !== "string") continue;
      if (!store.added.some((x) => x.protocol === s.protocol && x.addr === s.addr)) store.added.push({ protocol: s.protocol, addr: s.addr });
      const r = addRow(s.protocol, s.addr, "added");
      if (connected) ask(r);
    }
    saveStore();
    $("fav-msg").textContent = `Imported ${n} favourite${n === 1 ? "" : "s"}`;
  } catch (err) {
    $("fav-msg").textContent = `Import failed: ${err.message}`;
  }
  e.target.value = "";
});
