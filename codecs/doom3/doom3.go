package doom3

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// Protocol is the registry name of the codec.
const Protocol = "doom3"

// DefaultPort is Doom 3's query port (its game port: id Tech 4 answers
// queries on the port it plays on). The other games' usual ports are in
// the description (register.go).
const (
	DefaultPort      = 27666
	PortQuake4       = 28004
	PortPrey         = 27719
	PortETQW         = 27733
	PortWolfenstein  = 27758
	MaxQueryLen      = 32 // "getInfo" and at most 8 bytes of challenge, with room to spare
	maxPlayersListed = 32 // MAX_ASYNC_CLIENTS: the id that ends the player list
)

// Magic starts every connectionless datagram of id Tech 4 (a 16-bit -1).
const Magic = "\xff\xff"

// The commands.
const (
	CmdGetInfo      = "getInfo"      // challenge (u32le) [second u32le: ETQW's task id first]
	CmdInfoResponse = "infoResponse" // see Response
)

// Game is the dialect of a reply: the player record and the fields after
// the list differ between the games that share the protocol.
type Game uint8

const (
	// GameAuto: the decoder picks the dialect from the protocol version
	// (docs/protocols/doom3.md, "Which game").
	GameAuto   Game = iota
	GameDoom3       // id, ping u16, rate u32, name; list ends at id 32
	GameQuake4      // Doom 3's record and a clan tag
	GamePrey        // Doom 3's record
	GameETQW        // task id before the challenge, a size after the version; id, ping, [rate], name, [clan position, clan], bot; a longer tail
	GameWolf        // Doom 3's record and a bot flag (as qstat reads it); the list ends at id 16 (or 32)
	gameCount
)

var gameNames = [gameCount]string{"auto", "doom3", "quake4", "prey", "etqw", "wolf"}

// String is the game's option value ("doom3", "etqw", …).
func (g Game) String() string {
	if g < gameCount {
		return gameNames[g]
	}
	return "game" + string(rune('0'+g%10))
}

// GameByName is the Game of an option value; false for an unknown one.
func GameByName(s string) (Game, bool) {
	for i, n := range gameNames {
		if n == s {
			return Game(i), true
		}
	}
	return 0, false
}

// Request is a getInfo query. Doom 3, Quake 4, Prey and Wolfenstein read
// one challenge and echo it; ETQW reads a task id and a challenge and
// echoes both. GameDig sends eight bytes and a NUL ("PiNGPoNg\x00") so
// that either kind of server answers.
type Request struct {
	Challenge uint32
	// Second is the second four bytes (HasSecond): ETQW's challenge, its
	// task id being Challenge.
	Second    uint32
	HasSecond bool
	// Tail is what follows the challenge (GameDig's NUL), at most 8 bytes.
	Tail []byte
}

// Var is one key/value pair of the server's info, in wire order.
type Var struct {
	Key, Value string
}

// Player is one record of the player list.
type Player struct {
	ID   uint8
	Ping uint16
	// Rate is the client's rate setting (bytes/s); ETQW from protocol
	// 10.20 on sends none (HasRate).
	Rate    uint32
	HasRate bool
	Name    string // as sent, colour codes kept
	// Quake 4 and ETQW (from protocol 10.17) add a clan tag; ETQW sends
	// where it goes (before or after the name) first.
	Clan       string
	HasClan    bool
	ClanPos    uint8
	HasClanPos bool
	// Bot is ETQW's and Wolfenstein's type flag (1: a bot); HasBot says
	// it was sent.
	Bot    uint8
	HasBot bool
}

// ETQW's server types (Response.ServerType).
const (
	ServerRegular = 0 // then one byte: clients interested
	ServerTV      = 1 // then connected and maximum clients, u32 each
)

// Response is an infoResponse.
type Response struct {
	// Game is the dialect the reply was read in (never GameAuto after a
	// decode).
	Game Game
	// TaskID is ETQW's first echoed word.
	TaskID    uint32
	Challenge uint32
	// Major and Minor make the protocol version, sent as one u32le
	// (Major<<16 | Minor).
	Major, Minor uint16
	// Size is ETQW's size word after the version.
	Size    uint32
	Vars    []Var
	Players []Player
	// End is the id that ended the player list (32; 16 from a Wolfenstein server).
	End uint8
	// OSMask is the server's operating system bits.
	OSMask uint32
	// ETQW's tail.
	Ranked           uint8
	TimeLeft         uint32 // ms
	GameState        uint8
	ServerType       uint8
	Interested       uint8  // ServerRegular: clients interested in joining
	Connected, MaxTV uint32 // ServerTV: connected and maximum viewers
	Trailing         []byte // bytes after the reply, kept
}

// Version is the protocol version as "major.minor".
func (r *Response) Version() string {
	return strconv.Itoa(int(r.Major)) + "." + strconv.Itoa(int(r.Minor))
}

// Var returns the value of key, compared without case (the games differ:
// si_usePass, si_usepass).
func (r *Response) Var(key string) (string, bool) {
	for _, v := range r.Vars {
		if codecs.EqualFoldASCII(v.Key, key) {
			return v.Value, true
		}
	}
	return "", false
}

// Layout facts of the games' versions (qstat's reading of ETQW).
const (
	etqwNoRateAfter = 0xa0013 // 10.19: ETQW sends a rate up to this version
	etqwClanSince   = 0xa0011 // 10.17: ETQW sends a clan tag from this version
)

// hasRate, hasClan, hasClanPos and hasBot say what a player record of g at
// version v holds.
func hasRate(g Game, v uint32) bool    { return g != GameETQW || v <= etqwNoRateAfter }
func hasClan(g Game, v uint32) bool    { return g == GameQuake4 || g == GameETQW && v >= etqwClanSince }
func hasClanPos(g Game, v uint32) bool { return g == GameETQW && v >= etqwClanSince }
func hasBot(g Game) bool               { return g == GameETQW || g == GameWolf }
