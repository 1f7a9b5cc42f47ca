// Package quake3 encodes and decodes the Quake III Arena query protocol and
// its master-server list, as spoken by ioquake3 and the games built on the
// id Tech 3 and DarkPlaces engines: OpenArena, Urban Terror, Xonotic,
// Wolfenstein: Enemy Territory, Return to Castle Wolfenstein, Call of Duty
// 1–4, Jedi Knight II/III, Tremulous, Warsow and others.
//
// Reference: docs/protocols/quake3.md.
//
// # Wire format
//
// Every datagram is connectionless: four 0xFF bytes, then a command word in
// plain text. Queries are one line; replies carry an "infostring", a list of
// \key\value pairs.
//
//	datagram   = FF FF FF FF command [ " " argument… ] [ "\n" | NUL ]
//	infostring = { "\" key "\" value }   keys and values hold no '\' and no newline
//	player     = score " " ping [ " " team ] " " '"' name '"' [ " " team ] "\n"
//
// # Flow
//
//	client                                          server (27960)
//	  | FF FF FF FF getstatus [challenge]              |  AppendRequest / DecodeRequest
//	  | ---------------------------------------------> |
//	  | FF FF FF FF statusResponse \n infostring \n    |  DecodeResponse
//	  |   player \n player \n …                        |
//	  | <--------------------------------------------- |
//	  | FF FF FF FF getinfo [challenge]                |
//	  | ---------------------------------------------> |
//	  | FF FF FF FF infoResponse \n infostring         |
//	  | <--------------------------------------------- |
//
//	client                                          master (27950)
//	  | FF FF FF FF getservers [game] protocol [filters]
//	  | FF FF FF FF getserversExt game protocol [filters]
//	  | ---------------------------------------------> |
//	  | FF FF FF FF getserversResponse  { "\" ip4:4 port:2 }
//	  | FF FF FF FF getserversExtResponse { "\" ip4:4 port:2 | "/" ip6:16 port:2 }
//	  |   … over as many datagrams as needed, the last ending in "\EOT\0\0\0"
//	  | <--------------------------------------------- |
//
// A challenge, when the query carries one, comes back as the infostring's
// "challenge" key. Master entries are read by position, never by looking
// for the markers: an address's six bytes may themselves be '\', '/' or the
// letters of EOT. The end marker is an IPv4 entry whose bytes are "EOT"
// and whose port is zero (or which the datagram cuts short); masters older
// than dpmaster 2.0 end every datagram with it, and some masters send none
// at all, so a conversation also ends on the caller's timeout and the list
// is then reported with WarnNoEnd.
//
// # Text and colours
//
// Text is decoded as Latin-1. Names keep their colour codes in Response and
// in the fields; the neutral view (Info) shows them stripped by
// StripColors, whose rules are documented there.
//
// # Adding a key to the neutral view
//
//  1. Add it to the lookup lists in info.go (the first key present wins).
//  2. Add a golden packet under testdata/ that carries it and run
//     `go test ./codecs/quake3 -update`; read the dump by hand.
package quake3
