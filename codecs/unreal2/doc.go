// Package unreal2 encodes and decodes the Unreal Engine 2 server query, as
// spoken by Unreal Tournament 2003 and 2004, Killing Floor, Red Orchestra,
// Darkest Hour, Devastation and Unreal 2: The Awakening - XMP (the games
// GameDig lists under protocol unreal2; qstat's -ut2s).
//
// Reference: docs/protocols/unreal2.md.
//
// # Wire format
//
// Binary, little-endian. Every datagram starts with a four-byte version
// and a type: GameDig sends 79 00 00 00 (UT2003's), qstat 78 00 00 00;
// servers answer with their own (80 00 00 00 for UT2004, Killing Floor
// and Red Orchestra). qstat also asks type 3, the rules and the players
// at once.
//
//	query    = version:u32 type:u8                 type 0 info, 1 rules, 2 players, 3 rules and players
//	info     = version 00 server_id:u32 ip:string game_port:u32 query_port:u32
//	           name:string map:string game_type:string num_players:u32 max_players:u32 tail
//	tail     = [ ping:u32 ]                                     UT2003
//	         | ping:u32 flags:u32 skill:string                  UT2004, Red Orchestra
//	         | wave:u32 waves:u32 ping:u32 flags:u32 skill:string   Killing Floor
//	rules    = version 01 { key:string value:string }           to the end of the datagram
//	players  = version 02 { id:u32 name:string ping:u32 score:s32 stats_id:u32 }
//	string   = len:u8 < 80: len bytes of Latin-1 (a NUL terminator counted, usually)
//	         | len:u8 ≥ 80: [01] (len & 7F) UCS-2 code units, little-endian
//
// Text may hold colour codes, 1B R G B (four bytes, or four code units):
// String keeps them apart (Colours) and the spans show each one; the
// neutral view drops them and the other control characters.
//
// # Flow
//
//	client                                   server (UT2004: 7778)
//	  | 79 00 00 00 01   rules                  |  AppendRequest / DecodeRequest
//	  | 79 00 00 00 02   players                |
//	  | 79 00 00 00 00   info                   |
//	  | --------------------------------------> |
//	  | 80 00 00 00 01 …   rules, 1..n datagrams|  AppendResponse / DecodeResponse
//	  | 80 00 00 00 02 …   players, 0..n        |
//	  | 80 00 00 00 00 …   info, one datagram   |
//	  | <-------------------------------------- |
//
// Rules and players carry no count and no end marker. The conversation
// asks the server info last: a server answers in order, so the info
// closes the lists before it (NewQuery).
//
// # Adding a field
//
//  1. A rule needs no code: every pair is a rule. A rule the row shows
//     (GamePassword, ServerVersion) is read in collected.info.
//  2. A new server-info tail is a Dialect: add it, read it in readInfo,
//     write it in AppendResponse, and teach guessDialect (or the rules
//     test, isKF) to tell it from the others.
//  3. Add a golden to testdata/, run `go test ./codecs/unreal2 -update`,
//     and read the new dump by hand; note the game in
//     docs/protocols/unreal2.md.
package unreal2
