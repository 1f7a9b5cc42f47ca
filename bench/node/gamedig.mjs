// Queries many servers with GameDig, the library most server lists use
// today, and prints one line of JSON: how many answered, how many players
// were read, how many datagrams GameDig's socket received, how many bytes
// its TCP sockets read (a protocol over TCP, as Minecraft Java's), and
// the wall time from the first query to the last answer. Used by
// bench/cmd/benchreport:
//
//	node gamedig.mjs GAMEDIG_DIR CONCURRENCY [-type TYPE] [-rules] HOST:PORT...   (or - to read targets from stdin, one a line)
//
// GAMEDIG_DIR is the folder with GameDig installed (tools/gamedig). TYPE
// is a GameDig game or protocol type; the default, Battlefield Vietnam,
// is a GameDig game that speaks protocol "gamespy2". -rules sets
// requestRules (protocol-valve asks A2S_RULES only when told to).
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { readFileSync } from 'node:fs'
import dgram from 'node:dgram'
import net from 'node:net'

const [dir, conc, ...rest] = process.argv.slice(2)
let type = 'battlefieldvietnam'
let requestRules = false
while (rest.length > 0 && rest[0].startsWith('-') && rest[0] !== '-') {
  const flag = rest.shift()
  if (flag === '-type') type = rest.shift()
  else if (flag === '-rules') requestRules = true
  else rest.length = 0 // unknown: the usage below
}
if (!dir || !conc || !type || rest.length === 0) {
  process.stderr.write('usage: node gamedig.mjs GAMEDIG_DIR CONCURRENCY [-type TYPE] [-rules] HOST:PORT... | -\n')
  process.exit(2)
}
const targets = rest[0] === '-' ? readFileSync(0, 'utf8').split('\n').filter(Boolean) : rest

// Every datagram delivered to a UDP socket of this process (GameDig's
// shared one) is counted: the replies the client read. GameDig asks every
// server through that one socket, whose default receive buffer (Linux's
// rmem_default, 208 KiB) overflows with 100 servers' A2S rules at once:
// the kernel drops replies, and GameDig waits out its socket timeout and
// reports the server without them. The socket gets RECV_BUFFER bytes as
// it starts listening (Linux caps it at rmem_max), so that GameDig is
// measured losing nothing.
const RECV_BUFFER = 4 << 20
let received = 0
const emit = dgram.Socket.prototype.emit
dgram.Socket.prototype.emit = function (event, ...args) {
  if (event === 'message') received++
  if (event === 'listening') {
    try {
      this.setRecvBufferSize(RECV_BUFFER)
    } catch (err) {
      process.stderr.write('gamedig.mjs: receive buffer: ' + err.message + '\n')
    }
  }
  return emit.call(this, event, ...args)
}
// Every byte a TCP socket of this process reads (GameDig's connections
// to a TCP protocol's servers): what the servers wrote and GameDig read.
let receivedBytes = 0
const emitTCP = net.Socket.prototype.emit
net.Socket.prototype.emit = function (event, ...args) {
  if (event === 'data' && args[0]?.length) receivedBytes += args[0].length
  return emitTCP.call(this, event, ...args)
}
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
        type,
        requestRules,
        host: t.slice(0, i),
        port: Number(t.slice(i + 1)),
        givenPortOnly: true,
        maxRetries: 1,
        socketTimeout: 2000,
        attemptTimeout: 10000
      })
      ok++
      players += state.players.length + state.bots.length // GameDig files some players (A2S, Quake III) as bots
    } catch (err) {
      const k = String(err?.message ?? err).split('\n')[0].slice(0, 80)
      errors[k] = (errors[k] ?? 0) + 1
    }
  }
}
await Promise.all(Array.from({ length: Math.min(limit, targets.length) }, worker))
const ms = performance.now() - t0
process.stdout.write(JSON.stringify({ asked: targets.length, ok, players, received, receivedBytes, ms, errors }) + '\n')
// GameDig keeps its shared UDP socket open; end now that every query is done.
process.exit(0)
