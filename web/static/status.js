// Keeps a status page live: the server rendered it from its own query;
// this asks again through the relay at an interval the server's rate limit
// allows, decodes in the page, and redraws the same sections.
import { decoder, config, stripColors, h, showRelay, markFirstDecode, wireCopyButtons, ago } from "./ql.js";
import { Relay, converse, classify } from "./relay.js";

const cfg = config();
const article = document.querySelector("[data-testid=status]");
const body = document.getElementById("status-body");
const liveState = document.getElementById("live-state");
const teamNames = ["Blue", "Red", "Green", "Gold"];
const labels = {
  online: "Online", offline: "Offline", "rate-limited": "Rate-limited", banned: "Banned", refused: "Refused by the relay",
  malformed: "Malformed reply", unreachable: "Unreachable", busy: "Relay busy", error: "Error",
};

wireCopyButtons();

/** interval honours the relay's cache and Zandronum's 10 s limit, with margin. */
function interval(relay) {
  return Math.max(15_000, relay.cacheTTL + 1000, cfg.protocol === "zandronum" ? 11_000 : 0);
}

/** teamBase: 1 when team numbers count from 1 against the team list (GameSpy v2). */
function teamBase(players, nteams) {
  const nums = players.map((p) => p.team).filter((t) => t != null);
  return nteams && nums.length && nums.every((t) => t >= 1 && t <= nteams) ? 1 : 0;
}

function fact(label, value, id) {
  if (value === "" || value == null) return null;
  return h("div", { "data-testid": `fact-${id}` }, h("dt", {}, label), h("dd", {}, value));
}

function render(info, fields, rtt) {
  const players = info.players;
  const teams = (info.teams ?? []).map((t) => ({ name: stripColors(t.name), score: t.score, players: 0 }));
  const bots = (players ?? []).filter((p) => p.bot).length;
  const specs = (players ?? []).filter((p) => p.spectator).length;
  let counts = "";
  if (info.num_players != null || players) {
    counts = String(info.num_players ?? players.length);
    const max = info.max_players ?? info.max_clients;
    if (max) counts += ` / ${max}`;
  }
  const base = teamBase(players ?? [], teams.length);
  const teamOf = (p) => {
    if (p.team == null) return "";
    const t = p.team - base;
    if (teams[t]) { teams[t].players++; return teams[t].name; }
    return (cfg.protocol === "zandronum" && teamNames[t]) || `team ${p.team}`;
  };
  const rowsOf = (players ?? []).map((p) => {
    const team = teamOf(p);
    return h("tr", { "data-testid": "player-row", "data-team": String(p.team ?? -1) },
      h("td", {}, stripColors(p.name)),
      h("td", { class: "num" }, String(p.score)),
      h("td", { class: "num" }, String(p.ping)),
      h("td", {}, team ? h("span", { class: `team team-${p.team - base}` }, team) : null),
      h("td", {}, p.bot ? h("span", { class: "tag", title: "Bot" }, "bot") : null, p.spectator ? h("span", { class: "tag", title: "Spectator" }, "spectator") : null));
  });
  const out = [h("dl", { class: "summary", "data-testid": "summary" },
    fact("Map", stripColors(info.map ?? ""), "map"),
    fact("Mode", stripColors(info.game_type ?? ""), "mode"),
    counts ? h("div", { "data-testid": "fact-players" }, h("dt", {}, "Players"), h("dd", {}, counts,
      bots ? h("span", { class: "muted" }, ` (${bots} bots)`) : null,
      specs ? h("span", { class: "muted" }, ` (${specs} spectating)`) : null)) : null,
    rtt != null ? fact("Ping", rtt < 1 ? "<1 ms" : `${Math.round(rtt)} ms`, "ping") : null,
    info.password != null ? fact("Password", info.password ? "required" : "none", "password") : null,
    info.version ? h("div", { class: "wide", "data-testid": "fact-version" }, h("dt", {}, "Version"), h("dd", {}, info.version)) : null)];
  if (players) {
    out.push(h("section", { class: "card", "data-testid": "players" },
      h("h2", {}, "Players ", h("span", { class: "muted" }, String(players.length))),
      players.length === 0 ? h("p", { class: "muted" }, "Nobody is playing.") : h("table", { class: "grid" },
        h("thead", {}, h("tr", {}, ...["Name", "Score", "Ping", "Team", "Role"].map((c, i) => h("th", { scope: "col", class: i === 1 || i === 2 ? "num" : null }, c)))),
        h("tbody", {}, rowsOf))));
  }
  if (teams.length) {
    out.push(h("section", { class: "card", "data-testid": "teams" }, h("h2", {}, "Teams"),
      h("table", { class: "grid" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Team"), h("th", { scope: "col", class: "num" }, "Score"), h("th", { scope: "col", class: "num" }, "Players"))),
        h("tbody", {}, teams.map((t, i) => h("tr", {}, h("td", {}, h("span", { class: `team team-${i}` }, t.name)), h("td", { class: "num" }, String(t.score)), h("td", { class: "num" }, String(t.players))))))));
  }
  const mods = fields?.pwads ?? fields?.mods;
  if (Array.isArray(mods) && mods.length) {
    out.push(h("section", { class: "card", "data-testid": "mods" }, h("h2", {}, "Mods and PWADs"),
      h("ul", { class: "chips" }, mods.map((m) => h("li", {}, typeof m === "string" ? m : m?.name ?? JSON.stringify(m))))));
  }
  if (info.rules?.length) {
    out.push(h("section", { class: "card", "data-testid": "rules" }, h("h2", {}, "Rules"),
      h("table", { class: "grid kv" }, h("tbody", {}, info.rules.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, stripColors(v))))))));
  }
  // The server-rendered "All decoded fields" stays as it was: it is a
  // reference view, and redrawing it would close it under the reader.
  const details = body.querySelector("details[data-testid=fields]");
  body.replaceChildren(...out, ...(details ? [details] : []));
}

