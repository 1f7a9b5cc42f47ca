// Queries one GameSpy v2 server with GameDig and prints what GameDig saw as
// one line of JSON. Used by demo/gamespy2_test.go (TestGameDigInterop):
//
//	node query.mjs 127.0.0.1 PORT
//
// Battlefield Vietnam is one of GameDig's games that speak protocol
// "gamespy2" (its lib/games.js); givenPortOnly keeps GameDig on PORT.
import { GameDig } from 'gamedig'

const [host, port] = process.argv.slice(2)
if (!host || !port) {
  process.stderr.write('usage: node query.mjs HOST PORT\n')
  process.exit(2)
}

try {
  const state = await GameDig.query({
    type: 'battlefieldvietnam',
    host,
    port: Number(port),
    givenPortOnly: true,
    maxRetries: 1,
    socketTimeout: 3000,
    attemptTimeout: 10000
  })
  const out = {
    name: state.name,
    map: state.map,
    password: state.password,
    numplayers: state.numplayers,
    maxplayers: state.maxplayers,
    version: state.version,
    players: state.players.map(p => ({ name: p.name, raw: p.raw })),
    teams: state.raw.teams
  }
  process.stdout.write(JSON.stringify(out) + '\n')
} catch (err) {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n')
  process.exit(1)
}
