// @ts-check
// The packet inspector: build a query and see its bytes, send it through
// the relay, and dissect every datagram: a hex view (offset, hex, ASCII)
// and a field tree from the decoder's spans, linked both ways.
import { $, decoder, compiledDecoder, config, parseHex, toHex, esc, h, copyText, showRelay, showFatal, markFirstDecode, replyTimeout, download } from "./ql.js";
import { Relay, converse, classify } from "./relay.js";
import { dataValues, byteDiff, fieldDiff, encoders, splice, fieldText } from "./bytesview.js";
import { Capture, FLAG_STORED, FLAG_TCP } from "./capture.js";
import { State } from "./model.js";

const cfg = config();
let ql;
let relay;
let protocols = [];

/**
 * A packet of the session. A TCP exchange (transport "tcp") is two: the
 * request the codec built, as the relay writes it, and the reply, the
 * relay's CHUNKs joined in offset order (chunks of them), with the reason
 * its END gave (end: "done", "cap", "timeout", "closed", …; "" while it
 * comes). stream numbers the exchange (the group), for the export.
 * @typedef {{n: number, time: number, direction: "sent"|"received"|"pasted",
 *   data: Uint8Array, protocol: string|null, kind: string, rtt: number|null,
 *   target: string, group: number, cached: boolean,
 *   transport: "udp"|"tcp", stream: number, chunks: number, end: string}} Packet
 */
/** @type {Packet[]} */
const packets = [];
let groups = 0;
let selected = -1;
let layerIndex = -1;
let current = null; // {msg, error, layers, spans, owner}
let pinned = -1; // span index selected by click
// The data inspector's selection in the shown layer: bytes [start, end),
// the cursor at start; anchor is where a shift-click range began.
let cursor = { start: -1, end: -1, anchor: -1 };
/**
 * The capture datagram shown, when one of an opened capture's rows is
 * selected instead of a session packet.
 * @type {{label: string, protocol: string|null, data: Uint8Array, direction: "sent"|"received",
 *   target: string, answer: Uint8Array[], query: Uint8Array|null, times: number[], frames: number[], conv: number,
 *   transport: "udp"|"tcp", end: string}|null}
 */
let capShown = null;

// ---- query builder ----

function renderOptions() {
  const proto = protocols.find((p) => p.name === $("b-protocol").value);
  const box = $("b-options");
  box.replaceChildren(h("legend", {}, "Options"));
  if (!proto) return;
  if (!proto.options.length) box.append(h("p", { class: "muted small opt-help" }, "This protocol's query has no options."));
  for (const o of proto.options) {
    const id = `opt-${o.name}`;
    let input;
    if (o.kind === "bool") {
      input = h("input", { type: "checkbox", id, name: o.name, checked: o.default === "true" });
      box.append(h("label", { class: "check", title: o.help }, input, o.name));
    } else {
      if (o.kind === "choice") {
        input = h("select", { id, name: o.name }, o.choices.map((c) => h("option", { value: c, selected: c === o.default }, c)));
      } else {
        input = h("input", { id, name: o.name, placeholder: o.default, class: "mono", autocomplete: "off", spellcheck: "false" });
      }
      box.append(h("label", { title: o.help }, o.name, input));
    }
    input.dataset.kind = o.kind;
  }
  const port = proto.default_port;
  const t = $("b-target");
  t.placeholder = port ? `host:${port}` : "host:port";
}

/**
 * options reads the form's query options.
 * @returns {Record<string, string>}
 */
function options() {
  /** @type {Record<string, string>} */
  const out = {};
  for (const el of $("b-options").querySelectorAll("[name]")) {
    if (el.dataset.kind === "bool") out[el.name] = el.checked ? "true" : "false";
    else if (el.value.trim() !== "") out[el.name] = el.value.trim();
  }
  return out;
}

function bytesLine(label, bytes) {
  return h("div", {}, h("div", { class: "muted" }, `${label} · ${bytes.length} bytes`), h("div", { class: "bytes", "data-testid": "preview-bytes" }, toHex(bytes).replace(/(..)(?!$)/g, "$1 ")));
}

/** preview shows the exact bytes the query sends, and inner layers. */
function preview() {
  const box = $("b-preview");
  const built = ql.buildQuery($("b-protocol").value, options());
  if (built.error) {
    box.replaceChildren(h("div", { class: "err", role: "alert" }, built.error.message));
    return null;
  }
  const out = [];
  const unheld = masterOverTCP(built.protocol, options());
  if (unheld) out.push(h("div", { class: "muted", "data-testid": "preview-note" }, unheld));
  // A stream protocol's request goes on a TCP connection the relay opens.
  const wire = streamed(built.protocol, options()) ? "request on the TCP stream" : "datagram on the wire";
  for (const [i, dg] of built.datagrams.entries()) {
    const m = ql.inspect(built.protocol, dg);
    const msg = m.error ? m.partial : m;
    const layers = msg?.layers ?? [];
    // Inner layers first (the payload the protocol defines), then the
    // datagram as it goes on the wire.
    for (const l of layers.slice(1).reverse()) out.push(bytesLine(`${l.name}${built.datagrams.length > 1 ? ` ${i + 1}` : ""}`, parseHex(l.hex)));
    out.push(bytesLine(`${wire}${built.datagrams.length > 1 ? ` ${i + 1}` : ""}`, dg));
  }
  box.replaceChildren(...out);
  return built;
}

$("b-protocol").addEventListener("change", () => { renderOptions(); preview(); });
$("b-options").addEventListener("input", () => preview());
$("b-options").addEventListener("change", () => preview());

$("b-add").addEventListener("click", () => {
  const built = preview();
  if (!built) return;
  const g = ++groups;
  const target = $("b-target").value.trim();
  if (streamed(built.protocol, options())) {
    // A TCP request, as the relay would write it to the target (named in
    // Minecraft's handshake) when the target is a host:port.
    const t = targetOf(target, built.protocol);
    const data = t ? streamRequest(built.protocol, t, options()) : join(built.datagrams);
    addPacket({ direction: "sent", data, protocol: built.protocol, target, group: g, transport: "tcp", stream: g });
  } else {
    for (const dg of built.datagrams) addPacket({ direction: "sent", data: dg, protocol: built.protocol, target, group: g });
  }
  select(packets.length - 1);
});

/**
 * targetOf reads a typed server address as the server does (the module's
 * hostPort: package ident), adding proto's default port when it has none:
 * "host:port" in canonical form, or null when it is not one.
 * @param {string} text
 * @param {string} proto
 * @returns {string|null}
 */
function targetOf(text, proto) {
  const a = ql?.hostPort(text, protocols.find((p) => p.name === proto)?.default_port);
  return typeof a === "string" ? a : null;
}

$("build-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const proto = $("b-protocol").value;
  const target = targetOf($("b-target").value, proto);
  if (!target) {
    status("Enter a target as host:port.", true);
    $("b-target").focus();
    return;
  }
  const unheld = masterOverTCP(proto, options());
  if (unheld) {
    status(unheld, true);
    return;
  }
  const g = ++groups;
  $("b-send").disabled = true;
  status(`Asking ${target}…`);
  if (streamed(proto, options())) {
    await askStream(proto, target, options(), g);
    $("b-send").disabled = false;
    return;
  }
  const res = await converse(ql, relay, proto, target, options(), {
    timeoutMs: replyTimeout(relay, 2000),
    onPacket: (p) => {
      addPacket({ ...p, group: g });
      if (p.direction === "received" && (selected < 0 || packets[selected].group !== g || packets[selected].direction === "sent")) select(packets.length - 1);
    },
  });
  $("b-send").disabled = false;
  const { state, detail } = classify(res);
  if (!res.replies) status(`${target}: ${state}. ${detail}`, true);
  else status(`${target}: ${state}${detail ? ". " + detail : ""} · ${res.replies} datagram${res.replies > 1 ? "s" : ""}, ${Math.round(res.rtt)} ms${res.cached ? " (from the relay's cache)" : ""}`, state !== State.online);
  if (res.replies > 1) $("whole").checked = true;
  if (selected >= 0) showPacket();
});

// ---- a TCP exchange ----

/**
 * streamed says whether proto with opts is a stream (TCP) protocol's
 * conversation, which the relay holds itself (EXCHANGE), as the module's
 * conversation says (codecs.NewConversation).
 * @param {string} proto
 * @param {Record<string, string>} opts
 */
function streamed(proto, opts) {
  const conv = ql.newQuery(proto, opts);
  if (conv.error) return false;
  const s = conv.stream;
  conv.close();
  return s;
}

