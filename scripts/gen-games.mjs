// Generates the table of every game GameDig knows (server/games/gamedig.go)
// and its page (docs/games.md) from GameDig's own games list, lib/games.js,
// at the version pinned in tools/gamedig (npm ci --prefix tools/gamedig):
//
//	node scripts/gen-games.mjs [--out DIR]     (go tool task gen:games)
//
// --out writes both files under DIR (the test that compares them with the
// committed ones) instead of the repository.
//
// GameDig (github.com/gamedig/node-gamedig) is MIT-licensed; its games list
// is read as data (ids, names, ports, protocol names), nothing of its code
// is copied. What querylens adds is below: which querylens protocol answers
// what each GameDig protocol answers (read from GameDig's protocols/*.js),
// why the others are not served, and the master filters: Steam's app ids
// (Steam's store and SteamDB, the Valve Developer Community's "Steam
// Application IDs") and the Quake III masters' getservers arguments
// (server/masters_default.go says where each comes from).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const gamedigDir = join(root, 'tools/gamedig/node_modules/gamedig')
const pinned = JSON.parse(readFileSync(join(root, 'tools/gamedig/package.json'), 'utf8')).dependencies.gamedig
const version = JSON.parse(readFileSync(join(gamedigDir, 'package.json'), 'utf8')).version
if (version !== pinned) {
  throw new Error(`GameDig ${version} is installed, ${pinned} is pinned: npm ci --prefix tools/gamedig`)
}
const { games } = await import(pathToFileURL(join(gamedigDir, 'lib/games.js')).href)

let out = root
const args = process.argv.slice(2)
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out' && i + 1 < args.length) out = args[++i]
  else throw new Error('usage: node scripts/gen-games.mjs [--out DIR]')
}

// Why a game is not served, by kind.
const HTTP = 'HTTP only'
const TCP = 'a TCP protocol not done yet'
const UDP = 'a UDP protocol not done yet'

