// Package bloodmasters encodes and decodes the Bloodmasters server query:
// a launcher sends one 7-byte ServerInfo request to a game server's UDP
// port (6969 by default) and the server answers with one ServerInfo
// message describing the game and every connected client.
//
// Spec: docs/protocols/bloodmasters.md (§6), established from the game's C#
// source; the seed text's byte lengths and protocol 27/28 notes are
// corrected there.
//
// # Wire format
//
// A datagram holds one or more messages, each framed by its own length:
//
//	message  = length:u16le command:u8 [packet_id:u32be] data
//	           length counts the whole message, header included;
//	           packet_id is present when command has bit 0x80 (reliable) or is 0
//	string   = len:ULEB128 (1 byte < 128, 2 bytes < 16384, at most 5) bytes (ASCII)
//	bool     = u8 (0/1); every other integer is big-endian; shorts are signed
//
// # Flow
//
//	launcher                                   server (game port)
//	  |  07 00 0d <token:4>                       |  AppendRequest / DecodeRequest
//	  | -----------------------------------------> |
//	  |                                            |
//	  |  <len:u16le> 0d <token:4>                  |  AppendResponse / DecodeResponse
//	  |    title:string locked:bool website:string |
//	  |    max_clients:u8 max_players:u8           |
//	  |    game_type:u8 map:string                 |
//	  |    num_clients:u8 num_players:u8 protocol:u8
//	  |    -- protocol >= 27 --                    |
//	  |    score_limit:s16 time_limit:s16          |
//	  |    join_smallest_team:bool                 |
//	  |    num_clients x (name:string team:u8      |
//	  |                   spectator:bool ping:s16) |
//	  |    -- bytes left (protocol >= 28) --       |
//	  |    build_description:string                |
//	  | <----------------------------------------- |
//
// The server echoes the 4 token bytes unchanged; a request shorter than 7
// bytes gets no answer. Only protocol 29 exists in the game's history. The
// official launcher reads the extended block only when the protocol is 29
// and the build description only when bytes remain; the author's PHP client
// reads them for protocol >= 27 and >= 28. This package decodes what the
// bytes carry (the extended block for >= 27, the build description whenever
// the message's length leaves room for it) and warns where those readers
// would differ (the Warn constants).
//
// Decoded strings are UTF-8, the bytes as sent read as Latin-1 (a real
// server sends ASCII), and are written back as Latin-1. StripColors
// removes the game's '^' colour codes, which a real server has already
// removed from titles and names. The codec registered with package codecs
// (name "bloodmasters") shows the text with its codes in fields and
// without them in the neutral view.
//
// # Adding a field
//
//  1. Add it to Response (or Client) in wire order, with its type from the spec.
//  2. Read it in decode.go (serverInfo or extended) with a named cursor read
//     and d.mark(stage); add the stage constant in wire order.
//  3. Write it in AppendResponse at the same place.
//  4. Add it to replyFields (snake_case, gated by its stage) and, when it
//     has a neutral meaning, to info.
//  5. Add a golden packet under testdata/ that carries it and run
//     `go test ./codecs/bloodmasters -update`; check the dump by hand.
//  6. If readers could disagree about it, add a Warn constant and a case in warn.
package bloodmasters