/**
 * masterOverTCP says why proto with opts cannot be asked through the relay
 * when they ask a master it does not hold (cfg.tcpMasters: over TCP,
 * speaking first with a challenge), else "".
 * @param {string} proto
 * @param {Record<string, string>} opts
 */
function masterOverTCP(proto, opts) {
  const sel = cfg.tcpMasters?.[proto];
  if (!sel || !Object.entries(sel).every(([k, v]) => opts[k] === v)) return "";
  const title = protocols.find((p) => p.name === proto)?.title ?? proto;
  const game = opts.gamename ? ` --game ${opts.gamename}` : "";
  return `A ${title} master speaks TCP and first, with a challenge: the relay does not hold that conversation, so this page cannot ask it. ` +
    `The querylens server keeps such masters' lists (the browse page shows them); from a terminal: querylens master -p ${proto}${game} HOST:PORT`;
}

/**
 * streamRequest is the request a stream protocol's exchange writes, as
 * the relay's codec builds it: with the target's host and port among the
 * options, for a protocol whose query carries them (Minecraft's
 * handshake), else with opts alone. The relay builds its own; this is the
 * record of it. Empty when the server speaks first.
 * @param {string} proto
 * @param {string} target host:port, canonical
 * @param {Record<string, string>} opts
 */
function streamRequest(proto, target, opts) {
  const colon = target.lastIndexOf(":");
  const host = target.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  let conv = ql.newQuery(proto, { ...opts, host, port: target.slice(colon + 1) });
  if (conv.error) conv = ql.newQuery(proto, opts);
  if (conv.error) return new Uint8Array(0);
  const out = join(conv.start());
  conv.close();
  return out;
}

/**
 * join puts buffers end to end.
 * @param {Uint8Array[]} parts
 */
function join(parts) {
  const out = new Uint8Array(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of parts) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/**
 * joinChunks joins a stream's chunks in offset order. gap says a chunk did
 * not start where the one before it stopped (the relay sends them in
 * order, so this is a relay's or a page's fault, shown, never hidden).
 * @param {Map<number, Uint8Array>} chunks by offset
 */
function joinChunks(chunks) {
  const offsets = [...chunks.keys()].sort((a, b) => a - b);
  let next = 0;
  let gap = false;
  for (const o of offsets) {
    if (o !== next) gap = true;
    next = o + chunks.get(o).length;
  }
  return { data: join(offsets.map((o) => chunks.get(o))), gap };
}

/** END_OK is the END reason of a stream that stopped because the reply was whole. */
const END_OK = "done";

/**
 * endText words an exchange's END reason (RelayEndName) for the list and
 * the status line.
 * @type {Record<string, string>}
 */
const endText = {
  cap: "the reply passed the relay's cap and was cut",
  timeout: "the server did not finish within the relay's deadline",
  closed: "the server closed the connection before the reply was whole",
  refused: "the server refused the connection",
  "slow-client": "this page read the chunks too slowly and the relay stopped",
  malformed: "the reply's framing was malformed and the relay stopped",
  cancelled: "the exchange was cancelled",
  gap: "bytes are missing from the stream (a chunk that did not start where the one before stopped, or segments the capture lacks)",
  cut: "the turn was longer than the capture reader keeps (512 KiB); the rest was dropped",
  page: "the relay sent nothing more and did not end the exchange; the page stopped waiting",
};

/**
 * askStream runs one exchange of a stream (TCP) protocol through the
 * relay (EXCHANGE): the session gets the request the relay writes and ONE
 * reply, the CHUNKs joined in offset order as they come, decoded whole
 * (the module cuts a stream's reply into its messages); END's reason is
 * shown on the reply when it is not done. It resolves when the exchange
 * ended, never rejects.
 * @param {string} proto
 * @param {string} target
 * @param {Record<string, string>} opts
 * @param {number} g the group, and the exchange's stream number
 * @returns {Promise<void>}
 */
function askStream(proto, target, opts, g) {
  const request = streamRequest(proto, target, opts);
  if (request.length) addPacket({ direction: "sent", data: request, protocol: proto, target, group: g, transport: "tcp", stream: g });
  /** @type {Map<number, Uint8Array>} */
  const chunks = new Map();
  /** @type {Packet|null} */
  let reply = null;
  let sentAt = performance.now();
  return new Promise((resolve) => {
    let over = false;
    /** @param {string} reason @param {{code: string, message: string}|null} err */
    const finish = (reason, err) => {
      if (over) return;
      over = true;
      clearTimeout(guard);
      if (reply) {
        const { gap } = joinChunks(chunks);
        reply.end = gap && reason === END_OK ? "gap" : reason;
        showRow(reply);
        classifyPacket(reply);
      }
      const got = reply ? `${reply.data.length} bytes in ${reply.chunks} chunk${reply.chunks === 1 ? "" : "s"} over TCP, ${Math.round(reply.rtt ?? 0)} ms${reply.cached ? " (from the relay's cache)" : ""}` : "";
      if (err) status(`${target}: ${err.code}: ${err.message}${got ? ` · ${got}` : ""}`, true);
      else if (!reply) status(`${target}: no reply over TCP (${reason}${endText[reason] ? `: ${endText[reason]}` : ""}).`, true);
      else if (reply.end !== END_OK) status(`${target}: ${got} · ⚠ ${reply.end}: ${endText[reply.end] ?? "the exchange stopped early"}.`, true);
      else status(`${target}: ${got}.`);
      // As after a datagram query, the decode of what is selected has
      // the last word (with the END's warning on a reply cut short).
      if (reply && selected >= 0) showPacket();
      resolve();
    };
    // The relay ends every exchange within its deadline; this only guards
    // a relay that never does, and waits again after each chunk (a
    // server that sends slowly is still sending).
    const wait = Math.max(replyTimeout(relay, 2000), 8000);
    const stop = () => {
      relay.cancel(id);
      finish("page", null);
    };
    let guard = setTimeout(stop, wait);
    const id = relay.exchange(proto, target, opts, {
      sent() {
        sentAt = performance.now();
      },
      /** @param {Uint8Array} bytes @param {number} offset @param {number} flags */
      chunk(bytes, offset, flags) {
        if (over) return;
        if (reply && packets[reply.n - 1] !== reply) return; // the list was cleared
        clearTimeout(guard);
        guard = setTimeout(stop, wait);
        chunks.set(offset, bytes);
        const { data } = joinChunks(chunks);
        if (!reply) {
          reply = addPacket({ direction: "received", data, protocol: proto, target, group: g, rtt: performance.now() - sentAt,
            cached: (flags & 1) !== 0, transport: "tcp", stream: g, chunks: 1, end: "" });
          if (selected < 0 || packets[selected].group !== g || packets[selected].direction === "sent") select(packets.length - 1);
          return;
        }
        reply.data = data;
        reply.chunks = chunks.size;
        showRow(reply);
        if (packets[selected] === reply) showPacket();
      },
      /** @param {string} reason */
      end(reason) {
        finish(reason, null);
      },
      /** @param {string} code @param {string} message */
      error(code, message) {
        finish(reply ? "error" : code, { code, message });
      },
    });
  });
}

// ---- paste and permalink ----

$("paste-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const lines = $("paste-hex").value.split(/[\n,]+/).map((l) => l.trim()).filter(Boolean);
  let dgs;
  try {
    dgs = lines.map(parseHex).filter((b) => b.length);
  } catch (err) {
    status(`Paste: ${err.message}`, true);
    return;
  }
  if (!dgs.length) {
    status("Paste some hex first.", true);
    return;
  }
  addGroup($("paste-protocol").value || null, dgs, null, "", "pasted");
});

/**
 * addGroup adds datagrams that did not cross the relay here (pasted, or
 * opened from a link that says what they were) and the query they answer,
 * and shows the first.
 * @param {string|null} protocol
 * @param {Uint8Array[]} dgs
 * @param {Uint8Array|null} query
 * @param {string} target
 * @param {Packet["direction"]} direction what dgs were: "received" from target, "sent" to it, or "pasted"
 * @param {Packet["transport"]} [transport] "tcp": a TCP exchange's request and reply (its stream, whole)
 */
function addGroup(protocol, dgs, query, target, direction, transport = "udp") {
  const g = ++groups;
  const first = packets.length + (query ? 1 : 0);
  const tcp = transport === "tcp" ? { transport, stream: g, end: END_OK, chunks: 1 } : {};
  if (query) addPacket({ direction: "sent", data: query, protocol, target, group: g, ...tcp });
  for (const d of dgs) addPacket({ direction, data: d, protocol, target, group: g, ...tcp });
  $("whole").checked = dgs.length > 1 && transport !== "tcp";
  select(first);
}