// protocols maps each GameDig protocol (lib/games.js's options.protocol) to
// the querylens protocol that answers what GameDig's answers, with why a
// game is not served while that protocol is not built in; or, with no
// querylens protocol, why none does. A GameDig protocol that extends
// another (protocols/*.js) counts only where querylens's codec reads what
// GameDig reads; the note says what differs.
const protocols = {
  valve: { p: 'a2s' },
  goldsrc: { p: 'a2s', note: "GameDig asks GoldSrc's older \"details\" query; querylens asks A2S_INFO, which GoldSrc servers answer in the same 'm' form" },
  dayz: { p: 'a2s', note: "DayZ's mod list, packed into its A2S_RULES reply, is read as plain rules" },
  sdtd: { p: 'a2s', note: "GameDig's optional telnet calls (with the server's telnet password) are left out" },
  toxikk: { p: 'a2s', note: "the Unreal Engine 3 property ids in its rules are shown as they come" },
  ffow: { why: UDP, detail: "Frontlines' own A2S dialect (a big-endian 'F'/'I' info exchange)" },
  gamespy1: { p: 'gamespy1' },
  gamespy2: { p: 'gamespy2' },
  gamespy3: { p: 'gamespy3' },
  ut3: { p: 'gamespy3', note: "the Unreal Engine 3 property ids are shown as they come" },
  jc2mp: { why: UDP, detail: "JC2-MP's GameSpy 3 dialect (its own request, one split, its own player list)" },
  quake3: { p: 'quake3' },
  warsow: { p: 'quake3' },
  xonotic: { p: 'quake3' },
  ase: { p: 'ase', why: UDP, detail: 'the All-Seeing Eye' },
  unreal2: { p: 'unreal2', why: UDP, detail: 'Unreal Engine 2' },
  doom3: { p: 'doom3', why: UDP, detail: "Doom 3's getInfo" },
  quake2: { p: 'quake2', why: UDP, detail: 'Quake 2' },
  quake1: { p: 'quakeworld', why: UDP, detail: 'QuakeWorld' },
  hexen2: { p: 'hexen2', why: UDP, detail: 'Hexen II' },
  fivem: { p: 'fivem', why: UDP, detail: "FiveM's getinfo", note: 'the player list, served over HTTP (players.json), is left out' },
  samp: { p: 'samp', why: UDP, detail: 'SA-MP' },
  gtasao: { p: 'samp', why: UDP, detail: 'SA-MP, as open.mp answers it' },
  vcmp: { p: 'vcmp', why: UDP, detail: 'Vice City: Multiplayer' },
  mumbleping: { p: 'mumble', why: UDP, detail: "Mumble's UDP ping" },
  minecraft: { p: 'minecraft', why: TCP, detail: "Minecraft's server list ping", note: "GameDig also tries Minecraft's GameSpy 3 query and Bedrock's ping; querylens asks the Java edition's status" },
  // UDP protocols querylens has not done yet.
  armagetron: { why: UDP, detail: 'Armagetron Advanced' },
  cs2d: { why: UDP, detail: 'CS2D' },
  mafia2mp: { why: UDP, detail: 'Mafia II Multiplayer' },
  mafia2online: { why: UDP, detail: 'Mafia II Online' },
  rfactor: { why: UDP, detail: 'rFactor' },
  savage2: { why: UDP, detail: 'Savage 2' },
  satisfactory: { why: UDP, detail: "Satisfactory's lightweight query; the rest over HTTPS" },
  starsiege: { why: UDP, detail: 'Starsiege' },
  tribes1: { why: UDP, detail: 'Tribes' },
  ventrilo: { why: UDP, detail: 'Ventrilo' },
  // TCP protocols querylens has not done yet.
  battlefield: { why: TCP, detail: "Frostbite's RCON" },
  mumble: { why: TCP, detail: "GT Murmur's JSON over TCP" },
  nadeo: { why: TCP, detail: "GbxRemote's XML-RPC, with the server's login" },
  openttd: { why: TCP, detail: 'OpenTTD' },
  soldat: { why: TCP, detail: "Soldat's admin port" },
  starmade: { why: TCP, detail: 'StarMade' },
  teamspeak2: { why: TCP, detail: "TeamSpeak 2's query port" },
  teamspeak3: { why: TCP, detail: "TeamSpeak 3's ServerQuery" },
  // Answered over HTTP (a web API, a master list or a page), which the relay
  // does not carry.
  altvmp: { why: HTTP, detail: "alt:V's master API" },
  asa: { why: HTTP, detail: 'Epic Online Services' },
  assettocorsa: { why: HTTP, detail: "the server's HTTP API" },
  beammp: { why: HTTP, detail: "BeamMP's master list" },
  brokeprotocol: { why: HTTP, detail: "BROKE PROTOCOL's master list" },
  buildandshoot: { why: HTTP, detail: "buildandshoot.com's server list" },
  discord: { why: HTTP, detail: "Discord's invite API" },
  eco: { why: HTTP, detail: "the server's web API" },
  eldewrito: { why: HTTP, detail: "the server's HTTP info" },
  factorio: { why: HTTP, detail: "Factorio's matchmaking API" },
  farmingsimulator: { why: HTTP, detail: "the server's XML feed" },
  geneshift: { why: HTTP, detail: "Geneshift's master list" },
  hawakening: { why: HTTP, detail: "Hawakening's backend API" },
  hytale: { why: HTTP, detail: "the server's web API" },
  kspdmp: { why: HTTP, detail: "the server's HTTP status" },
  minetest: { why: HTTP, detail: "Minetest's server list" },
  palworld: { why: HTTP, detail: "the server's REST API" },
  ragemp: { why: HTTP, detail: "RAGE:MP's master list" },
  renegadex: { why: HTTP, detail: "Renegade X's master list" },
  renown: { why: HTTP, detail: 'Epic Online Services' },
  scpsl: { why: HTTP, detail: "SCP:SL's server list API" },
  squad: { why: HTTP, detail: 'Epic Online Services' },
  terraria: { why: HTTP, detail: "TShock's REST API" },
  theisleevrima: { why: HTTP, detail: 'Epic Online Services' },
  vintagestory: { why: HTTP, detail: "Vintage Story's master list" }
}

// byGame overrides the protocol of one game where GameDig's protocol covers
// two that querylens keeps apart: GameDig's minecraft tries the Java status,
// GameSpy 3 and Bedrock's ping; its Bedrock game is Bedrock's.
const byGame = {
  mbe: { p: 'bedrock', why: UDP, detail: "Bedrock's unconnected ping" }
}

