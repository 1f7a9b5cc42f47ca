// Asks one Minecraft server with minecraft-server-util, a Node client
// written independently of querylens and of GameDig, and prints what it
// saw as one line of JSON. Used by demo/minecraft_mcutil_test.go:
//
//	node mcutil.mjs status|legacy|bedrock HOST PORT [TIMEOUT_MS]
//
// status is its Java Server List Ping (status: handshake, status request,
// then a ping it checks the pong of), legacy its legacy ping
// (statusLegacy: FE 01), bedrock the RakNet unconnected ping
// (statusBedrock, UDP). It prints {"ok":true,"result":…} with the
// library's result as it gave it (the Bedrock server GUID, a BigInt, as
// text; the round trip time left out), or {"ok":false,"error":"…"} when
// the library refused the server; the exit status is 0 either way, 2 for
// bad arguments. SRV lookups are off, so nothing but HOST:PORT is asked.
import util from 'minecraft-server-util'

const [kind, host, port, timeoutArg] = process.argv.slice(2)
const asks = { status: util.status, legacy: util.statusLegacy, bedrock: util.statusBedrock }
if (!asks[kind] || !host || !port || !Number.isInteger(Number(port))) {
  process.stderr.write('usage: node mcutil.mjs status|legacy|bedrock HOST PORT [TIMEOUT_MS]\n')
  process.exit(2)
}

const options = { enableSRV: false, timeout: Number(timeoutArg) || 10000 }
let out
try {
  const result = await asks[kind](host, Number(port), options)
  delete result.roundTripLatency
  if (typeof result.serverGUID === 'bigint') {
    result.serverGUID = result.serverGUID.toString()
  }
  out = { ok: true, result }
} catch (err) {
  // The library rejects with an Error, or with nothing when the server
  // closes the connection before it is open.
  out = { ok: false, error: err === undefined ? 'rejected without an error' : String(err && err.message ? err.message : err) }
}
process.stdout.write(JSON.stringify(out) + '\n')