/** linkDirections are the values of a link's d=: what its h= datagrams were. */
const linkDirections = ["received", "sent", "pasted"];
/** linkTransports are the values of a link's tr=: "tcp" when its h= is a TCP exchange's reply (or request) whole. */
const linkTransports = ["udp", "tcp"];

/**
 * linkOrigin says, above the packet list, what a link's datagrams were.
 * @param {Packet["direction"]} direction
 * @param {number} n the number of datagrams
 * @param {string} target
 * @param {boolean} query whether the link carried the query they answer
 * @param {boolean} [tcp] whether they are a TCP exchange's
 */
function linkOrigin(direction, n, target, query, tcp = false) {
  const dgs = tcp ? (n === 1 ? "1 reply over TCP" : `${n} replies over TCP`) : n === 1 ? "1 datagram" : `${n} datagrams`;
  const server = target || "a server";
  let text;
  if (direction === "received") text = `${dgs} received from ${server}${query ? ", after the query sent to it" : ""}.`;
  else if (direction === "sent") text = `${n === 1 ? "the query" : dgs} sent to ${server}.`;
  else text = `${dgs} pasted; where ${n === 1 ? "it" : "they"} came from is not recorded.`;
  const el = $("packets-origin");
  el.textContent = `Opened from a link: ${text}`;
  el.hidden = false;
}

/** LINK_MAX is the longest permalink offered; a longer one is refused with a reason. */
const LINK_MAX = 16000;

function permalink() {
  if (capShown) return capturePermalink();
  const p = packets[selected];
  if (!p) return location.href.split("#")[0];
  const inGroup = packets.filter((x) => x.group === p.group);
  const replies = inGroup.filter((x) => x.direction !== "sent");
  const query = inGroup.filter((x) => x.direction === "sent").at(-1);
  const shown = replies.length ? replies : [p];
  let frag = `#p=${encodeURIComponent(p.protocol ?? "")}`;
  if (p.target) frag += `&t=${encodeURIComponent(p.target)}`;
  if (query && replies.length) frag += `&q=${toHex(query.data)}`;
  frag += `&h=${shown.map((x) => toHex(x.data)).join(",")}`;
  if (p.transport === "tcp") frag += "&tr=tcp";
  // What the datagrams were; a link without d= (the status page's and the
  // server browser's) carries what target answered, or, with no target,
  // a paste.
  if (shown[0].direction !== (p.target ? "received" : "pasted")) frag += `&d=${shown[0].direction}`;
  return location.origin + location.pathname + location.search + frag;
}

function fromFragment() {
  const f = new URLSearchParams(location.hash.slice(1));
  const hx = f.get("h");
  if (!hx) return false;
  try {
    const dgs = hx.split(",").filter(Boolean).map(parseHex);
    const q = f.get("q") ? parseHex(f.get("q")) : null;
    const target = f.get("t") ?? "";
    const d = f.get("d") ?? (target ? "received" : "pasted");
    if (!linkDirections.includes(d)) {
      status(`The link's d=${d} is not one of ${linkDirections.join(", ")}.`, true);
      return false;
    }
    const tr = f.get("tr") ?? "udp";
    if (!linkTransports.includes(tr)) {
      status(`The link's tr=${tr} is not one of ${linkTransports.join(", ")}.`, true);
      return false;
    }
    const direction = /** @type {Packet["direction"]} */ (d);
    const transport = /** @type {Packet["transport"]} */ (tr);
    addGroup(f.get("p") || null, dgs, direction === "received" ? q : null, target, direction, transport);
    linkOrigin(direction, dgs.length, target, direction === "received" && q !== null, transport === "tcp");
    return true;
  } catch (err) {
    status(`The link's packets are not valid hex: ${err.message}`, true);
    return false;
  }
}

/**
 * capturePermalink links the shown capture datagram: a query alone, or an
 * answer with the query it answers, as a status page's link would.
 */
function capturePermalink() {
  const c = capShown;
  let frag = `#p=${encodeURIComponent(c.protocol ?? "")}&t=${encodeURIComponent(c.target)}`;
  if (c.direction === "received" && c.query) frag += `&q=${toHex(c.query)}`;
  frag += `&h=${(c.direction === "received" ? c.answer : [c.data]).map(toHex).join(",")}`;
  if (c.direction === "sent") frag += "&d=sent";
  if (c.transport === "tcp") frag += "&tr=tcp";
  return location.origin + location.pathname + location.search + frag;
}

$("permalink").addEventListener("click", async (e) => {
  const url = permalink();
  const b = e.currentTarget;
  if (url.length > LINK_MAX) {
    status(`This datagram's link would be ${url.length} characters, too long for a URL (at most ${LINK_MAX}): export it as pcapng instead.`, true);
    b.textContent = "Too large for a link";
    setTimeout(() => (b.textContent = "Copy permalink"), 2500);
    return;
  }
  history.replaceState(null, "", url);
  b.textContent = (await copyText(url)) ? "Copied" : "Copy failed";
  setTimeout(() => (b.textContent = "Copy permalink"), 1500);
});

$("export").addEventListener("click", () => {
  if (capShown && !$("capture").hidden) {
    exportCaptureTurn();
    return;
  }
  if (!packets.length) return;
  // A TCP exchange's request and reply are written as the bytes of one
  // TCP connection (its stream), a datagram as UDP.
  const file = ql.pcapng(packets.map((p) => ({
    time: p.time, direction: p.direction === "received" ? "received" : "sent", target: p.target || "0.0.0.0:0", data: p.data,
    comment: `${p.protocol ?? "unknown"} ${p.kind}${p.direction === "pasted" ? " (pasted)" : ""}${p.transport === "tcp" && p.end && p.end !== END_OK ? ` (TCP ${p.end})` : ""}`,
    transport: p.transport, stream: p.stream,
  })));
  if (file.error) { status(file.error.message, true); return; }
  download(file, "application/vnd.tcpdump.pcap", `querylens-${new Date().toISOString().replace(/[:.]/g, "-")}.pcapng`);
});

$("clear").addEventListener("click", () => {
  packets.length = 0;
  selected = -1;
  $("packet-rows").replaceChildren();
  $("packets-empty").hidden = false;
  $("packets-origin").hidden = true;
  $("hex").replaceChildren();
  $("tree").replaceChildren();
  $("layers").replaceChildren();
  status("");
  history.replaceState(null, "", location.pathname + location.search);
});

$("whole").addEventListener("change", () => showPacket());

// ---- packet list ----

/**
 * addPacket adds a packet to the session's list and returns it.
 * @param {Partial<Packet> & {direction: Packet["direction"], data: Uint8Array, group: number}} p
 * @returns {Packet}
 */
function addPacket(p) {
  /** @type {Packet} */
  const pk = {
    n: packets.length + 1, time: p.time ?? Date.now(), direction: p.direction, data: p.data,
    protocol: p.protocol ?? null, kind: "…", rtt: p.rtt ?? null, target: p.target ?? "", group: p.group, cached: !!p.cached,
    transport: p.transport ?? "udp", stream: p.stream ?? 0, chunks: p.chunks ?? 0, end: p.end ?? "",
  };
  packets.push(pk);
  const i = packets.length - 1;
  const t0 = packets[0].time;
  const row = h("tr", { "data-i": String(i), tabindex: "-1", "aria-selected": "false", "data-testid": "packet-row" },
    h("td", { class: "num" }, String(pk.n)),
    h("td", {}, `+${((pk.time - t0) / 1000).toFixed(3)}`),
    h("td", { class: `dir-${pk.direction}` }),
    h("td", { class: "num" }),
    h("td", {}, pk.protocol ?? "?"),
    h("td", {}, pk.kind),
    h("td", { class: "num" }, pk.rtt != null ? `${pk.rtt.toFixed(1)} ms${pk.cached ? "*" : ""}` : ""),
    h("td", {}, pk.target));
  $("packet-rows").append(row);
  $("packets-empty").hidden = true;
  showRow(pk);
  // Classify after the current work, so a shared capture decodes first;
  // a TCP reply once it is whole (askStream).
  if (pk.transport !== "tcp" || pk.direction !== "received" || pk.end) setTimeout(() => classifyPacket(pk));
  return pk;
}

/**
 * rowOf is a packet's row in the list, or null when the list no longer
 * holds the packet (cleared while its exchange went on).
 * @param {Packet} pk
 * @returns {HTMLTableRowElement|null}
 */
function rowOf(pk) {
  if (packets[pk.n - 1] !== pk) return null;
  return $("packet-rows").querySelector(`tr[data-i="${pk.n - 1}"]`);
}

