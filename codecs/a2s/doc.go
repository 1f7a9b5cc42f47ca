// Package a2s encodes and decodes Valve's A2S server queries, which most
// Steam game servers answer (Source and GoldSrc games, and many others
// built on Steam's server library), and the Steam master server's list.
//
// References: the Valve Developer Community pages "Server queries" and
// "Master Server Query Protocol"; the maintainers' notes, with the
// pitfalls of the clients people use, are in docs/protocols/a2s.md.
//
// # Wire format
//
// Every integer is little-endian except a master entry's port; strings are
// UTF-8 ended by a NUL. A server datagram starts with a header:
//
//	FF FF FF FF  type body                 one whole message
//	FE FF FF FF  id:s32 ...                one part of a split message (split.go)
//
// # Flow
//
//	client                                          server (query port, 27015)
//	  FF FF FF FF 'T' "Source Engine Query\0" ---->   A2S_INFO
//	  <---- FF FF FF FF 'A' challenge:4               servers since Dec 2020 ...
//	  FF FF FF FF 'T' "Source Engine Query\0" challenge ---->
//	  <---- FF FF FF FF 'I' protocol name map folder game app_id:u16
//	        players max bots type env visibility vac [ship] version
//	        [edf:u8 [port] [steam_id:u64] [tv_port tv_name] [keywords] [game_id:u64]]
//	        (or GoldSrc's 'm': address name map folder game players max
//	        protocol type env visibility mod [mod info] vac bots)
//	  FF FF FF FF 'U' FF FF FF FF ---------------->   A2S_PLAYER: ask for a challenge
//	  <---- FF FF FF FF 'A' challenge:4
//	  FF FF FF FF 'U' challenge:4 ---------------->
//	  <---- FF FF FF FF 'D' count:u8 count x (index:u8 name score:s32 duration:f32)
//	        [The Ship: count x (deaths:s32 money:s32)]
//	  FF FF FF FF 'V' challenge:4 ---------------->   A2S_RULES (same challenge)
//	  <---- FF FF FF FF 'E' count:u16 count x (name value)   often split:
//	  <---- FE FF FF FF id total number size [raw_size crc32] fragment   x total
//
//	client                                          Steam master
//	  '1' region:u8 "0.0.0.0:0\0" "\appid\440\0" -->
//	  <---- FF FF FF FF 66 0A (ip:4 port:u16be) x n
//	  '1' region "last ip:port\0" filter ---------->   the next page, seeded
//	  <---- ... 00 00 00 00 00 00                      0.0.0.0:0 ends the list
//
// # Decisions
//
//   - The split form (Source with the size field, the older Source form
//     without it, GoldSrc's one-byte number and total) is read from packet
//     0: the form under which the payload starts where it should (FF FF FF
//     FF, or "BZh" for a compressed one). Never from the app id, which is
//     how qstat misreads Source splits of some apps.
//   - Parts come in any order; a second copy of a packet number is ignored
//     and counted ("duplicates"). Missing parts give ErrIncomplete and the
//     warning "truncated", with what joins up from packet 0 decoded.
//   - A compressed message (a Source id with its top bit set) is decompressed
//     with the package's own bzip2 decoder (bzip2.go: compress/bzip2 put
//     the family over its share of the browser module) into a buffer of exactly
//     the announced size, which must be at most MaxDecompressed before
//     anything is allocated; fewer or more bytes, or another CRC32, are
//     errors.
//   - The reply to one query (one message, whole or split) is read to at
//     most MaxDatagrams datagrams and MaxBytes bytes, the relay's caps per
//     query, so the info, player and rules replies each get the whole cap;
//     one Decode reads at most four times that in all. The rest are
//     dropped, counted ("dropped_datagrams") and the message carries the
//     warning "truncated".
//   - The Ship (app 2400) adds three bytes to the info reply; its player
//     reply's extra deaths and money are recognised by the bytes left being
//     exactly eight per player. Otherwise bytes left that are only whole
//     player entries, a multiple of 256 of them, are read as players past a
//     count that wrapped (the count is one byte).
//   - Clients ask for a challenge with FF FF FF FF, never four zeros. The
//     conversation keeps the challenge of one step for the next: servers
//     hand one challenge per client.
//   - QueryKey replaces a challenge with a fixed five-byte marker (see
//     Codec.QueryKey), so a relay's cache and coalescing work across pages.
//   - Neutral view: name, map, the game description as game type, the
//     version, password from the visibility byte, players (bots included)
//     and max players; player names and scores; then as rules what the
//     info reply says beyond those (bots, vac, os, server_type, keywords,
//     folder, app_id, protocol, port, steam_id) followed by the server's
//     rules. Codec.Decode's fields keep every decoded field; the 64-bit
//     SteamID and game id are strings there.
//   - Trailing bytes after a message are the warning "trailing bytes" from
//     Codec.Decode and an error wrapping codecs.ErrTrailing from the typed
//     decoders.
//
// Decoded strings are copies; nothing aliases the datagrams.
//
// # Adding a field
//
//  1. Add it to the struct in a2s.go in wire order, with its type in the
//     comment (and its flag constant if a flag byte announces it).
//  2. Read it in decode.go at its place with a named cursor read, so it
//     gets a span.
//  3. Write it in encode.go at the same place.
//  4. Show it in message.go (infoFields and, when it has a neutral meaning,
//     neutral).
//  5. Add it to a fixture in fixtures_test.go, run
//     `go test ./codecs/a2s -run TestWriteFixtures -update` and then
//     `go test ./codecs/a2s -update`, and read the golden diff.
//
// Adding a message type: a Type constant with its layout, its case in
// readRequest or readResponse and in AppendRequest or AppendResponse, where
// view.decode files it, and its kind in view.message and Codec.Detect.
package a2s
