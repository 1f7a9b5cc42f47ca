package a2s

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
	"github.com/querylens/querylens/internal/ipfmt"
)

// Protocol is the codec's name in the registry and in JSON.
const Protocol = "a2s"

// DefaultPort is the usual query port of Source and GoldSrc servers (the
// game port; some games answer on game port + 1).
const DefaultPort = 27015

// Headers: the first four bytes of every server datagram and of every
// query to a server, as a little-endian int32.
const (
	headerSingle = 0xffffffff // -1: one whole message follows
	headerSplit  = 0xfffffffe // -2: one part of a split message follows
)

// Type is the byte after a single header: what the message is.
type Type byte

const (
	// Queries (client to server).
	TypeInfoRequest   Type = 'T' // 0x54: "Source Engine Query\0" [challenge s32]
	TypePlayerRequest Type = 'U' // 0x55: challenge s32 (FF FF FF FF asks for one)
	TypeRulesRequest  Type = 'V' // 0x56: challenge s32 (FF FF FF FF asks for one)

	// Replies (server to client).
	TypeChallenge   Type = 'A' // 0x41: challenge s32, to send back in the query
	TypeInfo        Type = 'I' // 0x49: Source info, see Info
	TypeInfoGoldSrc Type = 'm' // 0x6d: GoldSrc's obsolete info, see Info
	TypePlayers     Type = 'D' // 0x44: count u8, then per player index, name, score, duration
	TypeRules       Type = 'E' // 0x45: count u16le, then name and value strings
)

// The Steam master protocol: queries carry no header.
const (
	MasterQuery    = '1'  // 0x31: region u8, seed "IP:port\0", filter "\k\v...\0"
	MasterReply    = 'f'  // 0x66, after FF FF FF FF, then 0x0a and 6-byte entries
	masterReplyEnd = 0x0a // the byte after MasterReply
)

// InfoPayload is the text every A2S_INFO query carries.
const InfoPayload = "Source Engine Query"

// ChallengeRequest is the challenge a client sends to ask for one: the
// documented form is FF FF FF FF, never zeros.
const ChallengeRequest uint32 = 0xffffffff

// ShipAppID is The Ship's app id: its info and player replies carry extra
// fields.
const ShipAppID = 2400

// Extra data flags of a Source info reply (the EDF byte), each followed by
// its field, in this wire order: port, SteamID, SourceTV, keywords, game id.
const (
	EDFPort     = 0x80 // port u16le: the game port
	EDFSteamID  = 0x10 // SteamID u64le: the server's Steam id
	EDFSourceTV = 0x40 // port u16le and name cstring of the SourceTV relay
	EDFKeywords = 0x20 // keywords cstring: tags, comma separated
	EDFGameID   = 0x01 // game id u64le: the low 24 bits are the app id
	edfKnown    = EDFPort | EDFSteamID | EDFSourceTV | EDFKeywords | EDFGameID
)

// Caps per query: what the reply to one query (one message, whole or
// split) may take, the same caps the relay applies to each query it
// forwards (relay.DefaultReplyCaps). A conversation's info, player and
// rules replies each get the whole cap. Datagrams past them are dropped
// and counted, and the message carries the warning codecs.WarnTruncated.
const (
	MaxDatagrams = 64
	MaxBytes     = 96 << 10
	// MaxDecompressed bounds the size a compressed split message may claim
	// before anything is allocated for it.
	MaxDecompressed = 1 << 20
	// MaxMasterPages bounds a master list instead: each page answers its
	// own query (a big game's list is about 90 pages).
	MaxMasterPages = 1000
)

// MaxQueryLen is the longest query CheckQuery accepts: a master query with
// the longest seed and a filter of up to maxFilter bytes.
const MaxQueryLen = 2 + len("255.255.255.255:65535") + 1 + maxFilter + 1

// maxFilter is the longest master filter accepted.
const maxFilter = 200

// Request is a query to a server: A2S_INFO, A2S_PLAYER or A2S_RULES.
type Request struct {
	_    [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	Type Type
	// HasChallenge is always true for PLAYER and RULES; for INFO it says the
	// challenge is appended (servers since December 2020 want it).
	HasChallenge bool
	Challenge    uint32 // as the server sent it: the four bytes little-endian
}

// MasterRequest is a query to a Steam master server.
type MasterRequest struct {
	_      [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	Region Region
	Seed   Addr   // 0.0.0.0:0 for the first page, then the last address received
	Filter string // e.g. `\appid\440\dedicated\1`; empty: every server
}

// Region is the master query's region byte.
type Region uint8

// Regions of the master query.
const (
	RegionUSEast       Region = 0x00
	RegionUSWest       Region = 0x01
	RegionSouthAmerica Region = 0x02
	RegionEurope       Region = 0x03
	RegionAsia         Region = 0x04
	RegionAustralia    Region = 0x05
	RegionMiddleEast   Region = 0x06
	RegionAfrica       Region = 0x07
	RegionAll          Region = 0xff
)

var regionNames = [...]string{"us-east", "us-west", "south-america", "europe", "asia", "australia", "middle-east", "africa"}

func (r Region) String() string {
	if int(r) < len(regionNames) {
		return regionNames[r]
	}
	if r == RegionAll {
		return "all"
	}
	return strconv.Itoa(int(r))
}

// Addr is an IPv4 address and port, as a master lists it.
type Addr struct {
	IP   [4]byte
	Port uint16
}

// IsZero reports whether a is 0.0.0.0:0, the seed of a first page and the
// end of a master's list.
func (a Addr) IsZero() bool { return a == Addr{} }

// AppendTo appends "a.b.c.d:port".
func (a Addr) AppendTo(dst []byte) []byte { return ipfmt.AppendIPv4Port(dst, &a.IP, a.Port) }

func (a Addr) String() string { return string(a.AppendTo(nil)) }

// ParseAddr parses "a.b.c.d:port".
func ParseAddr(s string) (Addr, bool) {
	var a Addr
	part, n, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			n = n*10 + int(s[i]-'0')
			digits++
			if digits > 5 {
				return Addr{}, false
			}
			continue
		}
		if digits == 0 || digits > 1 && s[i-digits] == '0' { // no empty parts, no leading zeros
			return Addr{}, false
		}
		switch {
		case part < 3 && i < len(s) && s[i] == '.' && n <= 255:
			a.IP[part] = byte(n)
		case part == 3 && i < len(s) && s[i] == ':' && n <= 255:
			a.IP[3] = byte(n)
		case part == 4 && i == len(s) && n <= 0xffff:
			a.Port = uint16(n)
		default:
			return Addr{}, false
		}
		part, n, digits = part+1, 0, 0
	}
	return a, part == 5
}