function setState(state, detail, name) {
  article.dataset.state = state;
  const badge = article.querySelector("[data-testid=status-state]");
  badge.className = `state state-${state}`;
  badge.textContent = labels[state] ?? state;
  let notice = article.querySelector("[data-testid=status-detail]");
  if (state === "online") {
    notice?.remove();
  } else {
    if (!notice) {
      notice = h("p", { role: "status", "data-testid": "status-detail" });
      article.querySelector(".status-head").after(notice);
    }
    notice.className = `notice notice-${state}`;
    notice.textContent = detail;
  }
  if (name) {
    article.querySelector("[data-testid=server-name]").textContent = name;
    document.title = `${name} · ${labels[state] ?? state} · querylens`;
  }
}

async function main() {
  const relay = new Relay(cfg.relay);
  showRelay(relay);
  let ql;
  try {
    [ql] = await Promise.all([decoder(), relay.connect()]);
  } catch (err) {
    liveState.textContent = `· live updates off: ${err.message}`;
    return;
  }
  let last = Date.now();
  const tick = async () => {
    if (document.hidden) return;
    liveState.textContent = "· refreshing…";
    const res = await converse(ql, relay, cfg.protocol, cfg.target, cfg.options ?? null, { timeoutMs: (relay.hello?.replyWindow ?? 2000) + 1500 });
    markFirstDecode();
    const { state, detail } = classify(res);
    // A rate-limited answer says nothing new about the server: keep what
    // is shown and try again next time.
    if (state === "rate-limited" && article.dataset.state === "online") {
      liveState.textContent = `· the server asked us to wait; showing data from ${ago(Date.now() - last)} ago`;
      return;
    }
    const m = res.message?.error ? res.message.partial : res.message;
    if (state === "online" && m?.info) {
      render(m.info, m.fields, res.rtt);
      last = Date.now();
    }
    setState(state, detail, state === "online" ? stripColors(m?.info?.name ?? "") || cfg.target : "");
    const t = article.querySelector("[data-testid=status-updated] time");
    if (t) {
      t.dateTime = new Date().toISOString();
      t.textContent = new Date().toLocaleTimeString();
    }
    liveState.textContent = `· live, every ${Math.round(interval(relay) / 1000)} s${res.cached ? " (relay cache)" : ""}`;
  };
  // The server's own query is fresh: the first live query waits one interval.
  liveState.textContent = `· live, every ${Math.round(interval(relay) / 1000)} s`;
  setInterval(tick, interval(relay));
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && Date.now() - last > interval(relay)) tick();
  });
  globalThis.querylensStatus = { refresh: tick };
}

main();
