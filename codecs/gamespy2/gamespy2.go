package gamespy2

import "github.com/querylens/querylens/codecs/internal/wire"

// Wire constants of the QR2 query exchange.
const (
	Magic0 = 0xfe // request byte 0
	Magic1 = 0xfd // request byte 1

	// PacketQuery is the packet type of a query (request byte 2) and of its
	// reply (reply byte 0, echoed).
	//
	//	request: fe fd 00 <id:4> <server keys> <player keys> <team keys> [exflags]
	//	reply:   00 <id:4> [server section] [player section] [team section]
	PacketQuery = 0x00

	// KeysNone, KeysAll: the count byte of a section that is not wanted, or
	// wanted with every key and its name. Any other count N is followed by N
	// key-index bytes (index mode: the reply carries values only).
	KeysNone = 0x00
	KeysAll  = 0xff

	// ExFlagSplit in the optional 11th request byte asks for the split
	// (GameSpy 3 style) reply, which GS2 clients never do.
	ExFlagSplit = 0x01

	// MaxReply is the QR2 SDK's reply buffer (MAX_DATA_SIZE): a reply that
	// would be longer is cut at this size.
	MaxReply = 1400

	// MaxKeys is the most key indices one section of a request can list
	// (a count of 255 would read as KeysAll).
	MaxKeys = 254

	// MaxKeyIndex is the highest key number the SDK accepts
	// (MAX_REGISTERED_KEYS); 0 is reserved.
	MaxKeyIndex = 254
	// MaxQueryLen is the longest query CheckQuery accepts: header, three
	// key lists naming each key at most once, and the exflags byte.
	// GameDig, qstat and opengsq send 10 bytes; only index-mode clients
	// (the SDK's own browser) list keys.
	MaxQueryLen = 7 + 3*(1+MaxKeys) + 1

	headerLen  = 5  // reply: packet type + id
	requestLen = 10 // request in the 00/FF forms, without exflags
)

// Key is a key number of the SDK's registry (qr2regkeys.h), used by index
// mode requests. Numbers from 50 up are registered by each game.
type Key uint8

// The standard keys. Player keys end in "_", team keys in "_t".
const (
	KeyHostname      Key = 1
	KeyGamename      Key = 2
	KeyGamever       Key = 3
	KeyHostport      Key = 4
	KeyMapname       Key = 5
	KeyGametype      Key = 6
	KeyGamevariant   Key = 7
	KeyNumplayers    Key = 8
	KeyNumteams      Key = 9
	KeyMaxplayers    Key = 10
	KeyGamemode      Key = 11
	KeyTeamplay      Key = 12
	KeyFraglimit     Key = 13
	KeyTeamfraglimit Key = 14
	KeyTimeelapsed   Key = 15
	KeyTimelimit     Key = 16
	KeyRoundtime     Key = 17
	KeyRoundelapsed  Key = 18
	KeyPassword      Key = 19
	KeyGroupid       Key = 20
	KeyPlayer        Key = 21 // player_
	KeyScore         Key = 22 // score_
	KeySkill         Key = 23 // skill_
	KeyPing          Key = 24 // ping_
	KeyTeam          Key = 25 // team_
	KeyDeaths        Key = 26 // deaths_
	KeyPid           Key = 27 // pid_
	KeyTeamT         Key = 28 // team_t
	KeyScoreT        Key = 29 // score_t
	KeyNNGroupid     Key = 30
	KeyCountry       Key = 31 // master-only
	KeyRegion        Key = 32 // master-only
)

var keyNames = [...]string{
	"", "hostname", "gamename", "gamever", "hostport", "mapname", "gametype",
	"gamevariant", "numplayers", "numteams", "maxplayers", "gamemode", "teamplay",
	"fraglimit", "teamfraglimit", "timeelapsed", "timelimit", "roundtime",
	"roundelapsed", "password", "groupid", "player_", "score_", "skill_", "ping_",
	"team_", "deaths_", "pid_", "team_t", "score_t", "nn_groupid", "country", "region",
}

