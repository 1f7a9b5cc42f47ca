// Package gamespy3 decodes and builds the GameSpy query protocol v3 and
// v4 (GameSpy v4 is v3 with a challenge first) and Minecraft's Query,
// which copies it: Unreal Tournament 3, Crysis, Battlefield 2 and 2142,
// and every Minecraft server with enable-query set.
//
// Reference: docs/protocols/gamespy3.md (layouts, reassembly, pitfalls,
// and the decisions taken here).
//
// # Flow
//
//	client                                      server
//	  fe fd 09 <session:4>             ------->   challenge request (v4, Minecraft);
//	    [00 00 00 00]                               GameDig pads it with four zeros
//	  09 <session:4> "-1234567" 00     <-------   the challenge as decimal text
//	  fe fd 00 <session:4>             ------->   full stat query: the challenge as a
//	    [<challenge:i32be>]                         big-endian int32 (none in v3, none
//	    ff ff ff 01                                 when the text was "0"); payload
//	                                                ff ff ff 01, Minecraft 00 00 00 00
//	  00 <session:4> "splitnum" 00     <-------   one or more packets, in any order:
//	    <id:1> <extra:1>                            id & 0x7f = number from 0,
//	                                                id & 0x80 = the last packet
//	    [key 00 value 00]... 00                     packet 0: server keys, empty key
//	    { <marker:1>                                bytes <= 2: 01 players, 02 teams,
//	      | name 00 <offset:1>                      00 ends a section; a field: its
//	        [value 00]... 00 }...                   name ("score_", "team_t"), the
//	                                                index of its first item in this
//	                                                packet, values to an empty one
//
// A field may continue in a later packet with a larger offset; its runs
// are joined by offset, never by order of arrival. A packet without the
// "splitnum" header is a whole reply by itself. Minecraft's reply is one
// packet whose header is "splitnum" 00 80 00 and whose only field is
// "player_". Text is Latin-1 on the wire and UTF-8 in Go.
//
// # Decoding
//
// DecodeResponse reads one datagram; Reassemble joins the packets of a
// stat reply (at most MaxPackets packets and MaxReplyBytes bytes, each
// number once); Codec.Decode does both for a conversation and gives one
// layer per datagram, its spans tiling it. A packet that ends inside a
// string is kept with Truncated set; a missing packet makes the result an
// error wrapping codecs.ErrIncomplete, with the reply built from the
// packets that came.
//
// # Adding a field
//
//  1. A server key, a player field or a team field needs no code: every
//     key and field is decoded by name into Reply.Rules or Table.
//  2. To show it in the neutral view, map it in Reply.Info (reply.go) and
//     say so in its doc comment.
//  3. Add it to a hand-written packet under testdata/, run
//     go test ./codecs/gamespy3 -update, and read the new lines of the
//     .golden files before committing them.
package gamespy3
