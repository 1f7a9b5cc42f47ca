// Package samp encodes and decodes the query protocol of San Andreas
// Multiplayer (SA-MP) and its successor open.mp, registered as "samp", and
// of Vice City: Multiplayer, registered as "vcmp": one family, two
// codecs (Codec and Codec{VCMP: true}).
//
// Reference: docs/protocols/samp.md.
//
// # Wire format
//
// Little-endian. Every query and reply starts with an 11-byte header:
//
//	header   = magic:4 ip:4 port:u16 opcode:1     "SAMP" (VC:MP: "VCMP", answered "MP04")
//	query    = header                             opcode i, r, c or d
//	         | header echo:4                      opcode p
//	info     = header [version:12] password:1 players:u16 max:u16 hostname:s32 gamemode:s32 third:s32
//	rules    = header count:u16 { name:s8 value:s8 }
//	clients  = header count:u16 { name:s8 score:i32 }
//	detailed = header count:u16 { id:1 name:s8 score:i32 ping:u32 }
//
// s8 and s32 are strings after a u8 or u32 length, in the server's code page
// (Charset); VC:MP's info reply starts with its 12-byte version.
//
// # Flow
//
//	client                                        server (7777; VC:MP 8192)
//	  | SAMP ip port 'i'   SAMP ip port 'r'          |  AppendRequest / DecodeRequest
//	  | -------------------------------------------> |
//	  | SAMP ip port 'i' info   SAMP ip port 'r' rules
//	  | <------------------------------------------- |  DecodeResponse
//	  | SAMP ip port 'd' (open.mp, VC:MP: 'c')       |  when 0 < players < 100
//	  | -------------------------------------------> |
//	  | SAMP ip port 'd' players                     |
//	  | <------------------------------------------- |
//
// The reply repeats the query's header (VC:MP's with its own magic). The
// address and port in it are the server's, as the client addressed it;
// servers echo them without checking, so the conversation sends what the
// options "ip" and "port" say (0.0.0.0:0 unless told) and matches replies
// by magic and opcode alone. CheckQuery lets any header through: every
// query's length is fixed by its opcode, so nothing else rides along.
//
// # Text, the third string, scores
//
// Text is decoded from the code page the "charset" option names
// (Windows-1252 unless told; Windows-1251 for Cyrillic servers; UTF-8),
// with tables in charset.go. The info reply's third string is the
// server's language to open.mp and the map to older clients: the field is
// named "language" when the rules show open.mp (allowed_clients, or a
// version starting "omp"), "map" otherwise, and the neutral view's map is
// the mapname rule when there is one. Scores are signed 32-bit.
//
// # Adding a field or an opcode
//
//  1. The layout beside its Opcode constant in samp.go, the reader in
//     decode.go (readResponse), the writer in encode.go (AppendResponse).
//  2. Its fields in codec.go (fields) and, if a row shows it, info.
//  3. A golden packet under testdata/ (go test ./codecs/samp -update), read
//     by hand; CheckQuery stays a list of fixed lengths.
package samp
