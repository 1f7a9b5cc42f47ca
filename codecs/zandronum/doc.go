// Package zandronum decodes and builds the Zandronum launcher protocol
// (server queries, extended info, segmented replies) and the master-server
// list protocol, as used by Doom server browsers.
//
// The specification is docs/protocols/zandronum.md (corrected from
// the Zandronum server and master sources), with the Huffman layer in
// docs/protocols/huffman.md; the layout comments on the constants in zandronum.go follow
// it.
//
// # Flow
//
// Every datagram, in both directions, goes through Zandronum's Huffman
// layer (package huffman): the functions without a Payload suffix take and
// return datagrams as they are on the wire, the Payload ones the plain
// bytes inside.
//
//	launcher -> server (UDP 10666)  LONG 199, LONG flags, LONG time, [LONG flags2], [BYTE 2]
//	server -> launcher              LONG 5660023, LONG time, STRING version, LONG flags, fields by bit
//	                            or  LONG 5660024 (too soon) | 5660025 (banned), LONG time
//	                            or  n x LONG 5660032, BYTE number, BYTE total, SHORT offset,
//	                                    SHORT size, SHORT total size, chunk   (asked with BYTE 2)
//	launcher -> master (UDP 15300)  LONG 5660028, SHORT 2
//	master -> launcher              n x LONG 6, BYTE number, BYTE 8, {BYTE k, IP, k x SHORT port}, BYTE 0, BYTE 7|2
//	                            or  LONG 3 (banned) | 4 (too soon) | 5 (wrong version)
//	legacy: LONG 199 alone to a master -> LONG 0, {BYTE 1, IP, SHORT port}, BYTE 2
//
// A reply is decoded by the flags the server returned, never by the flags
// asked for: the server drops some (docs/protocols/zandronum.md 2.5), and fields follow in
// ascending bit order. Whether player records carry a team byte follows
// from the returned TEAMINFO flags, or from the request when it asked for
// SQF_TEAMINFO_NUMBER, or else from the game mode's table entry; when the
// reply contradicts the mode (a mod can change it), the other layouts are
// tried and Response.Guessed says what was inferred.
//
// Segments and master packets may arrive in any order; DecodeSegmented and
// DecodeMasterList take the whole set. Codec (registered as "zandronum")
// tells the kinds apart by their first LONG, and its Query drives a
// conversation: one request, then the reply, the segments or the master's
// packets until the set is complete.
//
// Decoding never panics and never allocates by a count read from the wire
// beyond what the rest of the datagram can hold. Errors are
// *codecs.Error naming the field path ("players[2].ping",
// "limits.timeleft", "sqf2.country"), the layer ("wire", "payload",
// "payload 2", "reassembled") and the offset in it; the partial result is
// returned with them. Strings are Latin-1 converted to UTF-8 and never
// alias the input; player names keep their colour escapes (StripColors
// removes them, and the neutral view does so).
//
// # Adding a field for a new SQF or SQF2 flag
//
//  1. Add the Flag or Flag2 constant with its wire layout as a comment, its
//     name in flagNames or flag2Names, and widen SQF_ALL or SQF2_ALL.
//  2. Add the field to Response, in bit order.
//  3. Add its decoder as the bit's case in body.field (or body.field2),
//     reading with the cursor's named reads; bound any count with
//     body.count.
//  4. Add the mirror image as the bit's case in encoder.field (or
//     encoder.field2).
//  5. Add an entry to responseFields (fields.go) at its place in wire
//     order: the bit, its snake_case key and a function reading its value
//     (TestFieldsTable checks the order and the value against the
//     decoder); add it to Response.Info if the neutral view has a key for
//     it.
//  6. Add a case to TestFieldRoundTrip, regenerate the golden dumps with
//     go test ./codecs/zandronum -update, and read the diff.
package zandronum
