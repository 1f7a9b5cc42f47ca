package unreal2

// Protocol is the registry name of the codec.
const Protocol = "unreal2"

// DefaultPort is the query port of an Unreal Tournament 2004 server: the
// game port 7777 plus one. The other games of the protocol use their game
// port plus one as well (Killing Floor 7708, Red Orchestra 7759, Darkest
// Hour 7758, UT2003 7758), which callers pass.
const DefaultPort = 7778

// Limits. A reply is at most MaxDatagrams datagrams of MaxReplyBytes bytes
// in all; more is refused, so a hostile server cannot make a decoder hold
// more than that.
const (
	// MaxQueryLen is the longest query CheckQuery accepts: every query is
	// the four-byte header and the type.
	MaxQueryLen = 5
	// MaxDatagrams is the most datagrams the replies to one conversation
	// (server info, rules, players) may span.
	MaxDatagrams = 32
	// MaxReplyBytes is the most bytes those replies may hold in all.
	MaxReplyBytes = 32 << 10
)

// RequestVersion is the header clients send (GameDig and qstat alike):
// the query version of UT2003 retail, which every later server answers.
const RequestVersion = 0x79

// The versions a server writes in the header of its replies, as qstat
// names them (a reply's version is the server's, not the query's).
const (
	VersionPariahDemo = 0x77
	VersionUT2003Demo = 0x78
	VersionUT2003     = 0x79
	VersionXMP        = 0x7e // Unreal 2: The Awakening - XMP
	VersionUT2004Demo = 0x7f
	VersionUT2004     = 0x80 // UT2004 retail, and Killing Floor's and Red Orchestra's servers
)

// knownVersion reports whether v is a header qstat knows.
func knownVersion(v uint32) bool {
	switch v {
	case VersionPariahDemo, VersionUT2003Demo, VersionUT2003, VersionXMP, VersionUT2004Demo, VersionUT2004:
		return true
	}
	return false
}

// The query and reply types: the fifth byte of every datagram.
const (
	TypeInfo    = 0 // server info: one datagram
	TypeRules   = 1 // key/value pairs, over one or more datagrams
	TypePlayers = 2 // player records, over one or more datagrams (or none)
	// TypeRulesPlayers is a query only: the rules and the players at once
	// (qstat's -ut2s asks it after the server info).
	TypeRulesPlayers = 3
)

// Dialect is the layout of the end of a server-info reply, which differs
// between the games.
type Dialect uint8

const (
	// DialectUT2003: nothing after the player counts but, perhaps, the
	// ping (UT2003 and the first UT2004 builds).
	DialectUT2003 Dialect = iota
	// DialectUT2004: ping, flags and the skill level (UT2004, Red
	// Orchestra, Darkest Hour, Devastation).
	DialectUT2004
	// DialectKillingFloor: the current and total wave before the ping,
	// flags and skill level.
	DialectKillingFloor
)

var dialectNames = [...]string{"ut2003", "ut2004", "killingfloor"}

// String is the dialect's name in the fields and the docs.
func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return "unknown"
}

// Request is a query: the header and the type asked.
type Request struct {
	Version uint32 // RequestVersion in every client
	Type    uint8  // TypeInfo, TypeRules or TypePlayers
}

// Colour is one colour code (1B R G B) of a string: where it stood in the
// text (a byte offset in String.Value) and its colour.
type Colour struct {
	At      int
	R, G, B uint8
}

// String is one length-prefixed string of the protocol. Its length byte
// counts bytes of Latin-1 text (below 0x80) or, with the top bit set,
// UCS-2 code units; either count may include a NUL terminator.
type String struct {
	// Value is the text as UTF-8, without its colour codes and its
	// terminator; other control characters are kept.
	Value string
	// Colours are the colour codes taken out of Value, in order.
	Colours []Colour
	UCS2    bool // the text is UCS-2 (little-endian code units)
	// Pad01: a UCS-2 string with the stray 01 byte after its length that
	// some games insert (not counted by the length), as GameDig skips it.
	Pad01 bool
	NoNUL bool // the length counts no terminator
}

// ServerInfo is the body of a server-info reply.
type ServerInfo struct {
	ServerID   uint32
	IP         String // empty on every server seen: qstat assumes so
	GamePort   uint32
	QueryPort  uint32
	Name       String
	Map        String
	GameType   String
	NumPlayers uint32
	MaxPlayers uint32

	Dialect Dialect
	// Killing Floor only.
	WaveCurrent, WaveTotal uint32
	HasPing                bool // the ping is there (all but the oldest UT2003 builds)
	Ping                   uint32
	HasFlags               bool // flags and skill are there (UT2004, Killing Floor)
	Flags                  uint32
	Skill                  String
	// Extra are bytes after the last field the dialect knows.
	Extra []byte
}

// Rule is one key/value pair of a rules reply. Keys repeat: every
// mutator is a pair with the key "Mutator".
type Rule struct {
	Key, Value String
}

// Player is one record of a players reply. A record with ID 0 is a team
// (its name and score), not a player, as GameDig reads it.
type Player struct {
	ID    uint32
	Name  String
	Ping  uint32 // 0: a bot, as GameDig reads it
	Score int32
	// StatsID is the stats id to GameDig; qstat reads bit 29 as the red
	// team and bit 30 as the blue one.
	StatsID uint32
}

// Team bits of Player.StatsID, as qstat reads them.
const (
	TeamRedBit  = 1 << 29
	TeamBlueBit = 1 << 30
)

// Response is one reply datagram.
type Response struct {
	Version uint32 // the server's query version (VersionUT2004 …)
	Type    uint8
	Info    ServerInfo // TypeInfo
	Rules   []Rule     // TypeRules
	Players []Player   // TypePlayers
}
