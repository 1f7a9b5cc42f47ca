// @ts-check
// The game picker: the filter of the kept masters that pick a game by id
// (the protocol table's master.games: Steam's), by GameDig's game ids (the
// server's game table, cfg.games).
import { $ } from "./ql.js";
import { cfg, gameMasters } from "./browse-config.js";
import { masters, loadKept } from "./browse-masters.js";

/** @typedef {{id: string, old?: string[], name: string, master: string, filter: string}} Game */

/** @type {Game[]} */
const games = cfg.games ?? [];
const gameListMasters = masters.filter((m) => m.spec.kept && gameMasters.has(m.spec.protocol));
const gamePick = /** @type {HTMLInputElement|null} */ (document.getElementById("f-game"));
if (gamePick && gameListMasters.length) {
  /** @type {HTMLElement} */ (gamePick.closest("[data-testid=game-picker]")).hidden = false;
  gamePick.addEventListener("change", () => pickGame(gamePick.value));
}

/**
 * gameOf reads what a person typed or picked: a game's GameDig id (or an
 * id GameDig took before), its name, the picker's "Name (id)", or any
 * Steam app ID, alone or in brackets. null for nothing typed (the masters'
 * own filters); undefined for what it cannot read.
 * @param {string} typed
 * @returns {{label: string, filter: string, master?: string}|null|undefined}
 */
function gameOf(typed) {
  const t = typed.trim().toLowerCase();
  if (!t) return null;
  /** @param {string} s */
  const byIdOrName = (s) => games.find((g) => g.id === s || (g.old ?? []).includes(s)) ?? games.find((g) => g.name.toLowerCase() === s);
  const inner = /\(\s*([^()]*?)\s*\)$/.exec(t)?.[1] ?? t;
  let g = byIdOrName(t);
  if (!g && /^\d+$/.test(inner)) {
    const filter = `\\appid\\${Number(inner)}`;
    g = games.find((g) => g.filter === filter);
    return g ? { label: g.name, filter, master: g.master } : { label: "app " + Number(inner), filter };
  }
  g ??= byIdOrName(inner);
  return g ? { label: g.name, filter: g.filter, master: g.master } : undefined;
}

/**
 * pickGame sets the filter of every kept master of the game's protocol to
 * the game's (Steam's \appid\N; the configured filter for none) and
 * reloads their lists.
 * @param {string} typed
 */
function pickGame(typed) {
  const g = gameOf(typed);
  const msg = $("game-msg");
  if (g === undefined) {
    msg.textContent = `No game called "${typed.trim()}": pick one from the list, or type its GameDig id or a Steam app ID`;
    return;
  }
  msg.textContent = g ? `${g.label}: ${g.filter}` : "";
  for (const m of gameListMasters) {
    if (g?.master && m.spec.protocol !== g.master) continue;
    m.filter = g ? g.filter : m.spec.filter ?? "";
    loadKept(m);
  }
}
