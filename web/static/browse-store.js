// @ts-check
// What the server browser keeps in the browser's storage: the favourites,
// the servers added by hand, and the sort.

const STORE = "querylens.browse.v1";

/**
 * @typedef {{favourites: Set<string>, added: {protocol: string, addr: string}[],
 *   sort: {key: string, dir: number}}} Store
 */

/** @returns {Store} */
function loadStore() {
  const sort = { key: "players", dir: -1 };
  try {
    const s = JSON.parse(localStorage.getItem(STORE) ?? "{}");
    return { favourites: new Set(s.favourites ?? []), added: s.added ?? [], sort: s.sort?.key ? s.sort : sort };
  } catch {
    return { favourites: new Set(), added: [], sort };
  }
}

/** store is what the page keeps, as loaded; saveStore writes it back. */
export const store = loadStore();

export function saveStore() {
  localStorage.setItem(STORE, JSON.stringify({ favourites: [...store.favourites], added: store.added, sort: store.sort }));
}

/** keyOf is a row's key: its protocol and address. @param {string} protocol @param {string} addr */
export const keyOf = (protocol, addr) => `${protocol}/${addr}`;