// String returns the key's registered name ("hostname", "score_"), or
// "key" and its number for keys a game registers itself.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (k Key) String() string {
	if k != 0 && int(k) < len(keyNames) {
		return keyNames[k]
	}
	return wire.Msg("key%d", int64(k))
}

// KeyByName returns the standard key registered as name.
func KeyByName(name string) (Key, bool) {
	for i, n := range keyNames {
		if i > 0 && n == name {
			return Key(i), true
		}
	}
	return 0, false
}

// Keys selects what one section of a request asks for: nothing (the zero
// value), every key with its name (All), or the values of the listed keys
// (index mode, 1 to MaxKeys keys).
type Keys struct {
	All  bool
	List []Key
}

// AllKeys asks for every key of a section, with names.
var AllKeys = Keys{All: true}

// KeyList asks for the values of the given keys only.
func KeyList(k ...Key) Keys { return Keys{List: k} }

// Wanted reports whether the section is asked for.
func (k Keys) Wanted() bool { return k.All || len(k.List) > 0 }

// Request is a GS2 query (10 bytes in the 00/FF forms).
type Request struct {
	ID      [4]byte // opaque, echoed in the reply
	Server  Keys    // server keys and rules
	Players Keys
	Teams   Keys
	// ExFlags is the optional byte after the key lists; HasExFlags says it
	// is present. GS2 clients never send it.
	ExFlags    byte
	HasExFlags bool
}

// FullRequest returns the combined query for everything (FF FF FF).
func FullRequest(id [4]byte) Request {
	return SectionRequest(id, ServerSection|PlayerSection|TeamSection)
}

// SectionRequest returns the query for the sections in s, each with all
// keys and their names (GameDig's queries are SectionRequest(id,
// ServerSection), then PlayerSection, then TeamSection).
func SectionRequest(id [4]byte, s Section) Request {
	q := Request{ID: id}
	if s&ServerSection != 0 {
		q.Server = AllKeys
	}
	if s&PlayerSection != 0 {
		q.Players = AllKeys
	}
	if s&TeamSection != 0 {
		q.Teams = AllKeys
	}
	return q
}

// Section is a set of reply sections.
type Section uint8

const (
	ServerSection Section = 1 << iota // rules (server keys)
	PlayerSection
	TeamSection
)

// Sections returns the sections the request asks for.
func (q *Request) Sections() Section {
	var s Section
	if q.Server.Wanted() {
		s |= ServerSection
	}
	if q.Players.Wanted() {
		s |= PlayerSection
	}
	if q.Teams.Wanted() {
		s |= TeamSection
	}
	return s
}

// Rule is one server key and its value.
type Rule struct {
	Key, Value string
}

// Table is the player or team section: the column names ("player_",
// "score_"; team columns end in "_t") and the values row by row.
type Table struct {
	// Count is the number of rows the server announced. A cut reply holds
	// fewer Rows. AppendResponse writes max(Count, len(Rows)).
	Count  int
	Fields []string
	// Rows has len(Fields) values per row. Decoded rows share one backing
	// array; a table without fields has no Rows, only a Count.
	Rows [][]string
}

// Column returns the index of the column named name, or -1.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (t *Table) Column(name string) int {
	for i, f := range t.Fields {
		if f == name {
			return i
		}
	}
	return -1
}

// Response is a GS2 reply. Text is UTF-8 (Latin-1 on the wire).
type Response struct {
	ID       [4]byte
	Sections Section // which sections the reply carries
	Rules    []Rule  // ServerSection, in wire order
	Players  Table   // PlayerSection
	Teams    Table   // TeamSection
	// OneByteCounts: the player and team counts are one byte, not the
	// SDK's big-endian 16 bits (servers that do not use the SDK).
	OneByteCounts bool
	// Truncated: the reply ends inside a section, or filled the SDK's
	// 1400-byte buffer (its last value may be cut).
	Truncated bool
	// Trailing is the number of bytes after the last section.
	Trailing int
}

// Rule returns the value of the first rule named key.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Response) Rule(key string) (string, bool) {
	for _, kv := range r.Rules {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}
