// @ts-check
// The game picker: the filter of the Steam masters the server keeps.
import { $ } from "./ql.js";
import { cfg } from "./browse-config.js";
import { masters, loadKept } from "./browse-masters.js";

const steamMasters = masters.filter((m) => m.spec.kept && m.spec.protocol === "a2s");
const gamePick = /** @type {HTMLInputElement|null} */ (document.getElementById("f-game"));
if (gamePick && steamMasters.length) {
  /** @type {HTMLElement} */ (gamePick.closest("[data-testid=game-picker]")).hidden = false;
  gamePick.addEventListener("change", () => pickGame(gamePick.value));
}

/**
 * appIDOf reads what a person typed or picked: a game's name, the picker's
 * "Name (app ID)", or any app ID; 0 for all the games the master's own
 * filter lists, -1 for what it cannot read.
 * @param {string} typed
 */
function appIDOf(typed) {
  const t = typed.trim();
  if (!t) return 0;
  const id = /^(?:.*\()?\s*(\d+)\s*\)?$/.exec(t);
  if (id) return Number(id[1]);
  const g = (cfg.games ?? []).find((/** @type {{name: string}} */ g) => g.name.toLowerCase() === t.toLowerCase());
  return g ? g.appid : -1;
}

/**
 * pickGame sets the filter of every Steam master the server keeps to the
 * game's (\appid\N; the configured filter for none) and reloads their lists.
 * @param {string} typed
 */
function pickGame(typed) {
  const id = appIDOf(typed);
  const msg = $("game-msg");
  if (id < 0) {
    msg.textContent = `No game called "${typed.trim()}": pick one from the list or type an app ID`;
    return;
  }
  const g = (cfg.games ?? []).find((/** @type {{appid: number}} */ g) => g.appid === id);
  msg.textContent = id ? `${g ? g.name : "app " + id}: \\appid\\${id}` : "";
  for (const m of steamMasters) {
    m.filter = id ? `\\appid\\${id}` : m.spec.filter ?? "";
    loadKept(m);
  }
}
