// Package minecraft encodes and decodes the status pings of Minecraft:
// Java Edition's Server List Ping over TCP (registered as "minecraft") and
// Bedrock Edition's RakNet unconnected ping over UDP ("bedrock").
//
// Reference: docs/protocols/minecraft.md.
//
// # Java Edition: Server List Ping (TCP, port 25565)
//
// Every packet is a VarInt length (7 bits a byte, low first, at most five
// bytes) and that many bytes: a VarInt packet id and its fields. Strings
// are a VarInt byte count and UTF-8.
//
//	client                                             server
//	  | handshake: 00, VarInt protocol, string host,      |  AppendRequest / DecodeRequest
//	  |   u16 port, VarInt next state (1: status)         |
//	  | status request: 00                                |  (both in one write)
//	  | ------------------------------------------------> |
//	  | status response: 00, string JSON                  |  DecodeResponse
//	  | <------------------------------------------------ |
//
// The JSON holds the description (a string or a chat component with
// extra, colours and styles, and § codes inside its text), version {name,
// protocol}, players {online, max, sample [{name, id}]}, the favicon (a
// data:image/png;base64 URI), enforcesSecureChat, and the mods of a Forge
// (forgeData.mods) or FML (modinfo.modList) server. It is read by a
// bounded reader of this package's own (json.go: depth, values and size
// bounded; encoding/json would not fit the browser module). The favicon's
// PNG header is checked by hand (at most 64×64); a server that shows the
// icon decodes it only after image.DecodeConfig agrees.
//
// The handshake carries the server's name and port as the user typed them
// (proxies route on them): the conversation is built with the options
// host and port (codecs.Description.TargetInQuery), and CheckQuery
// refuses a host that is not letters, digits, dots and hyphens (colons
// for an IPv6 address), at most 253 bytes.
//
// The stream is cut into packets by MessageLen (the relay's
// codecs.Description.MessageLen); a frame that cannot be a reply (a VarInt
// past five bytes, a length past MaxReplyBytes) ends the conversation with
// an error instead of waiting.
//
// Servers of 1.6 and older answer the legacy ping instead (option
// legacy): FE 01 FA, "MC|PingHost" and the host and port in UTF-16BE; the
// reply is FF, a count of UTF-16 units and "§1\0proto\0version\0motd\0
// online\0max" (1.4 to 1.6), or "motd§online§max" (beta 1.8 to 1.3).
// Servers from 1.7 on answer it too, in the 1.6 form.
//
// # Bedrock Edition: unconnected ping (UDP, port 19132)
//
//	client                                             server
//	  | 01 | u64 time | magic | u64 client GUID           |  AppendBedrockRequest
//	  | ------------------------------------------------> |
//	  | 1C | u64 time | u64 server GUID | magic |         |  DecodeBedrockResponse
//	  |   u16 length | MOTD                               |
//	  | <------------------------------------------------ |
//
// magic is RakNet's offline message magic, 00ffff00fefefefefdfdfdfd12345678.
// The MOTD is ';'-separated: edition (MCPE, MCEE), name, protocol,
// version, players, max, server id, second line (the level's name), game
// mode, game mode number, IPv4 port, IPv6 port; old servers send the first
// six only.
//
// # Adding a status member
//
//  1. Read it in readStatus (decode.go) from the jdoc, into a Status field.
//  2. Show it in fill (codec.go): Info if the neutral view has a place for
//     it, Fields always.
//  3. Add a golden (testdata/*.hex, built from the JSON), run
//     `go test ./codecs/minecraft -update` and read the dump.
//  4. Say what it is in docs/protocols/minecraft.md.
package minecraft