// options are the querylens query options a game needs beyond its
// protocol's defaults: Doom 3's engine answers differently per game
// (codecs/doom3's game option: doom3, quake4, prey, etqw, wolf).
const options = {
  doom3: { game: 'doom3' },
  quake4: { game: 'quake4' },
  prey: { game: 'prey' },
  etqw: { game: 'etqw' },
  wolfenstein: { game: 'wolf' }
}

// steam are the Steam app ids of the games whose servers Steam's master
// lists: the a2s master filter \appid\N (the browse page's game picker).
// A game's dedicated server is often an app of its own (Team Fortress 2's
// is 232250): masters list servers under the game's id, which is the one
// here. Counter-Strike: Global Offensive is now Counter-Strike 2 (730).
const steam = {
  a2oa: 33930,
  aapg: 203290,
  abioticfactor: 427410,
  alienswarm: 630,
  aoc: 17510,
  arma2: 33900,
  arma3: 107410,
  armareforger: 1874880,
  asa: 2399830,
  ase: 346110,
  atlas: 834910,
  avorion: 445220,
  avp2010: 10680,
  ballisticoverkill: 296300,
  barotrauma: 602960,
  battalion1944: 489940,
  blackmesa: 362890,
  bladesymphony: 225600,
  brainbread2: 346330,
  brink: 22350,
  cmw: 219640,
  codbo3: 311210,
  colonysurvival: 366090,
  conanexiles: 440900,
  contagion: 238430,
  corekeeper: 1621690,
  counterstrike16: 10,
  counterstrike2: 730,
  creativerse: 280790,
  cscz: 80,
  css: 240,
  dab: 317360,
  dal: 529180,
  dayofdragons: 1088320,
  dayz: 221100,
  dayzmod: 224580,
  ddd: 70000,
  deathmatchclassic: 40,
  dmomam: 2100,
  dod: 30,
  dods: 300,
  doi: 447820,
  dota2: 570,
  dow: 454350,
  dst: 322330,
  dystopia: 17580,
  egs: 383120,
  empiresmod: 17740,
  enshrouded: 1203620,
  ets2: 227300,
  fof: 265630,
  fortressforever: 253530,
  foundry: 983870,
  garrysmod: 4000,
  hl2d: 320,
  hld: 70,
  hlds: 360,
  hll: 686810,
  hlof: 50,
  homefront: 55100,
  hurtworld: 393420,
  icarus: 1149460,
  imic: 17700,
  insurgency: 222880,
  insurgencysandstorm: 581320,
  killingfloor: 1250,
  killingfloor2: 232090,
  l4d: 500,
  l4d2: 550,
  medievalengineers: 333950,
  mnc: 63200,
  moe: 1371580,
  mordhau: 629760,
  naturalselection2: 4920,
  nmrih: 224260,
  nucleardawn: 17710,
  ohd: 736590,
  onset: 1105810,
  palworld: 1623730,
  pce: 321360,
  pixark: 593600,
  postscriptum: 736220,
  projectcars: 234630,
  projectcars2: 378860,
  projectzomboid: 108600,
  pvak2: 17570,
  quakelive: 282440,
  redorchestra2: 35450,
  rfactor2: 365960,
  ricochet: 60,
  risingworld: 324080,
  ror2: 632360,
  rs2v: 418460,
  rust: 252490,
  sdtd: 251570,
  sinepisodes: 1300,
  sotf: 1326470,
  soulmask: 2646460,
  spaceengineers: 244850,
  squad: 393380,
  starbound: 211820,
  svencoop: 225840,
  synergy: 17520,
  teamfortress2: 440,
  tfc: 20,
  theforest: 242760,
  thefront: 2285150,
  theisle: 376210,
  theship: 2400,
  towerunite: 394690,
  toxikk: 324810,
  unturned: 304930,
  valheim: 892970,
  vrising: 1604030,
  wurmunlimited: 366220,
  zps: 17500
}
const steamMaster = 'a2s'

// quake3Masters are the Quake III masters' getservers arguments of the
// games whose masters querylens knows (server/masters_default.go): addr is
// the master when it is not the protocol's default (ioquake3's).
const dpmaster = 'dpmaster.deathmask.net:27950'
const quake3Masters = {
  q3a: { filter: '68 empty full' },
  openarena: { addr: dpmaster, filter: '71 empty full' },
  xonotic: { addr: dpmaster, filter: 'Xonotic 3 empty full ext' },
  nexuiz: { addr: dpmaster, filter: 'Nexuiz 3 empty full' }
}

