// @ts-check
// Detection: which protocol a server added by hand speaks, asked in every
// protocol at once.
import { replyTimeout } from "./ql.js";
import { State } from "./model.js";
import { relay } from "./browse-asks.js";

/** @type {Map<string, {left: number, names: string[], resolve: (r: {protocol: string, res: any}|null) => void}>} */
const detecting = new Map();

/**
 * detectProtocol asks addr in every protocol at once through the worker
 * (each protocol's own query, as `querylens query` does without -p) and
 * resolves to the first protocol whose reply decodes, with that result (so
 * the row is filled without asking again: a Zandronum server answers once
 * per 10 s), or null when none does before the relay's reply window closes.
 * @param {string} addr host:port
 * @returns {Promise<{protocol: string, res: any}|null>}
 */
export async function detectProtocol(addr) {
  // The protocols in the order server.Detect tries them (querylens.detectOrder).
  const order = await relay.model("detectOrder", null);
  const names = Array.isArray(order) ? order : [];
  return new Promise((resolve) => {
    if (!names.length || detecting.has(addr)) return resolve(null);
    detecting.set(addr, { left: names.length, names, resolve });
    for (const p of names) {
      relay.ask({ key: `detect:${p}/${addr}`, protocol: p, target: addr, options: null, timeoutMs: replyTimeout(relay, 1500) });
    }
  });
}

/**
 * detected takes one protocol's answer to a detection. A protocol is found
 * when its reply decoded: online, or a refusal the server itself sent in
 * that protocol (banned, asked too soon), never the relay's own refusals.
 * @param {any} res
 */
export function detected(res) {
  const rest = res.key.slice("detect:".length);
  const slash = rest.indexOf("/");
  const protocol = rest.slice(0, slash), addr = rest.slice(slash + 1);
  const d = detecting.get(addr);
  if (!d) return; // already found; later answers are ignored
  const spoke = res.state === State.online || ((res.state === State.banned || res.state === State.rateLimited) && res.received?.length > 0);
  if (spoke) {
    detecting.delete(addr);
    // The other protocols' queries end now: left open, each would hold
    // one of the connection's in-flight slots for the relay's whole reply
    // window, and the next server added would wait on them.
    relay.forget(d.names.filter((p) => p !== protocol).map((p) => `detect:${p}/${addr}`));
    d.resolve({ protocol, res });
  } else if (--d.left === 0) {
    detecting.delete(addr);
    d.resolve(null);
  }
}
