// Package quake2 encodes and decodes the status protocol of the id
// engines between Quake and Quake III, in three dialects, each registered
// as a codec of its own: Quake II ("quake2", and the games on its engine:
// Alien Arena, Daikatana, …), QuakeWorld ("quakeworld": QuakeWorld and its
// servers, MVDSV, FTE, ezQuake's) and HexenWorld ("hexen2", Hexen II's
// internet play); and the UDP masters of Quake II and QuakeWorld.
//
// Reference: docs/protocols/quake2.md.
//
// # Wire format
//
// A status query is connectionless: four 0xFF bytes (five for HexenWorld),
// then "status" and, from qstat, a flags word. The reply is the server's
// console output of its status command: a header, the serverinfo as one
// line of \key\value pairs, then one line per player.
//
//	query      = FF FF FF FF [FF] "status" [" " flags] ["\n"] [NUL]
//	q2 reply   = FF FF FF FF "print\n" serverinfo "\n" { score " " ping " " '"' name '"' [" " '"' address '"'] "\n" }
//	qw reply   = FF FF FF FF [FF] "n" serverinfo "\n"
//	             { id " " frags " " time " " ping " " '"' name '"' " " '"' skin '"' " " top " " bottom "\n" } [NUL]
//	qw master  = "c" ["\n"] [NUL]         → FF FF FF FF "d\n" { ip:4 port:2 }
//	q2 master  = "query" ["\n"] [NUL]     → FF FF FF FF "servers" (" " | "\n") { ip:4 port:2 }
//
// # Flow
//
//	client                                        server (27910, 27500, 26950)
//	  | FF FF FF FF [FF] status                      |  AppendRequest / DecodeRequest
//	  | -------------------------------------------> |
//	  | FF FF FF FF print\n | [FF] n  serverinfo …   |  DecodeResponse
//	  | <------------------------------------------- |
//
//	client                                        master (27900, 27000)
//	  | query\n\0 | c\n                              |
//	  | -------------------------------------------> |
//	  | FF FF FF FF servers␠ | d\n  entries          |  one datagram
//	  | <------------------------------------------- |
//
// # Text
//
// Text is bytes in the Quake character set: its lower half is ASCII and
// its upper half the same glyphs in another colour, with dots, brackets,
// gold digits and bar pieces below 0x20. Response and the fields keep the
// bytes (each one a Latin-1 code point); the neutral view (Info) shows
// names, the host name and the map through Readable.
//
// # Adding a key to the neutral view
//
//  1. Add it to the lookup lists in codec.go (the first key present wins).
//  2. Add a golden packet under testdata/ that carries it and run
//     `go test ./codecs/quake2 -update`; read the dump by hand.
package quake2
