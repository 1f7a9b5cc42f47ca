// Queries one server with GameDig and prints what GameDig saw as one line
// of JSON. Used by the interop tests of demo/ (gamespy2_test.go,
// quake3_gamedig_test.go, gamedig_test.go):
//
//	node query.mjs 127.0.0.1 PORT [TYPE [rules]]
//
// TYPE is a GameDig game or protocol type; the default, Battlefield
// Vietnam, is one of GameDig's games that speak protocol "gamespy2" (its
// lib/games.js). "rules" sets GameDig's requestRules (A2S_RULES, which
// protocol-valve asks only when told to). givenPortOnly keeps GameDig on
// PORT.
import { GameDig } from 'gamedig'

const [host, port, type = 'battlefieldvietnam', extra] = process.argv.slice(2)
if (!host || !port) {
  process.stderr.write('usage: node query.mjs HOST PORT [TYPE [rules]]\n')
  process.exit(2)
}

try {
  const state = await GameDig.query({
    type,
    host,
    port: Number(port),
    givenPortOnly: true,
    requestRules: extra === 'rules',
    maxRetries: 1,
    // Generous: the servers the tests ask answer at once, but a loaded
    // CI machine may start node slowly; no retry, so that the tests see
    // each question asked once. GAMEDIG_SOCKET_TIMEOUT (ms) shortens it
    // for protocols that wait out the timeout after every query
    // (protocol-unreal2 asks three times).
    socketTimeout: Number(process.env.GAMEDIG_SOCKET_TIMEOUT) || 10000,
    attemptTimeout: 25000
  })
  const out = {
    name: state.name,
    map: state.map,
    password: state.password,
    numplayers: state.numplayers,
    maxplayers: state.maxplayers,
    version: state.version,
    players: state.players.map(p => ({ name: p.name, raw: p.raw })),
    teams: state.raw.teams,
    bots: state.bots.map(p => ({ name: p.name, raw: p.raw })),
    raw: { ...state.raw, rulesBytes: undefined } // the rules as sent, which the tests do not read
  }
  process.stdout.write(JSON.stringify(out) + '\n')
} catch (err) {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n')
  process.exit(1)
}