/**
 * showRow writes a packet's direction and size cells: a TCP packet gets a
 * TCP badge, its stream and, for a reply, its chunks and the END reason
 * when the stream did not stop because the reply was whole.
 * @param {Packet} pk
 */
function showRow(pk) {
  const row = rowOf(pk);
  if (!row) return;
  const dir = pk.direction === "sent" ? "→ sent" : pk.direction === "received" ? "← recv" : "pasted";
  const dirCell = row.cells[2];
  if (pk.transport !== "tcp") {
    dirCell.replaceChildren(dir);
    row.cells[3].textContent = String(pk.data.length);
    return;
  }
  dirCell.replaceChildren(dir, " ", h("span", { class: "tag", "data-testid": "tcp-badge", title: `TCP, exchange ${pk.stream}` }, "TCP"));
  if (pk.end && pk.end !== END_OK) {
    dirCell.append(h("span", { class: "tag synthetic", "data-testid": "tcp-end", role: "img", "aria-label": `stopped: ${pk.end}`, title: endText[pk.end] ?? pk.end }, `⚠ ${pk.end}`));
  }
  row.cells[3].textContent = String(pk.data.length);
  row.cells[3].title = pk.direction === "received" ? `${pk.data.length} bytes in ${pk.chunks} chunk${pk.chunks === 1 ? "" : "s"}${pk.end ? "" : ", still coming"}` : `${pk.data.length} bytes`;
}

/**
 * classifyPacket fills a packet's protocol and kind cells: a datagram by
 * detection, a TCP packet by decoding it whole (a stream's bytes are not
 * one datagram detection knows).
 * @param {Packet} pk
 */
function classifyPacket(pk) {
  const row = rowOf(pk);
  if (pk.transport === "tcp" && pk.protocol) {
    const query = pk.direction === "received" ? packets.find((x) => x.group === pk.group && x.direction === "sent") : null;
    const res = ql.decode(pk.protocol, pk.data, query ? { query: query.data } : {});
    const msg = res.error ? res.partial : res;
    pk.kind = `${msg?.kind ?? "?"}${res.error ? " ✖" : ""}`;
  } else {
    const det = ql.detect(pk.data);
    pk.kind = det.error ? "?" : det.kind;
    pk.protocol ??= det.error ? null : det.protocol;
  }
  if (!row) return;
  row.cells[5].textContent = pk.kind;
  row.cells[4].textContent = pk.protocol ?? "?";
}

$("packet-rows").addEventListener("click", (e) => {
  const tr = e.target.closest("tr[data-i]");
  if (tr) select(Number(tr.dataset.i));
});
$("packet-rows").addEventListener("keydown", (e) => {
  const d = { ArrowDown: 1, ArrowUp: -1 }[e.key];
  if (d == null) return;
  e.preventDefault();
  select(Math.max(0, Math.min(packets.length - 1, selected + d)));
});

function select(i) {
  if (!packets[i]) return;
  capShown = null;
  showList("session");
  selected = i;
  layerIndex = -1;
  pinned = -1;
  cursor = { start: -1, end: -1, anchor: -1 };
  for (const tr of $("packet-rows").rows) {
    const on = Number(tr.dataset.i) === i;
    tr.setAttribute("aria-selected", String(on));
    tr.tabIndex = on ? 0 : -1;
    if (on && document.activeElement?.closest?.("#packet-rows")) tr.focus();
    if (on) tr.scrollIntoView({ block: "nearest" });
  }
  showPacket();
}

// ---- dissection ----

function status(text, bad = false) {
  const el = $("decode-status");
  el.textContent = text;
  el.classList.toggle("bad", bad);
}

/** decodeSelected decodes the selected packet, or its whole message. */
function decodeSelected() {
  if (capShown) {
    const c = capShown;
    const whole = $("whole").checked && c.direction !== "sent" && c.answer.length > 1;
    return ql.inspect(c.protocol, whole ? c.answer : [c.data], c.query && c.direction !== "sent" ? { query: c.query } : {});
  }
  const p = packets[selected];
  const inGroup = packets.filter((x) => x.group === p.group);
  const query = inGroup.filter((x) => x.direction === "sent").at(-1);
  let dgs = [p.data];
  // A TCP reply is one buffer already: the module cuts it into messages.
  const whole = $("whole").checked && p.direction !== "sent" && p.transport !== "tcp";
  if (whole) dgs = inGroup.filter((x) => x.direction !== "sent").map((x) => x.data);
  const opts = query && p.direction !== "sent" ? { query: query.data } : {};
  return ql.inspect(p.protocol, dgs, opts);
}

function showPacket() {
  const p = capShown ?? packets[selected];
  if (!p) return;
  const res = decodeSelected();
  markFirstDecode();
  const msg = res.error ? res.partial ?? {} : res;
  let layers = (msg.layers ?? []).map((l) => ({ name: l.name, bytes: parseHex(l.hex), parent: l.parent }));
  if (!layers.length) layers = [{ name: "wire", bytes: p.data, parent: -1 }];
  const spans = msg.spans ?? [];
  current = { res, msg, layers, spans, error: res.error ?? null, label: capShown ? capShown.label : `#${packets[selected].n} ${packets[selected].direction}` };
  if (layerIndex < 0 || layerIndex >= layers.length) {
    // Open the layer that has the fields: the error's layer, else the one
    // with the most spans (Zandronum's payload rather than its wire form).
    const errLayer = res.error?.layer ? layers.findIndex((l) => l.name === res.error.layer) : -1;
    const count = layers.map((_, i) => spans.filter((s) => s.layer === i).length);
    layerIndex = errLayer >= 0 ? errLayer : count.indexOf(Math.max(...count));
  }
  const kind = msg.kind ? `${msg.protocol ?? p.protocol ?? "?"} ${msg.kind}${msg.denied ? ` (${msg.denied})` : ""}` : "";
  // A TCP stream that stopped before the reply was whole says why.
  const cut = p.transport === "tcp" && p.end && p.end !== END_OK ? ` · ⚠ ${p.end}: ${endText[p.end] ?? "the exchange stopped early"}` : "";
  if (res.error) {
    const e = res.error;
    status(`✖ ${e.protocol ? e.protocol + ": " : ""}${e.field ? `${e.field} at offset ${e.offset}${e.layer ? ` of ${e.layer}` : ""}: ` : ""}${e.message}${kind ? ` — showing what decoded (${kind})` : ""}${cut}`, true);
  } else {
    status(`${kind}${msg.info?.name ? ` · ${msg.info.name.replace(/\x1c(\[[^\]]*\]|.)?/g, "")}` : ""}${msg.servers ? ` · ${msg.servers.length} servers` : ""}${msg.warnings?.length ? ` · warnings: ${msg.warnings.join(", ")}` : ""}${cut}`, !!cut);
  }
  renderTabs();
  renderLayer();
}

function renderTabs() {
  const tabs = $("layers");
  tabs.replaceChildren(...current.layers.map((l, i) => h("button", {
    type: "button", role: "tab", id: `tab-${i}`, "aria-selected": String(i === layerIndex), tabindex: i === layerIndex ? "0" : "-1",
    "aria-controls": "hex", "data-testid": "layer-tab", onclick: () => { layerIndex = i; pinned = -1; cursor = { start: -1, end: -1, anchor: -1 }; renderTabs(); renderLayer(); },
  }, `${l.name} (${l.bytes.length})`)));
}

$("layers").addEventListener("keydown", (e) => {
  const d = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
  if (d == null || !current) return;
  layerIndex = (layerIndex + d + current.layers.length) % current.layers.length;
  cursor = { start: -1, end: -1, anchor: -1 };
  renderTabs();
  renderLayer();
  $(`tab-${layerIndex}`).focus();
});

/** errorRange is where the decoding error sits in this layer, if it does. */
function errorRange() {
  const e = current.error;
  if (!e || e.offset == null) return null;
  const li = e.layer ? current.layers.findIndex((l) => l.name === e.layer) : current.layers.length - 1;
  if (li !== layerIndex) return null;
  const n = current.layers[li].bytes.length;
  return [Math.min(e.offset, n), n];
}

