// Package doom3 is the query protocol of id Tech 4, the engine of Doom 3,
// Quake 4, Prey, Enemy Territory: Quake Wars (ETQW) and Wolfenstein
// (2009): a getInfo query and an infoResponse that carries the server's
// settings as key/value pairs, its players and a few trailing fields.
//
// Spec: docs/protocols/doom3.md (from GameDig's protocols/doom3.js and
// qstat's doom3.c).
//
//	client                                   server (UDP, port 27666 for Doom 3)
//	  | FF FF "getInfo" 00 challenge u32le [u32le]  |
//	  |-------------------------------------------->|
//	  | FF FF "infoResponse" 00 [task id u32le]      |   ETQW echoes two words
//	  |   challenge u32le  version u32le [size u32le]|
//	  |   (key 00 value 00)* 00 00                   |
//	  |   (id u8 ping u16 [rate u32] name 00 …)* 32  |   the record differs per game
//	  |   os mask u32le [ETQW's tail]                |
//	  |<--------------------------------------------|
//
// # Which game
//
// The reply does not name its game, and the games lay out their player
// records differently (Game). Decode picks the layout from the protocol
// version (GuessGame: major 1 Doom 3, 2 Quake 4, 3 and 4 Prey, 10 to 15
// ETQW, read four bytes further on as ETQW puts a task id first); a
// reply of another version is read as Doom 3's and, failing that, as
// Wolfenstein's. The query option "game" names the layout instead, as
// qstat's server types do (-dm3s, -q4s, -preys, -etqws, -wolfs).
//
// # Adding a field or a game
//
//  1. The field in Response or Player, with its Has flag if the games
//     differ; the predicate that says which games send it (hasRate,
//     hasClan, …) in doom3.go.
//  2. Read it in readResponse/readPlayers (decode.go) with its span's
//     field name, write it in AppendResponse (encode.go) under the same
//     predicate.
//  3. Add it to fields and, if a page shows it, to info (codec.go).
//  4. A golden packet in testdata (hand-built, its first line saying
//     so), go test -update, and the docs page.
package doom3
