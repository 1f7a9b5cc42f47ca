// Package wire is the relay's vocabulary: the frames of its WebSocket
// protocol and their encoders, the query target and its syntax, and the
// refusals (ERROR codes, rule names and the typed RefusedError). The relay
// (package relay), its clients and the server model all speak it; it
// imports the standard library alone and no fmt, so that it compiles into
// the browser module too.
//
// The protocol is described for readers in docs/relay-protocol.md. Every
// frame is a type byte and a payload; integers are big-endian and "rest"
// is the remaining bytes of the message:
//
//	client to relay
//	0x01 QUERY   u32 id | u8 n | protocol[n] | u8 m | target[m] | datagram (rest)
//	0x02 PING    u32 nonce
//	0x03 CANCEL  u32 id
//	0x04 RELEASE u32 id
//	0x05 EXCHANGE u32 id | u8 n | protocol[n] | u8 m | target[m] | (u8 k | key[k] | u8 v | value[v])*  (v2)
//
//	relay to client
//	0x80 HELLO   u8 version | u16 max datagram | u32 window ms | u16 max in flight | u32 cache TTL ms
//	0x81 REPLY   u32 id | u32 rtt µs | u8 flags | datagram (rest)
//	0x82 END     u32 id | u8 reason | u16 replies sent
//	0x83 ERROR   u32 id (0: unreadable) | u8 code | u16 n | message[n] (UTF-8, "rule: detail")
//	0x84 PONG    u32 nonce
//
//	0x86 CHUNK   u32 id | u32 offset | u8 flags | data (rest)  (v2)
//
//	both ways, SubprotocolBatch and SubprotocolStream only
//	0x85 BATCH   (u16 n | frame[n])+ to the message's end
//
// SubprotocolStream (querylens.relay.v2) is SubprotocolBatch with the
// stream exchanges: EXCHANGE asks the relay to hold one conversation of a
// TCP protocol, CHUNK carries its reply's bytes, END then gives one of the
// stream reasons (EndDone and after); HELLO says VersionStream.
//
// Adding a frame type: give it a constant with its layout beside it, a
// name in frameNames, a case in ParseFrame and AppendFrame (and an Append
// helper if a sender builds it on its hot path), a round-trip case in
// TestFrameRoundTrip, a seed in FuzzParseFrame, and a row in
// docs/relay-protocol.md. A change to an existing frame's layout is a new
// Subprotocol name, never an edit in place.
package wire