function renderLayer() {
  const layer = current.layers[layerIndex];
  const bytes = layer.bytes;
  const spans = current.spans.map((s, i) => ({ ...s, i })).filter((s) => s.layer === layerIndex);
  // owner[o] is the innermost span holding byte o: paint larger spans first.
  const owner = new Int32Array(bytes.length).fill(-1);
  const bySize = [...spans].sort((a, b) => (b.end - b.start) - (a.end - a.start));
  for (const s of bySize) for (let o = Math.max(0, s.start); o < Math.min(bytes.length, s.end); o++) owner[o] = s.i;
  current.owner = owner;
  // Colour leaf fields in turn, so neighbouring fields are told apart.
  const colour = new Map();
  let c = 0;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) if (s.kind !== "group") colour.set(s.i, c++ % 6);
  const err = errorRange();

  let html = "";
  for (let row = 0; row < Math.max(1, Math.ceil(bytes.length / 16)); row++) {
    let hx = "";
    let as = "";
    for (let k = 0; k < 16; k++) {
      const o = row * 16 + k;
      const gap = k === 7 ? " g" : "";
      if (o >= bytes.length) { hx += `<span class="x${gap}">  </span>${k < 15 ? " " : ""}`; continue; }
      const b = bytes[o];
      const own = owner[o];
      const cls = err && o >= err[0] ? "err" : own >= 0 && colour.has(own) ? `f${colour.get(own)}` : "";
      hx += `<span class="x ${cls}${gap}" data-o="${o}">${b.toString(16).padStart(2, "0")}</span>${k < 15 ? " " : ""}`;
      as += `<span class="a ${cls}" data-o="${o}">${b >= 0x20 && b < 0x7f ? esc(String.fromCharCode(b)) : "."}</span>`;
    }
    html += `<div class="line"><span class="off">${(row * 16).toString(16).padStart(4, "0")}</span><span>${hx}</span><span>${as}</span></div>`;
  }
  $("hex").innerHTML = html;
  renderTree(spans, err);
  showCursor();
}

function renderTree(spans, err) {
  const tree = $("tree");
  tree.replaceChildren();
  // Nest by containment: a span inside an earlier, larger one is its child.
  const sorted = [...spans].sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start) || a.i - b.i);
  const stack = [{ end: Infinity, el: tree, level: 0 }];
  for (const s of sorted) {
    while (stack.length > 1 && (s.start >= stack.at(-1).end || s.end > stack.at(-1).end)) stack.pop();
    const parent = stack.at(-1);
    const name = s.field.slice(s.field.lastIndexOf(".") + 1) || s.field;
    const isGroup = spans.some((x) => x !== s && x.start >= s.start && x.end <= s.end && (x.end - x.start) < (s.end - s.start));
    const node = h("div", {
      class: "node", role: "treeitem", tabindex: "-1", "aria-level": String(parent.level + 1), "data-s": String(s.i),
      "aria-expanded": isGroup ? "true" : null, title: `${s.field} · ${s.kind} · bytes ${s.start}–${s.end - 1}`, "data-testid": "tree-row",
    },
    h("span", { class: "tw", "aria-hidden": "true" }, isGroup ? "▾" : ""),
    h("span", { class: "fn" }, name),
    h("span", { class: "fv" }, s.kind === "group" ? "" : visible(s.value)),
    h("span", { class: "fk" }, s.kind),
    h("span", { class: "fr" }, `${s.start}:${s.end}`));
    parent.el.append(node);
    if (isGroup) {
      const g = h("div", { role: "group" });
      parent.el.append(g);
      stack.push({ end: s.end, el: g, level: parent.level + 1 });
    }
  }
  if (err) {
    const e = current.error;
    tree.append(h("div", { class: "node errnode", role: "treeitem", tabindex: "-1", "aria-level": "1", "data-err": "1", "data-testid": "tree-error" },
      h("span", { class: "tw" }, "✖"), h("span", { class: "fn" }, e.field || "error"), h("span", { class: "fv" }, e.message), h("span", { class: "fr" }, `at ${e.offset}`)));
  }
  if (!spans.length && !err) tree.append(h("p", { class: "muted small" }, "No fields in this layer."));
  const first = tree.querySelector(".node");
  if (first) first.tabIndex = 0;
}