// gamespy1Masters are the names GameSpy v1 masters list the games under
// (the gamespy1 master's filter; codecs/gamespy1's MasterGames holds each
// one's key), for the games 333networks' master (the protocol's default)
// lists: the Unreal engine games and a few others (docs/protocols/gamespy1.md).
const gamespy1Masters = {
  unrealtournament: 'ut',
  unreal: 'unreal',
  deusex: 'deusex',
  rune: 'rune',
  wot: 'wot',
  postal2: 'postal2',
  serioussam: 'serioussam',
  sstse: 'serioussamse'
}

// --- the table ---------------------------------------------------------

const rows = []
const unmapped = new Set()
for (const [id, g] of Object.entries(games).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
  const o = g.options
  const m = byGame[id] ?? protocols[o.protocol]
  if (!m) { unmapped.add(o.protocol); continue }
  let offsets = o.port_query_offset ?? []
  if (!Array.isArray(offsets)) offsets = [offsets]
  const row = {
    id,
    oldIDs: g.extra?.old_id ? [g.extra.old_id] : [],
    name: g.name,
    year: g.release_year ?? 0,
    gamedig: o.protocol,
    protocol: m.p ?? '',
    options: options[id] ?? null,
    port: o.port ?? 0,
    queryPort: o.port_query ?? 0,
    offsets,
    master: '',
    masterAddr: '',
    filter: '',
    why: m.why ? m.why + ': ' + m.detail : '',
    note: m.note ?? ''
  }
  if (steam[id]) {
    row.master = steamMaster
    row.filter = `\\appid\\${steam[id]}`
  } else if (quake3Masters[id]) {
    if (row.protocol !== 'quake3') throw new Error(`${id}: a Quake III master filter for a ${row.protocol} game`)
    row.master = 'quake3'
    row.masterAddr = quake3Masters[id].addr ?? ''
    row.filter = quake3Masters[id].filter
  } else if (gamespy1Masters[id]) {
    if (row.protocol !== 'gamespy1') throw new Error(`${id}: a GameSpy v1 master name for a ${row.protocol} game`)
    row.master = 'gamespy1'
    row.filter = gamespy1Masters[id]
  }
  rows.push(row)
}
if (unmapped.size) {
  throw new Error(`GameDig protocols with no entry in scripts/gen-games.mjs's protocols: ${[...unmapped].join(', ')}`)
}
for (const [what, table] of Object.entries({ options, steam, quake3Masters, gamespy1Masters, byGame })) {
  for (const id of Object.keys(table)) {
    if (!games[id]) throw new Error(`${what}: ${id} is not a GameDig ${version} game`)
  }
}

// --- Go ----------------------------------------------------------------

const q = (s) => JSON.stringify(s)
const goRow = (r) => {
  const f = [`ID: ${q(r.id)}`]
  if (r.oldIDs.length) f.push(`OldIDs: []string{${r.oldIDs.map(q).join(', ')}}`)
  f.push(`Name: ${q(r.name)}`)
  if (r.year) f.push(`Year: ${r.year}`)
  f.push(`GameDig: ${q(r.gamedig)}`)
  if (r.protocol) f.push(`Protocol: ${q(r.protocol)}`)
  if (r.options) f.push(`Options: map[string]string{${Object.entries(r.options).map(([k, v]) => `${q(k)}: ${q(v)}`).join(', ')}}`)
  if (r.port) f.push(`Port: ${r.port}`)
  if (r.queryPort) f.push(`QueryPort: ${r.queryPort}`)
  if (r.offsets.length) f.push(`Offsets: []int{${r.offsets.join(', ')}}`)
  if (r.master) f.push(`Master: ${q(r.master)}`)
  if (r.masterAddr) f.push(`MasterAddr: ${q(r.masterAddr)}`)
  if (r.filter) f.push(`Filter: ${q(r.filter)}`)
  if (r.why) f.push(`Why: ${q(r.why)}`)
  if (r.note) f.push(`Note: ${q(r.note)}`)
  return `\t{${f.join(', ')}},`
}
const goSrc = `// Code generated by scripts/gen-games.mjs from GameDig ${version}'s lib/games.js; DO NOT EDIT.
// GameDig (github.com/gamedig/node-gamedig) is MIT-licensed: its games list
// is read as data. Regenerate with go tool task gen:games.

package games

// GameDigVersion is the GameDig release whose games list the table is.
const GameDigVersion = ${q(version)}

var table = []Game{
${rows.map(goRow).join('\n')}
}
`

