package minecraft

import (
	"github.com/querylens/querylens/codecs"
	// Minecraft Java is a stream protocol: the page's side of it.
	_ "github.com/querylens/querylens/codecs/pagestream"
)

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
	codecs.Register(&BedrockCodec{})
	codecs.Describe(bedrockDescription)
}

// description is what the generic code knows of the Java List Ping
// beyond its codec (codecs.Description): a TCP conversation (one write,
// one VarInt-framed reply), SRV records, and the target's name and port
// inside the handshake. The status lists a sample of the players, never
// all of them. Minecraft has no join link scheme: a player adds the
// server by its address in the game.
var description = codecs.Description{
	Name:       Protocol,
	Transport:  codecs.TCP,
	MessageLen: MessageLen,
	// One reply packet; a few more messages allowed for a packet Feed
	// ignores before it (none is known), never more than 128 KiB.
	ReplyCap:      codecs.ReplyCap{Bytes: MaxReplyBytes, Datagrams: 4},
	SRV:           "_minecraft._tcp",
	TargetInQuery: true,
	// Every Java server answers the List Ping on 25565; GameSpy v4's
	// Query, on the same port by default, only where enable-query is set.
	DetectFirst: true,
	AllPlayers:  false,
	// The mode is the mod loader (forge, neoforge), when there is one.
	Row: []string{"name", "mode", "players", "max", "hay"},
}

// bedrockDescription: one datagram each way; the pong counts the players
// and lists none.
var bedrockDescription = codecs.Description{
	Name:     BedrockProtocol,
	ReplyCap: codecs.ReplyCap{Bytes: 2048, Datagrams: 1},
	Row:      []string{"name", "map", "mode", "players", "max", "hay"},
}
