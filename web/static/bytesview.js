// @ts-check
// The inspector's byte tools, without the DOM: what the selected bytes
// read as (the data inspector), and how two packets differ byte by byte
// and field by field (compare). inspect.js draws them.

import { fromHex } from "./ql.js";

/**
 * @typedef {{name: string, value: string}} DataValue
 * @typedef {{layer: number, start: number, end: number, field: string, kind: string, value: string}} Span
 */

/** TEXT_MAX caps the text rows of a one-byte selection, read from the cursor on. */
const TEXT_MAX = 64;

/**
 * dataValues reads the bytes at the cursor as every type a query protocol
 * uses: start is the cursor, end (exclusive) the end of the selection. The
 * numbers read from start on (a one-byte selection still shows u32 when
 * four bytes are there); the texts read the selection, or, for one byte,
 * up to TEXT_MAX bytes from start. A value that runs past the end of the
 * bytes is "—".
 * @param {Uint8Array} bytes
 * @param {number} start
 * @param {number} end
 * @returns {DataValue[]}
 */
export function dataValues(bytes, start, end) {
  const n = bytes.length;
  if (start < 0 || start >= n) return [];
  end = Math.max(start + 1, Math.min(end, n));
  const v = new DataView(bytes.buffer, bytes.byteOffset + start, n - start);
  const has = (k) => v.byteLength >= k;
  const num = (k, f) => (has(k) ? String(f()) : "—");
  const text = end - start > 1 ? bytes.subarray(start, end) : bytes.subarray(start, Math.min(n, start + TEXT_MAX));
  const nul = bytes.indexOf(0, start);
  return [
    { name: "offset", value: `${start} (0x${start.toString(16)})${end - start > 1 ? `, ${end - start} bytes selected` : ""}` },
    { name: "binary", value: bytes[start].toString(2).padStart(8, "0") },
    { name: "u8", value: num(1, () => v.getUint8(0)) },
    { name: "i8", value: num(1, () => v.getInt8(0)) },
    { name: "u16 le", value: num(2, () => v.getUint16(0, true)) },
    { name: "u16 be", value: num(2, () => v.getUint16(0, false)) },
    { name: "i16 le", value: num(2, () => v.getInt16(0, true)) },
    { name: "i16 be", value: num(2, () => v.getInt16(0, false)) },
    { name: "u32 le", value: num(4, () => v.getUint32(0, true)) },
    { name: "u32 be", value: num(4, () => v.getUint32(0, false)) },
    { name: "i32 le", value: num(4, () => v.getInt32(0, true)) },
    { name: "i32 be", value: num(4, () => v.getInt32(0, false)) },
    { name: "f32 le", value: num(4, () => v.getFloat32(0, true)) },
    { name: "f32 be", value: num(4, () => v.getFloat32(0, false)) },
    {
      name: "C string",
      value: nul < 0 ? `${quote(latin1(bytes.subarray(start)))} (no NUL before the end)` : `${quote(latin1(bytes.subarray(start, nul)))} (${nul - start} bytes + NUL)`,
    },
    { name: "Latin-1", value: quote(latin1(text)) },
    { name: "UTF-8", value: utf8(text) },
  ];
}

/** latin1 maps each byte to the code point of the same number. */
function latin1(b) {
  let s = "";
  for (const c of b) s += String.fromCharCode(c);
  return s;
}

const fatal = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

/** utf8 decodes b, saying where it stops being UTF-8 (a selection may cut a character). */
function utf8(b) {
  try {
    return quote(fatal.decode(b));
  } catch {
    // Find the longest valid prefix, to name the first bad byte.
    let ok = 0;
    for (let k = b.length - 1; k > 0; k--) {
      try {
        fatal.decode(b.subarray(0, k));
        ok = k;
        break;
      } catch { /* shorter */ }
    }
    return `${quote(lenient.decode(b))} (not UTF-8 from byte ${ok} of the selection)`;
  }
}

