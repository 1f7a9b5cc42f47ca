// Package gamespy1 encodes and decodes the GameSpy v1 query protocol (the
// "QR" protocol of the first GameSpy SDK), as spoken by Unreal, Unreal
// Tournament (UT99), Battlefield 1942, Medal of Honor: Allied Assault and
// the other games GameDig lists under protocol-gamespy1.
//
// Reference: docs/protocols/gamespy1.md.
//
// # Wire format
//
// Everything is text, Latin-1, with no header and no magic: a query is one
// or more words between backslashes, a reply a list of \key\value pairs.
//
//	query    = word { word }             at most MaxWords, each once
//	word     = "\" name "\" [ value [ "\" ] ]   a value only on the last may stay open
//	name     = status | basic | info | rules | players | echo | secure
//	value    = text (echo, secure) | "xserverquery"
//	datagram = { "\" key "\" value } [ "\" ]   keys non-empty; neither holds '\'
//	queryid  = "\queryid\" ID [ "." N ]     ID: the query's number; N: the datagram's, from 1
//	final    = "\final\"                    in the datagram with the highest N
//
// # Flow
//
//	client                                        server (UT99: 7778)
//	  | \status\                                     |  AppendRequest / DecodeRequest
//	  | -------------------------------------------> |
//	  | \gamename\ut\gamever\436…\queryid\12.1       |  basic
//	  | \hostname\…\numplayers\3…\queryid\12.2       |  info
//	  | \fraglimit\30…\queryid\12.3                  |  rules
//	  | \player_0\Gumby\frags_0\12…\queryid\12.4     |  one datagram per player
//	  | \player_2\…\final\\queryid\12.6              |  or …\queryid\12.6\final\
//	  | <------------------------------------------- |  in ANY order
//
// The datagrams of one reply arrive in any order, the final one perhaps
// first. Codec.Decode and the conversation put them back in order by N,
// drop duplicates, and call the reply complete once the final datagram
// and every N from 1 to its own have come. A reply is bounded: at most
// MaxDatagrams datagrams and MaxReplyBytes bytes. The master list comes
// over TCP after a challenge (master.go): a conversation the querylens
// server and the command line hold, not the relay.
//
// # Decoding
//
// DecodeResponse reads one datagram into Response: its pairs in wire
// order, with the queryid and final pairs taken out into QueryID and
// Final. Codec.Decode reassembles a reply and maps it onto the neutral
// view (info.go): hostname, mapname, players from their player_N keys in
// each game's dialect, every other key a rule. The protocol has no colour
// codes; control characters are dropped from the neutral view's text.
//
// # Adding a key
//
//  1. A server key needs no code: every key is a rule, and Response.Var
//     finds it.
//  2. A per-player key (name_N) is a rule until its base is listed in
//     playerBases in info.go; give it a playerField there if the neutral
//     view shows it, and say so in the doc comment of info.
//  3. Add a golden datagram to testdata/ that carries it, run
//     `go test ./codecs/gamespy1 -update`, and read the new dump by hand.
//  4. Note the key and the game that sends it in the dialect tables of
//     docs/protocols/gamespy1.md.
package gamespy1
