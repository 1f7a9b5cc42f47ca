// Package mumble encodes and decodes the UDP ping of Mumble's server
// (murmur, mumble-server): how many users a voice server has, how many it
// takes, its version and the bandwidth it allows a client, asked without
// connecting.
//
// Reference: docs/protocols/mumble.md.
//
// # Wire format
//
// Big-endian, fixed sizes, no magic:
//
//	ping    = 00 00 00 00  ident:8
//	answer  = version:4 (00 MM mm pp)  ident:8  users:4  max_users:4  bandwidth:4
//
// # Flow
//
//	client                                   server (64738, UDP)
//	  | 00000000 ident                          |  AppendRequest / DecodeRequest
//	  | --------------------------------------> |
//	  | version ident users max bandwidth       |  AppendResponse / DecodeResponse
//	  | <-------------------------------------- |
//
// The ident is anything the client likes (Mumble's client sends a
// timestamp to time the round trip); the server echoes it. The relay
// shares one answer among pings that differ only in it (QueryKey), so the
// conversation does not insist on its own: Decode warns (WarnIdent) when
// told the ping and the ident differs.
//
// # Adding a field
//
// The answer has no room for one: a newer server that says more does so in
// another message (Mumble 1.5's protobuf ping), which would be a new
// request here, decoded by its own function, with its own golden packets
// under testdata/ (go test ./codecs/mumble -update).
package mumble