/** quote shows text in quotes with control characters as \xNN. */
export function quote(s) {
  return `"${s.replace(/[\x00-\x1f\x7f-\x9f"\\]/g, (c) => (c === '"' || c === "\\" ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`))}"`;
}

/**
 * byteDiff compares two byte strings position by position: changed[i] is
 * true where a and b differ at i, or where only one of them has a byte.
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 * @returns {{changed: boolean[], count: number}}
 */
export function byteDiff(a, b) {
  const n = Math.max(a.length, b.length);
  const changed = new Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    changed[i] = i >= a.length || i >= b.length || a[i] !== b[i];
    if (changed[i]) count++;
  }
  return { changed, count };
}

/**
 * @typedef {{key: string, field: string, layer: string, a: Span|null, b: Span|null,
 *   change: "same"|"changed"|"added"|"removed"}} FieldChange
 */

/**
 * fieldDiff pairs the fields of two decodes by layer name and dotted path
 * (players[3].score is the same field in both), in the order they appear
 * in a, then b's new ones. A field is changed when its value differs, or
 * its bytes moved (a value the same at another offset is reported too:
 * the fields before it grew or shrank).
 * @param {Span[]} a
 * @param {string[]} layersA the layer names, by index
 * @param {Span[]} b
 * @param {string[]} layersB
 * @returns {FieldChange[]}
 */
export function fieldDiff(a, layersA, b, layersB) {
  /** @type {Map<string, FieldChange>} */
  const out = new Map();
  const key = (/** @type {Span} */ s, /** @type {string[]} */ names) => `${names[s.layer] ?? s.layer}\u0000${s.field}`;
  for (const s of a) {
    const k = key(s, layersA);
    if (!out.has(k)) out.set(k, { key: k, field: s.field, layer: layersA[s.layer] ?? String(s.layer), a: s, b: null, change: "removed" });
  }
  for (const s of b) {
    const k = key(s, layersB);
    const c = out.get(k);
    if (!c) out.set(k, { key: k, field: s.field, layer: layersB[s.layer] ?? String(s.layer), a: null, b: s, change: "added" });
    else if (!c.b) {
      c.b = s;
      c.change = c.a.value === s.value && c.a.start === s.start && c.a.end === s.end ? "same" : "changed";
    }
  }
  return [...out.values()];
}

/**
 * Editable span kinds and how a typed value becomes bytes (the field
 * editor of edit-and-resend). Kinds not here are edited as hex.
 * @type {Record<string, (v: string) => Uint8Array>}
 */
export const encoders = {
  u8: (v) => intBytes(v, 1, false, false),
  bool: (v) => intBytes(v === "true" ? "1" : v === "false" ? "0" : v, 1, false, false),
  u16le: (v) => intBytes(v, 2, true, false),
  u16be: (v) => intBytes(v, 2, false, false),
  s16le: (v) => intBytes(v, 2, true, true),
  s16be: (v) => intBytes(v, 2, false, true),
  u32le: (v) => intBytes(v, 4, true, false),
  u32be: (v) => intBytes(v, 4, false, false),
  s32le: (v) => intBytes(v, 4, true, true),
  f32le: (v) => {
    const x = Number(v);
    if (v.trim() === "" || Number.isNaN(x)) throw new Error(`${JSON.stringify(v)} is not a number`);
    const out = new Uint8Array(4);
    new DataView(out.buffer).setFloat32(0, x, true);
    return out;
  },
  // The decoders show a C string as Latin-1 (codecs.Latin1): one
  // character per byte, written back the same way.
  cstring: (v) => {
    const out = new Uint8Array(v.length + 1);
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c === 0 || c > 0xff) throw new Error(`character ${i + 1} (${JSON.stringify(v[i])}) is not a Latin-1 byte of a C string`);
      out[i] = c;
    }
    return out;
  },
  // A C string the protocol reads as UTF-8 (A2S): edited as that text.
  cstring8: (v) => {
    const b = new TextEncoder().encode(v);
    if (b.includes(0)) throw new Error("a C string cannot hold a NUL");
    const out = new Uint8Array(b.length + 1);
    out.set(b);
    return out;
  },
  bytes: (v) => parseHexLoose(v),
};

