// Package ogp encodes and decodes the Open Game Protocol, a UDP query
// protocol some games (Onset, JC2-MP, plugins for Half-Life and BFBC2)
// answer besides their own: a challenge number against spoofing, a header
// whose flag bits say which optional fields follow, and a "Default query
// v1" whose answer carries exactly the lists and fields the client's bit
// arrays asked for and the server chose to send. See
// docs/protocols/ogp.md.
//
// Two incompatible wire forms exist and both are spoken here. Deployed
// servers use 0.94+/1.0x (V1); the seed text describes v0.04 (V004), for
// which no implementation is known. Decoders detect the form from the
// bytes (HeadSize and Type positions and whether they are valid), never
// from a setting, and say which in Header.Version and the JSON's
// "version" field.
//
// # Flow
//
//	client                                      server
//	  FF FF FF FF "OGP\0" 03 01 00 ------------>            1.0x challenge request:
//	                                                        Default query header, no flags, no body
//	  <------------ FF FF FF FF "OGP\0" 07 FF 03 <challenge> 03
//	                                                        Type 0xFF error, bAnswer|bChallengeNumber,
//	                                                        error id 3 (invalid challenge number)
//	  FF FF FF FF "OGP\0" 07 01 12 <challenge> ---------->  the real query: the 4 bytes echoed,
//	      Requests ServerInfoFields ModFields MapFields     bUTF8, then seven VarBitArrays
//	      TeamFields PlayerFields AddOnFields
//	  <------------ header [SplitCount SplitNo] GameID Requests ...
//	                                                        the answer; with bSplit in the query
//	                                                        (MaxBytesPerPacket) it may come in
//	                                                        parts, in any order: packet 0 whole,
//	                                                        then each part's bytes after its header
//
// v0.04 has no separate challenge request: the query carries challenge
// 0xFFFFFFFF (or none) and a server without a valid number answers with a
// header-only "None" answer carrying its number (that is what the demo
// server does; the seed says only "you'll get one per answer packet").
//
// # Wire details taken from the official client
//
// The 1.0x field layout is the official PHP client's reading order (spec
// v0.94+; only the v1.01 header tables could be read): ServerInfoFields
// selects game name, server flags, host name, connect port, mod (ModFields
// follow only when ModName is not empty), game type, game mode, map
// (MapFields, then the name and the selected map fields), next map (only
// with the map, sharing its MapFields), then the four counts; then the
// team, player, rule, add-on and limit lists in that order. VarUINT, VarSINT
// and the types of team and player fields differ from v0.04 (see the
// constants' comments). The 1.0x query body is always all seven bit arrays,
// as that client sends them; a 1.0x query may also end after its header.
// HeadSize counts from itself to the end of the header; header bytes it
// covers beyond the known fields are kept in Header.Padding.
//
// StringColorInfo (1.0x, after host, team and player names when Requests
// bit 1.0 bColoredNames came back) is a VarUINT size and entries of VarUINT
// DeltaPosition, UINT8 ColorValue and, for values 0x90..0x9F, a UINT16.
// The official client's test for that range is always true (it reads the
// UINT16 after every value); the size bounds the damage either way. The
// entries are kept raw (Colors) and checked to fill the size exactly.
//
// # Decisions
//
//   - Everything an answer holds is driven by the bit arrays that came back
//     in it, never by what was asked. Flags a decoder cannot lay out
//     (unknown bits in a bit array that selects fields, flags past the
//     63rd) are ignored with the warning "unknown flag bits".
//   - Kinds: the 1.0x challenge answer (Type 0xFF with a challenge number)
//     and the v0.04 "None" answer with a challenge number are "challenge";
//     error id 0 and the v0.04 Banned type are "denied" + "banned"; any
//     other error answer is a "response" without info, with its id in the
//     fields ("error_id", "error") and the warning "error answer: <name>".
//     Ping, rcon and master-uplink answers are responses with a raw body.
//   - Neutral view: name is the host name; map the map name; game_type the
//     game type, else the game mode; password the 1.0x server flag (v0.04
//     has none); num_players PlayerCount, else the player list's length;
//     max_players SlotMax; version the 1.0x mod version, else a rule named
//     "version" (OGP has no server version field). A player's score is
//     PlayerScore, else PlayerFrags. Team -1 (1.0x) and 255 (v0.04, the
//     seed's spectator value) are no team: team null, spectator true.
//   - Lists are decoded entry by entry until their count or the bytes run
//     out, with room made only for the entries the bytes left can hold; a
//     list whose entries carry no fields may not claim more entries than
//     bytes remain. Nothing is allocated for counts the datagram cannot hold.
//   - Strings are Latin-1 unless a 1.0x header sets bUTF8.
//   - Trailing bytes after a complete message are the warning "trailing
//     bytes" from Codec.Decode and an error wrapping codecs.ErrTrailing
//     (with the complete value) from the typed decoders.
//
// Decoded byte slices alias the datagram. Decoding into a reused Response
// (Response.Decode) does not allocate once its lists have grown.
//
// Text fields are []byte as sent, where the other protocol packages return
// UTF-8 strings: their charset depends on the header's UTF8 flag, and a
// name's Colors index its bytes as sent, which a conversion would shift.
// Codec.Decode converts them for the neutral view and the JSON.
//
// # Adding a field
//
// Every optional field is one entry of a table in fields.go, which the
// decoder, the encoder, the JSON fields and the bit arrays' flag names all
// read; fields follow one another in the order of their flags.
//
//  1. Add its bit constant next to its bit array in ogp.go, with its wire
//     type per version in the comment, and the value to the struct.
//  2. Add its entry to the table of its bit array in fields.go, at its
//     flag's place: the flag (and, for a server field, its v0.04 Requests
//     flag), its name (the span path, the JSON key and the flag's name),
//     its form in each version (absent where the version has none) and
//     its offset. TestFieldTables checks the offset against the form's
//     type and the order against the flags. A new form needs its case in
//     the decoder's, the encoder's and the view's value, and its smallest
//     size in minSize.
//  3. If it maps to the neutral view, show it in message.go's info.
//  4. Add it to a golden packet (go test ./codecs/ogp -update) and check
//     the round trip, truncation and fuzz tests still pass.
//
// Adding a packet type: give it a Type constant, its code per version in
// Type.Code and typeOf, its body in decoder.answer/request and
// encoder.body, its kind in view.answerMessage and kindOf.
package ogp
