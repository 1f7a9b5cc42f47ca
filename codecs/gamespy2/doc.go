// Package gamespy2 decodes and builds GameSpy query protocol v2 (GS2):
// the query a server browser sends to a game that links the GameSpy QR2
// SDK, and the server's reply (rules, players, teams).
//
// Spec: docs/protocols/gamespy2.md (corrected from the QR2 SDK's qr2.c and
// the GameDig, qstat and opengsq clients).
//
// # Flow
//
//	client                                   server (QR2 SDK)
//	  fe fd 00 <id:4> <S> <P> <T>   ------->   S, P, T: 00 none, ff all with names,
//	                                           N then N key numbers (values only)
//	  00 <id:4>                     <-------   header: echoed packet type and id
//	    [key 00 value 00]... 00                  server keys (ff): pairs, extra NUL
//	    [value 00]...                            server keys (N): values only
//	    <count:be16> [name 00]... 00             players (ff): names end in "_"
//	      [value 00]... count rows               values row by row
//	    <count:be16> [name 00]... 00             teams (ff): names end in "_t"
//	      [value 00]... count rows
//
// One query may ask for any of the three sections; GameDig sends three
// queries with one section each (Codec.NewQuery's style "split"), qstat one
// for all (style "combined"). The reply is built in a 1400-byte buffer and
// cut when full (MaxReply): the value being written is shortened, still
// ends in NUL, and nothing follows. Some servers that do not use the SDK
// send one-byte counts. Text is Latin-1 on the wire and UTF-8 in Go.
//
// # Decoding
//
// DecodeResponse reads a reply with the request it answers, or without
// (the sections are then inferred from the bytes). Either way it first
// walks the bytes without allocating, once per candidate layout (which
// sections, 16-bit or one-byte counts), ranks each by whether it reads to
// the last byte and whether its key and column names follow GameSpy's
// conventions, and then decodes the best one into slices sized by that
// walk. A reply that ends early is not an error: what it holds is returned
// with Truncated set, and Codec.Decode adds the "truncated" warning.
//
// # Adding a field
//
//  1. A server key or a player/team column needs no code: every key and
//     column is decoded by name into Response.Rules or Table.Fields/Rows.
//  2. To show it in the neutral view, map it in info.go (Response.Info)
//     and say so in the Info doc comment.
//  3. If it has a standard key number (qr2regkeys.h), add a Key constant
//     and its name to keyNames in gamespy2.go, so index-mode requests name it.
//  4. Add it to sample() in helpers_test.go, run go test -update, and read
//     the new lines of testdata/*.golden before committing them.
package gamespy2