/** parseHexLoose reads hex with any spacing. */
function parseHexLoose(v) {
  const t = v.replace(/\s+/g, "");
  if (!/^([0-9a-f]{2})*$/i.test(t)) throw new Error(`${JSON.stringify(v)} is not hex bytes`);
  return fromHex(t);
}

/**
 * intBytes writes the integer v (decimal, or 0x hex) in size bytes.
 * @param {string} v
 * @param {number} size
 * @param {boolean} le
 * @param {boolean} signed
 */
function intBytes(v, size, le, signed) {
  const t = v.trim();
  if (!/^-?(0x[0-9a-f]+|\d+)$/i.test(t)) throw new Error(`${JSON.stringify(v)} is not an integer`);
  const x = t.startsWith("-") ? -Number(t.slice(1)) : Number(t);
  const lo = signed ? -(2 ** (size * 8 - 1)) : 0;
  const hi = signed ? 2 ** (size * 8 - 1) - 1 : 2 ** (size * 8) - 1;
  if (x < lo || x > hi) throw new Error(`${t} does not fit in ${size * 8} bits${signed ? " (signed)" : ""}`);
  const out = new Uint8Array(size);
  const u = x < 0 ? x + 2 ** (size * 8) : x;
  for (let i = 0; i < size; i++) out[le ? i : size - 1 - i] = Math.floor(u / 2 ** (8 * i)) & 0xff;
  return out;
}

/**
 * fieldText is the editable text of a field's bytes, read back by
 * encoders[kind]: numbers in decimal, C strings as Latin-1 without their
 * NUL, "bytes" as hex; null when the bytes do not fit the kind (edit
 * them as "bytes").
 * @param {string} kind a key of encoders
 * @param {Uint8Array} b the field's bytes
 */
export function fieldText(kind, b) {
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const ok = (/** @type {number} */ n) => b.length === n;
  switch (kind) {
    case "u8": if (ok(1)) return String(v.getUint8(0)); break;
    case "bool": if (ok(1)) return v.getUint8(0) ? "true" : "false"; break;
    case "u16le": if (ok(2)) return String(v.getUint16(0, true)); break;
    case "u16be": if (ok(2)) return String(v.getUint16(0, false)); break;
    case "s16le": if (ok(2)) return String(v.getInt16(0, true)); break;
    case "s16be": if (ok(2)) return String(v.getInt16(0, false)); break;
    case "u32le": if (ok(4)) return String(v.getUint32(0, true)); break;
    case "u32be": if (ok(4)) return String(v.getUint32(0, false)); break;
    case "s32le": if (ok(4)) return String(v.getInt32(0, true)); break;
    case "f32le": if (ok(4)) return String(v.getFloat32(0, true)); break;
    case "cstring": if (b.length && b[b.length - 1] === 0 && !b.subarray(0, b.length - 1).includes(0)) return latin1(b.subarray(0, b.length - 1)); break;
    case "cstring8":
      if (b.length && b[b.length - 1] === 0 && !b.subarray(0, b.length - 1).includes(0)) {
        try {
          return fatal.decode(b.subarray(0, b.length - 1));
        } catch { /* not UTF-8: null below */ }
      }
      return null;
    case "bytes": break;
    default: return null;
  }
  if (kind !== "bytes") return null;
  let s = "";
  for (const x of b) s += x.toString(16).padStart(2, "0");
  return s;
}

/**
 * splice returns b with [start, end) replaced by repl.
 * @param {Uint8Array} b
 * @param {number} start
 * @param {number} end
 * @param {Uint8Array} repl
 */
export function splice(b, start, end, repl) {
  const out = new Uint8Array(b.length - (end - start) + repl.length);
  out.set(b.subarray(0, start));
  out.set(repl, start);
  out.set(b.subarray(end), start + repl.length);
  return out;
}