// Response is one decoded server message (a whole one, after any split
// was reassembled): exactly one of its parts is set, as Type says.
type Response struct {
	Type      Type
	Challenge uint32   // TypeChallenge
	Info      *Info    // TypeInfo, TypeInfoGoldSrc
	Players   *Players // TypePlayers
	Rules     *Rules   // TypeRules
}

// Info is A2S_INFO's reply in either form. Fields of the other form are
// zero.
type Info struct {
	_       [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	GoldSrc bool      // the obsolete 'm' form
	Address string    // GoldSrc: the server's "IP:port" as it sees itself

	Protocol uint8 // Source: first; GoldSrc: after the counts
	Name     string
	Map      string
	Folder   string // the game directory, e.g. "tf"
	Game     string // the game's description, e.g. "Team Fortress"
	AppID    uint16 // Source only

	Players    uint8 // bots included
	MaxPlayers uint8
	Bots       uint8

	ServerType  byte  // 'd' dedicated, 'l' listen, 'p' SourceTV ('D', 'L', 'P' in GoldSrc)
	Environment byte  // 'l' Linux, 'w' Windows, 'm' or 'o' macOS ('L', 'W' in GoldSrc)
	Visibility  uint8 // 1: a password is needed
	VAC         uint8 // 1: the server is VAC secured

	// The Ship (app 2400), between VAC and the version.
	HasShip bool
	Ship    ShipInfo

	Version string // Source only

	// GoldSrc: Mod is 1 when ModInfo follows the visibility byte.
	Mod     uint8
	ModInfo ModInfo

	// Source: the extra data flag byte, when the reply has one, and the
	// fields it announces.
	HasEDF       bool
	EDF          uint8
	Port         uint16
	SteamID      uint64
	SourceTVPort uint16
	SourceTVName string
	Keywords     string
	GameID       uint64
}

// ShipInfo is The Ship's part of the info reply.
type ShipInfo struct {
	Mode      uint8 // 0 hunt, 1 elimination, 2 duel, 3 deathmatch, 4 VIP team, 5 team elimination
	Witnesses uint8
	Duration  uint8 // seconds before a player is arrested
}

// ModInfo is the half-life mod part of a GoldSrc info reply.
type ModInfo struct {
	_            [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	Link         string
	DownloadLink string
	Null         uint8  // always 0; readers that skip it shift every later field
	Version      uint32 // the mod's version
	Size         uint32 // bytes
	Type         uint8  // 0 single and multiplayer, 1 multiplayer only
	DLL          uint8  // 0 the half-life DLL, 1 its own
}

// Players is A2S_PLAYER's reply.
type Players struct {
	Count   uint8 // as sent: servers with more than 255 players wrap it
	Players []Player
	// Ship: The Ship sends deaths and money for each player after the list.
	Ship bool
}

// Unlisted is how many players the reply counts but does not list: those
// still connecting (a server counts them before it has their names), or
// those past a listing limit (CS:GO lists at most 55). Zero when every
// player counted is listed, or when the count wrapped past 255.
func (p *Players) Unlisted() int { return max(int(p.Count)-len(p.Players), 0) }

// Player is one entry of Players.
type Player struct {
	_        [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	Index    uint8     // always 0 on most servers
	Name     string
	Score    int32
	Duration float32 // seconds connected
	Deaths   int32   // The Ship
	Money    int32   // The Ship
}

// Rules is A2S_RULES's reply.
type Rules struct {
	Count uint16
	Rules []Rule
}

// Rule is one server variable.
type Rule struct {
	_           [0]func() // not comparable: no equality function to compile (see "Code size" in codecs/doc.go)
	Name, Value string
}

// MasterReplyPage is one datagram of a Steam master's reply.
type MasterReplyPage struct {
	Servers []Addr
	// End says the page ended with 0.0.0.0:0: the list is complete.
	End bool
}

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}

// newDetail is newError of codecs.Detail(sentinel, text): one call at
// each error site instead of two.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newDetail(field string, off int, layer string, sentinel error, text string) *codecs.Error {
	return newError(field, off, layer, codecs.Detail(sentinel, text))
}

// newDetailf is newError of wire.Detailf(sentinel, format, args...): one
// call at each error site instead of two.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newDetailf(field string, off int, layer string, sentinel error, format string, args ...int64) *codecs.Error {
	return newError(field, off, layer, wire.Detailf(sentinel, format, args...))
}
