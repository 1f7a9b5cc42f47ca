'use strict'
// Times the page's decoder calls, querylens.decode(protocol, datagrams,
// {query, spans}) and whole conversations (what the server browser's
// worker does per server: web/static/relay.js's Batch, the page's own
// code, opening the conversation and stepping it once per reply, alone and
// in batches of BATCH servers per call into Go), in the
// querylens.wasm the pages load, on the packets of a
// JSON file written by bench/cmd/benchreport, and prints one line a packet
// in `go test -bench` form so that the same parser reads both sides:
//
//	node decode.cjs QUERYLENS_WASM WASM_EXEC_JS PACKETS_JSON MIN_MS
//
// Each packet is decoded in batches that double until one takes MIN_MS;
// that batch's time per call is reported, as the testing package does.
const [wasmPath, execJs, packetsPath, minMsArg] = process.argv.slice(2)
if (!wasmPath || !execJs || !packetsPath) {
  process.stderr.write('usage: node decode.cjs QUERYLENS_WASM WASM_EXEC_JS PACKETS_JSON [MIN_MS]\n')
  process.exit(2)
}
const minMs = Number(minMsArg ?? 100)

globalThis.require = require
globalThis.fs = require('fs')
globalThis.path = require('path')
globalThis.TextEncoder = require('util').TextEncoder
globalThis.TextDecoder = require('util').TextDecoder
globalThis.performance ??= require('perf_hooks').performance
globalThis.crypto ??= require('crypto')
require(execJs)

const hex = (s) => Uint8Array.from(Buffer.from(s, 'hex'))

// The servers per call of the batched conversation form.
const BATCH = 16

async function main () {
  const { Batch } = await import(require('path').resolve(__dirname, '../../web/static/relay.js'))
  const { attachBatch } = await import(require('path').resolve(__dirname, '../../web/static/ql.js'))
  const go = new globalThis.Go()
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), go.importObject)
  go.run(instance) // returns once main blocks, with globalThis.querylens set
  const ql = globalThis.querylens
  if (!ql) throw new Error('querylens.wasm registered nothing')
  attachBatch(ql, instance.exports) // as web/static/ql.js loadDecoder does
  const packets = JSON.parse(fs.readFileSync(packetsPath, 'utf8'))
  // The server browser's whole call per server (web/static/worker.js):
  // k conversations opened, each reply stepped, the last step returning
  // the table's row; the batcher's own flush timer is replaced by
  // explicit flushes, one per round of requests.
  const dec = new Batch(ql, () => {})
  const conversations = async (p, dgs, k) => {
    const options = p.protocol === 'zandronum' && p.name === 'master-list' ? { master: 'true' } : null
    const opens = []
    for (let i = 0; i < k; i++) opens.push(dec.open(p.protocol, options))
    dec.flush()
    const os = await Promise.all(opens)
    let rs
    for (const d of dgs) {
      const steps = os.map((o) => dec.step(o.handle, d))
      dec.flush()
      rs = await Promise.all(steps)
    }
    return rs
  }
  // Every packet in every form until a pass costs a steady amount of CPU
  // (V8 optimises a wasm function in the background some time after it
  // becomes hot; those threads count in process.cpuUsage()), at most 5 s.
  const w0 = performance.now()
  let prev = 0
  while (performance.now() - w0 < 5000) {
    const c0 = process.cpuUsage()
    for (let i = 0; i < 20; i++) {
      for (const p of packets) {
        const opt = p.query ? { query: hex(p.query) } : {}
        const dgs = p.datagrams.map(hex)
        ql.decode(p.protocol, dgs, opt)
        ql.decode(p.protocol, dgs, { ...opt, spans: true })
        await conversations(p, dgs, 1)
        await conversations(p, dgs, BATCH)
      }
    }
    const c = process.cpuUsage(c0)
    const d = c.user + c.system
    if (prev > 0 && performance.now() - w0 > 500 && d < prev * 1.15 && prev < d * 1.15) break
    prev = d
  }
  for (const p of packets) {
    const dgs = p.datagrams.map(hex)
    for (const spans of [false, true]) {
      const opt = { spans }
      if (p.query) opt.query = hex(p.query)
      const first = ql.decode(p.protocol, dgs, opt)
      if (first.error) throw new Error(`${p.protocol}/${p.name}: ${first.error.message}`)
      await measure(p, dgs, spans ? 'spans' : 'plain', 1, () => ql.decode(p.protocol, dgs, opt))
    }
    // The server browser's whole call per server: one server per call,
    // then BATCH servers per call (what the worker does when replies
    // arrive together).
    for (const [form, k] of [['conversation', 1], ['conversation-batch', BATCH]]) {
      const rs = await conversations(p, dgs, k)
      const r = rs[rs.length - 1]
      if (rs.length !== k || !r.done || !r.summary || r.summary.error) throw new Error(`${p.protocol}/${p.name}: ${form}: ${JSON.stringify(r).slice(0, 200)}`)
      await measure(p, dgs, form, k, () => conversations(p, dgs, k))
    }
  }
}

// measure times one form of one packet, in batches that double until one
// takes minMs, as the testing package does; call does k conversations or
// decodes (the time reported is per one) and may return a promise.
async function measure (p, dgs, form, k, call) {
  const run = async () => {
    const r = call()
    if (r instanceof Promise) await r
  }
  // Untimed first: V8 compiles wasm functions on first call and
  // optimises hot ones later, in the background.
  const w0 = performance.now()
  for (let i = 0; i < 100000 && performance.now() - w0 < 50; i++) await run()
  let n = 1
  let dt = 0
  let cpu = 0
  for (;;) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    for (let i = 0; i < n; i++) await run()
    dt = performance.now() - t0
    const c1 = process.cpuUsage(c0)
    cpu = (c1.user + c1.system) * 1000
    if (dt >= minMs || n >= 1 << 24) break
    n *= dt > 0 ? Math.min(100, Math.max(2, Math.ceil((minMs * 1.2) / dt))) : 100
  }
  const bytes = dgs.reduce((s, d) => s + d.length, 0)
  const nsop = (dt * 1e6) / (n * k)
  const mbs = bytes / (nsop / 1e9) / 1e6
  process.stdout.write(`BenchmarkPageDecode/${p.protocol}/${p.name}/${form} ${n * k} ${nsop.toFixed(1)} ns/op ${mbs.toFixed(2)} MB/s ${(cpu / (n * k)).toFixed(1)} cpu-ns/op\n`)
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(String(err?.stack ?? err) + '\n')
  process.exit(1)
})
