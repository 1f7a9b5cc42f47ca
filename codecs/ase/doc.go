// Package ase encodes and decodes the All-Seeing Eye query protocol (ASE,
// named after the server browser that introduced it), as spoken by Multi
// Theft Auto, Far Cry, Chrome, Painkiller and the other games GameDig
// lists under protocol "ase" (docs/protocols/ase.md "Ports" has the
// table), and that qstat reads with -eye.
//
// Reference: docs/protocols/ase.md.
//
// # Wire format
//
// One query byte, one reply datagram. Every value of the reply is text,
// even the numbers, each string a length byte that counts itself and the
// bytes (so "\x04mta" is "mta", and "\x01" the empty string):
//
//	query    = 's'
//	reply    = "EYE1" game port hostname gametype map version password
//	           numplayers maxplayers { key value } "\x01" { player }
//	string   = len (1..255, counting itself) len-1 bytes
//	player   = flags [name] [team] [skin] [score] [ping] [time]
//	flags    = byte: 0x01 name, 0x02 team, 0x04 skin, 0x08 score,
//	           0x10 ping, 0x20 time; a field follows only when its bit is set
//
// The rules end with an empty key; the players run to the end of the
// datagram (no count: numplayers is the server's own count).
//
// # Flow
//
//	client                                  server (MTA: game port + 123 = 22126)
//	  | s                                      |  AppendRequest / DecodeRequest
//	  | -------------------------------------> |
//	  | EYE1 \x04mta \x0622003 … \x01 players  |  AppendResponse / DecodeResponse
//	  | <------------------------------------- |
//
// # Decoding
//
// DecodeResponse keeps every string as sent (bytes in a Go string), so a
// reply re-encodes byte for byte. A length byte of 0 (less than its own
// byte) and one that runs past the datagram are errors naming the field
// at the length byte; rules without their end marker are cut short. A
// player field whose flag bit is off is absent: Player.Has tells it from
// a field sent empty, the "fields" object leaves its key out, and the
// neutral view (Codec.Decode) shows 0 for a missing score or ping and no
// team for a missing team. Text that is valid UTF-8 (MTA's) is shown as
// it is, other text as Latin-1.
//
// # Adding a field
//
//  1. A server key needs no code: every rule is kept, in wire order, and
//     Response.Rule finds it.
//  2. A new player flag bit: add its constant to Flags, its field to
//     Player, its name to flagFields in wire order and its case to
//     Player.field; the decoder, the encoder and the fields object follow
//     the table. Say in info (codec.go) whether the neutral view shows it.
//  3. Add a golden datagram to testdata/ that carries it, run
//     `go test ./codecs/ase -update`, and read the new dump by hand.
//  4. Note it and the game that sends it in docs/protocols/ase.md.
package ase