/** visible shows control characters (colour escapes) as \xNN. */
function visible(v) {
  return String(v).replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

// ---- the two-way link between hex and tree ----

function spanRange(i) {
  const s = current.spans[i];
  return [s.start, s.end];
}

function paint(cls, i) {
  for (const el of document.querySelectorAll(`#hex .${cls}, #tree .${cls}`)) el.classList.remove(cls);
  if (i == null || i < 0) return;
  const [a, b] = spanRange(i);
  for (const el of $("hex").querySelectorAll("[data-o]")) {
    const o = Number(el.dataset.o);
    if (o >= a && o < b) el.classList.add(cls);
  }
  $("tree").querySelector(`[data-s="${i}"]`)?.classList.add(cls);
}

$("tree").addEventListener("mouseover", (e) => {
  const n = e.target.closest("[data-s]");
  paint("hl", n ? Number(n.dataset.s) : -1);
});
$("tree").addEventListener("mouseleave", () => paint("hl", -1));
$("hex").addEventListener("mouseover", (e) => {
  const el = e.target.closest("[data-o]");
  const i = el ? current.owner[Number(el.dataset.o)] : -1;
  paint("hl", i);
});
$("hex").addEventListener("mouseleave", () => paint("hl", -1));

function pin(i, from) {
  pinned = i;
  paint("sel", i);
  if (i < 0) return;
  const node = $("tree").querySelector(`[data-s="${i}"]`);
  if (from !== "tree") node?.scrollIntoView({ block: "nearest" });
  const [a] = spanRange(i);
  if (from !== "hex") $("hex").querySelector(`[data-o="${a}"]`)?.scrollIntoView({ block: "nearest" });
}

$("tree").addEventListener("click", (e) => {
  const n = e.target.closest("[data-s]");
  if (!n) return;
  if (e.target.closest(".tw") && n.hasAttribute("aria-expanded")) {
    n.setAttribute("aria-expanded", String(n.getAttribute("aria-expanded") !== "true"));
    return;
  }
  focusNode(n);
  pin(Number(n.dataset.s), "tree");
  const [a, b] = spanRange(Number(n.dataset.s));
  setCursor(a, b);
});
$("hex").addEventListener("click", (e) => {
  const el = e.target.closest("[data-o]");
  if (!el) return;
  const o = Number(el.dataset.o);
  if (e.shiftKey && cursor.anchor >= 0) setCursor(Math.min(cursor.anchor, o), Math.max(cursor.anchor, o) + 1, cursor.anchor);
  else setCursor(o, o + 1, o);
  pin(current.owner[o], "hex");
});

// ---- the data inspector: the bytes at the cursor as numbers and text ----

/**
 * setCursor selects bytes [start, end) of the shown layer, and the data
 * inspector follows.
 * @param {number} start
 * @param {number} end
 * @param {number} [anchor] where a shift-click extends from
 */
function setCursor(start, end, anchor = start) {
  cursor = { start, end, anchor };
  showCursor();
}

function showCursor() {
  for (const el of $("hex").querySelectorAll(".cur, .rng")) el.classList.remove("cur", "rng");
  const bytes = current?.layers[layerIndex]?.bytes;
  const body = $("data-values").tBodies[0];
  if (!bytes || cursor.start < 0 || cursor.start >= bytes.length) {
    $("data-values").hidden = true;
    $("data-empty").hidden = false;
    body.replaceChildren();
    return;
  }
  for (const el of $("hex").querySelectorAll("[data-o]")) {
    const o = Number(el.dataset.o);
    if (o === cursor.start) el.classList.add("cur");
    else if (o > cursor.start && o < cursor.end) el.classList.add("rng");
  }
  body.replaceChildren(...dataValues(bytes, cursor.start, cursor.end).map((v) =>
    h("tr", { "data-name": v.name }, h("th", { scope: "row" }, v.name), h("td", {}, v.value))));
  $("data-values").hidden = false;
  $("data-empty").hidden = true;
}

function visibleNodes() {
  return [...$("tree").querySelectorAll(".node")].filter((n) => n.offsetParent !== null);
}

function focusNode(n) {
  for (const x of $("tree").querySelectorAll(".node[tabindex='0']")) x.tabIndex = -1;
  n.tabIndex = 0;
  n.focus();
}

$("tree").addEventListener("keydown", (e) => {
  const n = e.target.closest(".node");
  if (!n) return;
  const nodes = visibleNodes();
  const at = nodes.indexOf(n);
  const expanded = n.getAttribute("aria-expanded");
  let next = null;
  switch (e.key) {
    case "ArrowDown": next = nodes[at + 1]; break;
    case "ArrowUp": next = nodes[at - 1]; break;
    case "Home": next = nodes[0]; break;
    case "End": next = nodes.at(-1); break;
    case "ArrowRight": if (expanded === "false") n.setAttribute("aria-expanded", "true"); else next = nodes[at + 1]; break;
    case "ArrowLeft":
      if (expanded === "true") n.setAttribute("aria-expanded", "false");
      else next = n.parentElement.closest("[role=group]")?.previousElementSibling ?? null;
      break;
    case "Enter": case " ": if (n.dataset.s) pin(Number(n.dataset.s), "tree"); break;
    default: return;
  }
  e.preventDefault();
  if (next) {
    focusNode(next);
    paint("hl", next.dataset.s ? Number(next.dataset.s) : -1);
  }
});

// ---- edit and resend ----

/** The edited datagram, as last parsed from the hex box. @type {Uint8Array} */
let edited = new Uint8Array(0);
/** The edited datagram's layers as last decoded (for fields of inner layers). @type {{name: string, bytes: Uint8Array}[]} */
let editedLayers = [];

/**
 * coders code an inner layer again, by the coding its protocol's
 * description names (cfg.wrapped).
 * @type {Record<string, (bytes: Uint8Array) => Uint8Array>}
 */
const coders = { huffman: (bytes) => ql.huffman("encode", bytes) };

/**
 * wrapLayer rebuilds the wire form of a protocol whose fields sit in an
 * inner layer the wire carries coded (a Zandronum datagram is its payload
 * Huffman-coded), as the page's configuration says them. Fields of other
 * inner layers are shown, not edited.
 * @type {Record<string, (layer: string, bytes: Uint8Array) => Uint8Array|null>}
 */
const wrapLayer = Object.fromEntries(
  Object.entries(cfg.wrapped ?? {}).map(([p, layers]) => [p, (/** @type {string} */ layer, /** @type {Uint8Array} */ bytes) => coders[layers[layer]]?.(bytes) ?? null]),
);

/**
 * editKind is how a field of this span kind and these bytes is edited: a
 * key of encoders. A flags kind ("flags:SQF") whose value is the bytes'
 * number in one byte order is edited as that integer.
 * @param {{kind: string, value: string}} s
 * @param {Uint8Array} bytes
 */
function editKind(s, bytes) {
  if (encoders[s.kind]) {
    // A C string whose value the decoder gave as UTF-8 text is edited as such.
    if (s.kind === "cstring" && fieldText("cstring8", bytes) === s.value && /[^\x00-\x7f]/.test(s.value)) return "cstring8";
    return fieldText(s.kind, bytes) == null ? "bytes" : s.kind;
  }
  const m = /^(0x[0-9a-f]+|\d+)/i.exec(s.value);
  const size = { 1: "u8", 2: "u16", 4: "u32" }[bytes.length];
  if (m && size) {
    const v = Number(m[1]);
    for (const k of size === "u8" ? ["u8"] : [`${size}le`, `${size}be`]) if (fieldText(k, bytes) === String(v)) return k;
  }
  return "bytes";
}

/**
 * editLoad puts a datagram into the editor.
 * @param {Uint8Array} data
 * @param {string|null} protocol
 * @param {string} target
 */
function editLoad(data, protocol, target) {
  if (protocol && protocols.some((x) => x.name === protocol)) $("edit-protocol").value = protocol;
  if (target) $("edit-target").value = target;
  $("edit-hex").value = toHex(data).replace(/(..)(?!$)/g, "$1 ");
  editNote();
  editDecode();
}

/**
 * streamNote says why an edited request of proto cannot be sent, when
 * proto speaks over TCP: the relay holds such a conversation itself and
 * writes only what its codec builds from the options (EXCHANGE carries
 * options, never bytes). "" for a datagram protocol.
 * @param {string} proto
 */
function streamNote(proto) {
  if (!proto || !streamed(proto, {})) return "";
  const title = protocols.find((x) => x.name === proto)?.title ?? proto;
  return `${title} speaks over TCP: the relay writes only the request its own codec builds from the options, never bytes from this page, so an edited request cannot be sent. Set the options in the Query panel and press Send through relay there.`;
}

/** editNote shows, under the editor, why its bytes cannot be sent when its protocol speaks over TCP. */
function editNote() {
  const out = $("edit-result");
  out.textContent = streamNote($("edit-protocol").value);
  out.className = "small muted";
  out.dataset.rule = "";
}

$("edit-selected").addEventListener("click", () => {
  const p = capShown ?? packets[selected];
  if (p) editLoad(p.data, p.protocol, p.target);
  else if (current?.layers?.length) editLoad(current.layers[0].bytes, current.msg?.protocol ?? null, "");
  $("edit-hex").focus();
});

/**
 * editDecode parses the hex box and decodes it: the status line says what
 * it is (or the first error, at its offset), and every field of the wire
 * layer gets an input typed by its kind; fields of inner layers (a
 * Zandronum payload under its Huffman coding) are shown, not edited.
 */
function editDecode() {
  const st = $("edit-status");
  const box = $("edit-fields");
  try {
    edited = parseHex($("edit-hex").value);
  } catch (err) {
    st.textContent = `✖ hex: ${err.message}`;
    st.classList.add("bad");
    box.replaceChildren();
    return;
  }
  if (!edited.length) {
    st.textContent = "";
    box.replaceChildren();
    return;
  }
  const res = ql.inspect($("edit-protocol").value, edited);
  const msg = res.error ? res.partial ?? {} : res;
  const e = res.error;
  st.classList.toggle("bad", !!e);
  st.textContent = e
    ? `✖ ${e.field ? `${e.field} at offset ${e.offset}${e.layer ? ` of ${e.layer}` : ""}: ` : ""}${e.message}`
    : `${msg.protocol ?? ""} ${msg.kind ?? ""} · ${edited.length} bytes`;
  const layers = (msg.layers ?? []).map((l) => ({ name: l.name, bytes: parseHex(l.hex), parent: l.parent }));
  editedLayers = layers;
  const spans = (msg.spans ?? []).filter((s) => s.kind !== "group").sort((a, b) => a.layer - b.layer || a.start - b.start);
  box.replaceChildren(...spans.map((s) => {
    const layerName = layers[s.layer]?.name ?? "";
    const label = h("span", { class: "fn", title: `${s.kind} · bytes ${s.start}–${s.end - 1}${s.layer ? ` of ${layerName}` : ""}` }, s.layer ? `${layerName}: ${s.field}` : s.field);
    const bytes = (layers[s.layer]?.bytes ?? edited).subarray(s.start, s.end);
    const proto = msg.protocol ?? $("edit-protocol").value;
    if (s.layer !== 0 && !(wrapLayer[proto] && layers[s.layer]?.parent === 0 && wrapLayer[proto](layerName, layers[s.layer].bytes))) {
      return h("label", {}, label, h("span", { class: "ro" }, visible(s.value)));
    }
    const kind = editKind(s, bytes);
    const input = h("input", {
      value: fieldText(kind, bytes), "data-field": s.field, "data-kind": kind, "data-start": String(s.start), "data-end": String(s.end), "data-layer": String(s.layer),
      "aria-label": `${s.field} (${kind === "bytes" && s.kind !== "bytes" ? `${s.kind}, as hex` : kind})`, spellcheck: "false", autocomplete: "off",
    });
    return h("label", {}, label, input);
  }));
}

$("edit-hex").addEventListener("input", () => editDecode());
$("edit-protocol").addEventListener("change", () => {
  editNote();
  editDecode();
});
// A field's new value replaces its bytes, and the whole datagram decodes again.
$("edit-fields").addEventListener("change", (e) => {
  const input = e.target.closest("input[data-kind]");
  if (!input) return;
  let repl;
  try {
    repl = encoders[input.dataset.kind](input.value);
  } catch (err) {
    input.setAttribute("aria-invalid", "true");
    $("edit-status").textContent = `✖ ${input.dataset.field}: ${err.message}`;
    $("edit-status").classList.add("bad");
    return;
  }
  const li = Number(input.dataset.layer);
  if (li === 0) edited = splice(edited, Number(input.dataset.start), Number(input.dataset.end), repl);
  else {
    // A field of an inner layer: change that layer, then wrap it again.
    const l = editedLayers[li];
    const wire = wrapLayer[$("edit-protocol").value]?.(l.name, splice(l.bytes, Number(input.dataset.start), Number(input.dataset.end), repl));
    if (!(wire instanceof Uint8Array)) return;
    edited = wire;
  }
  $("edit-hex").value = toHex(edited).replace(/(..)(?!$)/g, "$1 ");
  editDecode();
});

/**
 * refusal words a relay ERROR for the editor: its code and the rule the
 * relay named (the message's text before ": ", relay/wire/rules.go).
 * @param {string} code
 * @param {string} message
 */
function refusal(code, message) {
  const i = message.indexOf(": ");
  const rule = i > 0 && /^[a-z0-9-]+$/.test(message.slice(0, i)) ? message.slice(0, i) : code;
  return { rule, detail: i > 0 ? message.slice(i + 2) : message };
}

$("edit-form").addEventListener("submit", (e) => {
  e.preventDefault();
  editDecode();
  const out = $("edit-result");
  const say = (text, cls, rule = "") => {
    out.textContent = text;
    out.className = `small ${cls}`;
    out.dataset.rule = rule;
  };
  const proto = $("edit-protocol").value;
  const target = targetOf($("edit-target").value, proto);
  if (!edited.length) { say("Nothing to send: type or load a query's hex.", "bad"); return; }
  const tcp = streamNote(proto);
  if (tcp) { say(tcp, "bad"); return; }
  if (!target) { say("Enter a target as host:port.", "bad"); $("edit-target").focus(); return; }
  const g = ++groups;
  const data = edited;
  addPacket({ direction: "sent", data, protocol: proto, target, group: g });
  select(packets.length - 1);
  say(`Asking ${target}…`, "");
  let replies = 0;
  relay.query(proto, target, data, {
    reply(bytes, rtt, flags) {
      replies++;
      addPacket({ direction: "received", data: bytes, protocol: proto, target, group: g, rtt, cached: (flags & 1) !== 0, time: Date.now() });
      if (replies === 1) select(packets.length - 1);
    },
    end() {
      say(replies ? `${target} answered: ${replies} datagram${replies > 1 ? "s" : ""}.` : `${target} did not answer within the relay's window.`, replies ? "ok" : "bad");
    },
    error(code, message) {
      const r = refusal(code, message);
      say(`Refused by the relay, rule ${r.rule}: ${r.detail}`, "bad", r.rule);
    },
  });
});

// ---- compare two datagrams ----

/** @type {{label: string, layers: {name: string, bytes: Uint8Array}[], spans: any[], layerIndex: number}|null} */
let compareA = null;
/** @type {[any, any]|null} the pair the dialog shows */
let comparing = null;

function snapshot() {
  return { label: current.label, layers: current.layers, spans: current.spans, layerIndex };
}

$("compare-a").addEventListener("click", () => {
  if (!current) return;
  compareA = snapshot();
  const b = $("compare-b");
  b.disabled = false;
  b.textContent = `Compare with ${compareA.label}`;
  status(`${compareA.label} is A: pick another datagram and press "Compare with ${compareA.label}".`);
});
$("compare-b").addEventListener("click", () => {
  if (current && compareA) showCompare(compareA, snapshot());
});
$("compare-close").addEventListener("click", () => $("compare").close());
$("compare-swap").addEventListener("click", () => comparing && showCompare(comparing[1], comparing[0]));

/**
 * showCompare opens the comparison of a and b: the bytes of the layer A
 * shows (of the wire when B has no layer by that name), changed bytes
 * marked, beside every field of every layer, paired by layer and path.
 */
function showCompare(a, b) {
  comparing = [a, b];
  const name = a.layers[a.layerIndex]?.name;
  let bi = b.layers.findIndex((l) => l.name === name);
  let ai = a.layerIndex;
  if (bi < 0) { ai = 0; bi = 0; }
  const ab = a.layers[ai].bytes;
  const bb = b.layers[bi].bytes;
  const d = byteDiff(ab, bb);
  const hexOf = (/** @type {Uint8Array} */ bytes) => {
    let html = "";
    for (let row = 0; row < Math.max(1, Math.ceil(d.changed.length / 16)); row++) {
      let line = `<span class="off">${(row * 16).toString(16).padStart(4, "0")}</span> `;
      for (let k = 0; k < 16; k++) {
        const o = row * 16 + k;
        if (o >= d.changed.length) break;
        const x = o < bytes.length ? bytes[o].toString(16).padStart(2, "0") : "··";
        line += `<span class="${o >= bytes.length ? "gone" : d.changed[o] ? "chg" : ""}" data-o="${o}">${x}</span>${k < 15 ? " " : ""}`;
      }
      html += `<div class="line">${line}</div>`;
    }
    return html;
  };
  $("compare-hex").innerHTML =
    `<div class="who">A · ${esc(a.label)} · ${esc(a.layers[ai].name)} (${ab.length} bytes)</div><div data-testid="compare-hex-a">${hexOf(ab)}</div>` +
    `<div class="who">B · ${esc(b.label)} · ${esc(b.layers[bi].name)} (${bb.length} bytes)</div><div data-testid="compare-hex-b">${hexOf(bb)}</div>`;
  const fields = fieldDiff(a.spans, a.layers.map((l) => l.name), b.spans, b.layers.map((l) => l.name));
  const counts = { same: 0, changed: 0, added: 0, removed: 0 };
  for (const f of fields) counts[f.change]++;
  const multi = new Set(fields.map((f) => f.layer)).size > 1;
  $("compare-rows").replaceChildren(...fields.map((f) => h("tr", { class: f.change, "data-field": f.field, "data-change": f.change, "data-testid": "compare-field" },
    h("td", {}, multi ? `${f.layer}: ${f.field}` : f.field),
    h("td", {}, f.a ? visible(f.a.value) : ""),
    h("td", {}, f.b ? visible(f.b.value) : ""),
    h("td", {}, f.change === "same" ? "" : f.change))));
  $("compare-summary").textContent = `A ${a.label} ↔ B ${b.label}: ${d.count} of ${d.changed.length} bytes differ · fields: ${counts.changed} changed, ${counts.added} added, ${counts.removed} removed, ${counts.same} the same`;
  const dlg = $("compare");
  if (!dlg.open) dlg.showModal();
}

// ---- an opened capture file ----

/** @type {Worker|null} */
let capWorker = null;
let capPayloadId = 0;
/** @type {Map<number, {resolve: (d: Uint8Array[]) => void, reject: (e: Error) => void}>} */
const capWaiting = new Map();
let capStats = null;
let capFile = "";

const capture = new Capture({
  list: $("cap-list"), rows: $("cap-rows"), spacer: $("cap-spacer"),
  onSelect: (r) => showCaptureRow(r),
});

/**
 * showList shows the session's packets or the capture's datagrams.
 * @param {"session"|"capture"} which
 */
function showList(which) {
  const cap = which === "capture";
  $("capture").hidden = !cap;
  $("session-list").hidden = cap;
  $("packets-empty").hidden = cap || packets.length > 0;
  $("list-session").setAttribute("aria-selected", String(!cap));
  $("list-capture").setAttribute("aria-selected", String(cap));
  if (cap) capture.schedule();
}
$("list-session").addEventListener("click", () => showList("session"));
$("list-capture").addEventListener("click", () => showList("capture"));

/**
 * payloads asks the worker for rows' payloads.
 * @param {import("./capture.js").Row[]} rows
 * @returns {Promise<Uint8Array[]>}
 */
function payloads(rows) {
  const id = ++capPayloadId;
  return new Promise((resolve, reject) => {
    capWaiting.set(id, { resolve, reject });
    // A reassembled IP datagram's payload and a TCP turn's bytes are the
    // reader's (offset -1), not one run of the file's.
    capWorker?.postMessage({ type: "payloads", id, want: rows.map((r) => ({ row: r.row, offset: r.flags & (FLAG_STORED | FLAG_TCP) || r.offset < 0 ? -1 : r.offset, length: r.length, tcp: (r.flags & FLAG_TCP) !== 0 })) });
  });
}

/**
 * thousands writes n with commas between thousands, without Intl
 * (whose first use loads locale data in one long task).
 * @param {number} n
 */
function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** capStatus says how far the reading is, and what the reader counted. */
function capStatus(done, read = 0, size = 0, error = null, ms = 0) {
  /** @type {{frames: number, udp: number, skipped: number, fragments: number, reassembled: number, truncated: number,
   *   segments?: number, streams?: number, turns?: number, cut?: number, gaps?: number, evicted?: number}} */
  const st = capStats ?? { frames: 0, udp: 0, skipped: 0, fragments: 0, reassembled: 0, truncated: 0 };
  const udp = capture.n - capture.tcp;
  let text = `${capFile}: ${thousands(udp)} UDP datagram${udp === 1 ? "" : "s"}`;
  if (capture.tcp) text += ` and ${thousands(capture.tcp)} TCP turn${capture.tcp === 1 ? "" : "s"}${st.streams ? ` of ${thousands(st.streams)} stream${st.streams === 1 ? "" : "s"}` : ""}`;
  text += ` of ${thousands(st.frames)} frames`;
  // The reader's counts of TCP (wasm/capture.go) when it reads TCP.
  const readsTCP = st.segments !== undefined;
  if (st.skipped) text += `, ${thousands(st.skipped)} skipped (${readsTCP ? "neither UDP nor TCP" : "not UDP"}${st.truncated ? `; ${st.truncated} cut by the snap length` : ""})`;
  if (st.reassembled) text += `, ${st.reassembled} reassembled from ${st.fragments} fragments`;
  if (st.cut) text += `, ${thousands(st.cut)} TCP turn${st.cut === 1 ? "" : "s"} cut at the reader's limit`;
  if (st.gaps) text += `, ${thousands(st.gaps)} TCP turn${st.gaps === 1 ? "" : "s"} with bytes missing`;
  if (st.evicted) text += `, ${thousands(st.evicted)} TCP stream${st.evicted === 1 ? "" : "s"} forgotten (too many open at once)`;
  text += done ? (error ? "" : ` · read in ${(ms / 1000).toFixed(1)} s`) : ` · reading… ${size ? Math.floor((read / size) * 100) : 0}%`;
  if (error) text += ` · ✖ ${error.message}`;
  const el = $("cap-status");
  el.textContent = text;
  el.classList.toggle("bad", !!error);
  el.dataset.done = String(done);
}

/**
 * openCapture reads a capture file in the worker.
 * @param {File} file
 */
function openCapture(file) {
  if (!capWorker) {
    capWorker = new Worker(import.meta.resolve("./capture-worker.js"), { type: "module", name: "querylens capture reader" });
    capWorker.onmessage = (e) => {
      const m = e.data;
      switch (m.type) {
        case "start":
          capture.reset(m.protocols);
          capStats = null;
          capStatus(false, 0, m.size);
          break;
        case "rows":
          capture.add(m.rows, m.n, m.endpoints, m.kinds);
          capStats = m.stats;
          capStatus(false, m.read, file.size);
          break;
        case "done":
          capStats = m.stats ?? capStats;
          capStatus(true, 0, 0, m.error, m.ms);
          if (capture.n && capture.selected < 0) capture.select(0);
          break;
        case "payloads": {
          const w = capWaiting.get(m.id);
          capWaiting.delete(m.id);
          if (m.error) w?.reject(new Error(m.error));
          else w?.resolve(m.data);
          break;
        }
        case "fatal":
          capStatus(true, 0, 0, { message: m.message });
          break;
      }
    };
    capWorker.onerror = (e) => capStatus(true, 0, 0, { message: `the capture reader failed: ${e.message || "it did not start"}` });
  }
  capFile = file.name || "capture";
  capShown = null;
  $("cap-status").dataset.done = "false";
  $("list-capture").hidden = false;
  showList("capture");
  const root = document.documentElement;
  capWorker.postMessage({
    type: "open", file,
    glue: new URL(root.dataset.wasmGlue, location.href).href,
    // The page's own module, compiled already: the worker instantiates
    // it without compiling it again.
    wasm: compiledDecoder() ?? new URL(root.dataset.wasm, location.href).href,
    ql: import.meta.resolve("./ql.js"),
  });
}

$("cap-file").addEventListener("change", (e) => {
  const f = e.currentTarget.files?.[0];
  if (f) openCapture(f);
});
const page = /** @type {HTMLElement} */ (document.querySelector(".inspect"));
page.addEventListener("dragover", (e) => {
  if (![...(e.dataTransfer?.types ?? [])].includes("Files")) return;
  e.preventDefault();
  page.classList.add("dropping");
});
page.addEventListener("dragleave", () => page.classList.remove("dropping"));
page.addEventListener("drop", (e) => {
  page.classList.remove("dropping");
  const f = e.dataTransfer?.files?.[0];
  if (!f) return;
  e.preventDefault();
  openCapture(f);
});

/**
 * showCaptureRow reads the selected datagram (with the rest of its answer
 * and the query it answers) and dissects it.
 * @param {import("./capture.js").Row} r
 */
async function showCaptureRow(r) {
  // Which way it went is the reader's word (a query, or not), kept when
  // the conversation is decoded as another protocol.
  const kind = capture.readerKind(r);
  const tcp = capture.isTCP(r);
  const sent = kind === "query" || kind === "master-query";
  const answer = sent ? [r] : capture.answer(r);
  const want = [...answer];
  const q = r.query >= 0 ? capture.get(r.query) : null;
  if (q && !sent) want.push(q);
  let data;
  try {
    data = await payloads(want);
  } catch (err) {
    status(`Frame ${r.frame}: ${err.message}`, true);
    return;
  }
  if (capture.selected !== r.row) return; // another row was picked meanwhile
  const at = answer.findIndex((x) => x.row === r.row);
  capShown = {
    label: `frame ${r.frame}`, protocol: capture.protocolOf(r), data: data[at], direction: sent ? "sent" : "received",
    target: capture.endpoint(sent ? r.dst : r.src), answer: data.slice(0, answer.length),
    query: q && !sent ? data[answer.length] : null, times: answer.map((x) => x.micros), frames: answer.map((x) => x.frame), conv: r.conv,
    transport: tcp ? "tcp" : "udp", end: tcp ? capture.lost(r) : "",
  };
  selected = -1;
  for (const tr of $("packet-rows").rows) tr.setAttribute("aria-selected", "false");
  layerIndex = -1;
  pinned = -1;
  cursor = { start: -1, end: -1, anchor: -1 };
  const as = $("cap-as");
  as.disabled = false;
  as.value = capture.as.get(r.conv) ?? "";
  if (answer.length > 1) $("whole").checked = true;
  showPacket();
}

$("cap-as").addEventListener("change", (e) => {
  if (capture.selected < 0) return;
  const r = capture.get(capture.selected);
  capture.decodeAs(r.conv, e.currentTarget.value);
  showCaptureRow(r);
});

/** exportCaptureTurn writes the shown capture datagram, its answer and query as pcapng. */
function exportCaptureTurn() {
  const c = capShown;
  const list = [];
  const r = capture.get(capture.selected);
  // A TCP turn is written as TCP, of one stream: the request turn, then
  // the reply turn (pcapng.Append writes the handshake and the close).
  const tcp = c.transport === "tcp" ? { transport: "tcp", stream: r.conv } : {};
  if (c.query && r.query >= 0) list.push({ time: capture.get(r.query).micros / 1000, direction: "sent", target: c.target, data: c.query, comment: `frame ${capture.get(r.query).frame} of ${capFile}`, ...tcp });
  const dgs = c.direction === "sent" ? [c.data] : c.answer;
  dgs.forEach((d, i) => list.push({ time: c.times[i] / 1000, direction: c.direction, target: c.target, data: d, comment: `frame ${c.frames[i]} of ${capFile}`, ...tcp }));
  const file = ql.pcapng(list);
  if (file.error) { status(file.error.message, true); return; }
  download(file, "application/vnd.tcpdump.pcap", `${capFile.replace(/\.[^.]*$/, "")}-frame${r.frame}.pcapng`);
}

// ---- start ----

async function main() {
  relay = new Relay(cfg.relay);
  showRelay(relay);
  relay.connect().catch(() => {}); // the inspector decodes offline too
  try {
    ql = await decoder();
  } catch (err) {
    showFatal(document.querySelector(".inspect"), err);
    return;
  }
  // A shared capture is what the visitor came for: decode it first.
  fromFragment();
  protocols = ql.protocols();
  const linked = new URLSearchParams(location.hash.slice(1)).get("p");
  const start = [cfg.protocol, linked, cfg.defaultProtocol].find((p) => p && protocols.some((x) => x.name === p));
  if (start) $("b-protocol").value = start;
  if (!cfg.target && new URLSearchParams(location.hash.slice(1)).get("t")) $("b-target").value = new URLSearchParams(location.hash.slice(1)).get("t");
  renderOptions();
  for (const [k, v] of Object.entries(cfg.options ?? {})) {
    const el = $("b-options").querySelector(`[name="${CSS.escape(k)}"]`);
    if (el?.dataset.kind === "bool") el.checked = v === "true";
    else if (el) el.value = v;
  }
  preview();
  globalThis.querylensInspect = {
    packets: () => packets.map((p) => ({ ...p, hex: toHex(p.data) })), permalink, select, setCursor, editLoad, openCapture,
    capture: () => ({ rows: capture.n, selected: capture.selected, shown: capShown ? { ...capShown, hex: toHex(capShown.data) } : null }),
    selectCapture: (/** @type {number} */ i) => capture.select(i),
    captureView: () => capture,
  };
}

main();