// --- docs/games.md -----------------------------------------------------

const md = (s) => String(s).replace(/\|/g, '\\|')
const code = (s) => '`' + s + '`'
const queryPort = (r) => {
  if (r.queryPort) return String(r.queryPort)
  if (r.offsets.length && r.port) return `${r.port + r.offsets[0]} (${r.port} ${r.offsets.map((o) => (o < 0 ? '− ' + -o : '+ ' + o)).join(' or ')})`
  if (r.offsets.length) return `game port ${r.offsets.map((o) => (o < 0 ? '− ' + -o : '+ ' + o)).join(' or ')}`
  return r.port ? String(r.port) : '—'
}
const byProto = {}
for (const r of rows) {
  const k = r.protocol || '(none)'
  byProto[k] = (byProto[k] ?? 0) + 1
}
const withProtocol = rows.filter((r) => r.protocol).length
const mdSrc = `# Every game GameDig knows

<!-- Generated by scripts/gen-games.mjs from GameDig ${version}'s lib/games.js (MIT); do not edit: go tool task gen:games. -->

The ${rows.length} games of GameDig ${version} (its \`lib/games.js\`, MIT-licensed, read as data), by
GameDig's id: the id \`querylens query -g ID HOST[:PORT]\` and the browse page's game picker take (GameDig's
older ids too), the querylens protocol that answers what GameDig answers for the game, its options, the
query port, and the master filter where the protocol's master lists the game's servers. The Go table
(\`server/games\`, package games) is generated with this page by \`scripts/gen-games.mjs\`
(\`go tool task gen:games\`); \`go test ./server/games\` checks both against GameDig's list when it is
installed (\`npm ci --prefix tools/gamedig\`).

A game is served when its protocol is built into the binary: \`querylens games\` prints this table with
what the running binary serves, and why it does not serve the rest. ${withProtocol} of the ${rows.length} games have a
querylens protocol (${Object.entries(byProto).filter(([k]) => k !== '(none)').sort(([, a], [, b]) => b - a).map(([k, n]) => `${k} ${n}`).join(', ')});
the other ${rows.length - withProtocol} have none yet, for the reason given.

- **Query port**: a number is the game's query port; "N (P + K)" is its game port P plus the offset K,
  the port \`-g\` asks when given the game port (GameDig tries each offset of a game that has several;
  querylens asks the first).
- **Master filter**: Steam's \`\\appid\\N\` for the \`a2s\` master (the game picker), or a Quake III master's
  \`getservers\` arguments, or the name a GameSpy v1 master lists the game under (\`querylens master -g ID\`).
- **Notes** say where querylens's reading differs from GameDig's for the game.

| id | game | GameDig | querylens | query port | master filter | not served because / notes |
| --- | --- | --- | --- | --- | --- | --- |
${rows.map((r) => {
  const ids = [code(r.id), ...r.oldIDs.map((o) => `(${code(o)})`)].join(' ')
  const proto = r.protocol ? code(r.protocol) + (r.options ? ' ' + Object.entries(r.options).map(([k, v]) => code(`${k}=${v}`)).join(' ') : '') : '—'
  const filter = r.filter ? code(r.filter) + (r.masterAddr ? ' at ' + code(r.masterAddr) : '') : ''
  const why = r.protocol ? r.note : r.why + (r.note ? '; ' + r.note : '')
  return `| ${ids} | ${md(r.name)} | ${code(r.gamedig)} | ${proto} | ${md(queryPort(r))} | ${md(filter)} | ${md(why)} |`
}).join('\n')}
`

mkdirSync(join(out, 'server/games'), { recursive: true })
mkdirSync(join(out, 'docs'), { recursive: true })
writeFileSync(join(out, 'server/games/gamedig.go'), goSrc)
writeFileSync(join(out, 'docs/games.md'), mdSrc)
