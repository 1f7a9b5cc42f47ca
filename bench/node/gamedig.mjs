// Queries many GameSpy v2 servers with GameDig, the library most server
// lists use today, and prints one line of JSON: how many answered, how many
// players were read, and the wall time from the first query to the last
// answer. Used by bench/cmd/benchreport:
//
//	node gamedig.mjs GAMEDIG_DIR CONCURRENCY HOST:PORT...   (or - to read targets from stdin, one a line)
//
// GAMEDIG_DIR is the folder with GameDig installed (tools/gamedig).
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { readFileSync } from 'node:fs'

const [dir, conc, ...rest] = process.argv.slice(2)
if (!dir || !conc || rest.length === 0) {
  process.stderr.write('usage: node gamedig.mjs GAMEDIG_DIR CONCURRENCY HOST:PORT... | -\n')
  process.exit(2)
}
const targets = rest[0] === '-' ? readFileSync(0, 'utf8').split('\n').filter(Boolean) : rest
const require = createRequire(dir.replace(/\/?$/, '/') + 'package.json')
const { GameDig } = await import(pathToFileURL(require.resolve('gamedig')).href)

const limit = Math.max(1, Number(conc))
let next = 0
let ok = 0
let players = 0
const errors = {}
const t0 = performance.now()
async function worker () {
  while (next < targets.length) {
    const t = targets[next++]
    const i = t.lastIndexOf(':')
    try {
      const state = await GameDig.query({
        type: 'battlefieldvietnam', // a GameDig game that speaks protocol "gamespy2"
        host: t.slice(0, i),
        port: Number(t.slice(i + 1)),
        givenPortOnly: true,
        maxRetries: 1,
        socketTimeout: 2000,
        attemptTimeout: 10000
      })
      ok++
      players += state.players.length
    } catch (err) {
      const k = String(err?.message ?? err).split('\n')[0].slice(0, 80)
      errors[k] = (errors[k] ?? 0) + 1
    }
  }
}
await Promise.all(Array.from({ length: Math.min(limit, targets.length) }, worker))
const ms = performance.now() - t0
process.stdout.write(JSON.stringify({ asked: targets.length, ok, players, ms, errors }) + '\n')
// GameDig keeps its shared UDP socket open; end now that every query is done.
process.exit(0)
