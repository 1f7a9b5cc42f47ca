package ogp

import "github.com/querylens/querylens/codecs/internal/wire"

// Version says which of the two incompatible wire forms a datagram uses. It
// is detected from the bytes (see DecodeHeader), never configured; a
// conversation (NewQuery) reads its replies in the version it asked in.
type Version uint8

const (
	// V1 is the deployed 0.94+/1.0x form: FF FF FF FF "OGP\0", UINT8
	// HeadSize, UINT8 Type, VarBitArray HeadFlags (0.1 bChallengeNumber,
	// 0.2 bRequestID), then the optional header fields. It is the zero value.
	V1 Version = iota
	// V004 is the seed's v0.04 form: no HeadSize, HeadFlags first
	// (0.1 bRequestID, 0.2 bChallengeNumber) and Type as the last header byte.
	V004
)

// String returns "1.0" or "0.04", the values the "version" query option takes.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (v Version) String() string {
	switch v {
	case V1:
		return "1.0"
	case V004:
		return "0.04"
	}
	return wire.Msg("version(%d)", int64(v))
}

// ParseVersion reads a version as the "version" option spells it. "1.0",
// "1", "1.01" and "0.94" mean V1; "0.04" means V004.
func ParseVersion(s string) (Version, bool) {
	switch s {
	case "1.0", "1", "1.01", "1.0x", "0.94":
		return V1, true
	case "0.04":
		return V004, true
	}
	return 0, false
}

// Type is what a datagram is about, independent of the version's numbering.
// Each constant's comment gives its wire code in both versions.
type Type uint8

const (
	TypePing    Type = iota // 1.0x 0x00 "Ping"; v0.04 1 "None" (header only)
	TypeDefault             // "Default query v1": 1.0x 0x01; v0.04 2
	TypeRcon                // 1.0x 0x02; v0.04 3 (body not specified: kept raw)
	TypeMaster              // 1.0x 0x03 master server uplink, answer only (kept raw)
	TypeError               // 1.0x 0xFF, answer only: UINT8 ErrorID
	TypeBanned              // v0.04 0, answer only (body not specified: kept raw)
)

var typeNames = [...]string{"ping", "default query v1", "rcon", "master uplink", "error", "banned"}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return wire.Msg("type(%d)", int64(t))
}

// name is t's name in version v (v0.04 calls the ping type "none").
func (t Type) name(v Version) string {
	if v == V004 && t == TypePing {
		return "none"
	}
	return t.String()
}

// Code returns t's wire code in version v; ok is false when v has no such type.
func (t Type) Code(v Version) (code uint8, ok bool) {
	if v == V004 {
		switch t {
		case TypeBanned:
			return 0, true
		case TypePing:
			return 1, true
		case TypeDefault:
			return 2, true
		case TypeRcon:
			return 3, true
		}
		return 0, false
	}
	switch t {
	case TypePing, TypeDefault, TypeRcon, TypeMaster:
		return uint8(t), true // 0x00..0x03 in the same order
	case TypeError:
		return 0xff, true
	}
	return 0, false
}

// typeOf maps a wire code of version v back to its Type.
func typeOf(v Version, code uint8) (Type, bool) {
	if v == V004 {
		switch code {
		case 0:
			return TypeBanned, true
		case 1, 2, 3:
			return Type(code - 1), true
		}
		return 0, false
	}
	switch code {
	case 0, 1, 2, 3:
		return Type(code), true
	case 0xff:
		return TypeError, true
	}
	return 0, false
}

// answerOnly reports whether only servers send t.
func (t Type) answerOnly() bool { return t == TypeMaster || t == TypeError || t == TypeBanned }

// ErrorID is the body of a 1.0x error answer (Type 0xFF).
type ErrorID uint8

const (
	ErrorBanned           ErrorID = 0 // the client is banned
	ErrorInvalidType      ErrorID = 1 // the query type in the header is unknown
	ErrorInvalidValue     ErrorID = 2 // a value in the header is wrong
	ErrorInvalidChallenge ErrorID = 3 // the challenge number is wrong (also the answer to the challenge request)
	ErrorInvalidQuery     ErrorID = 4 // the query body is wrong
)

var errorNames = [...]string{"banned", "invalid type", "invalid value", "invalid challenge number", "invalid query"}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (e ErrorID) String() string {
	if int(e) < len(errorNames) {
		return errorNames[e]
	}
	return wire.Msg("unknown error %d", int64(e))
}

// Bits is a VarBitArray: "bit k.n" (bit n of the k-th wire byte) is bit
// 7*k+n here. On the wire each byte carries seven flags in bits 0..6 and
// bit 7 says another byte follows; bytes not sent read as zero. Bits holds
// the first nine bytes (63 flags, more than any version defines); set flags
// beyond them are dropped on decoding.
type Bits uint64

// Bit returns the flag "k.n" (0 <= n < 7, 0 <= k < 9).
func Bit(k, n int) Bits { return 1 << (7*k + n) }

// Has reports whether every flag of x is set in b.
func (b Bits) Has(x Bits) bool { return b&x == x }

// maxBitBytes is how many VarBitArray bytes fit in Bits.
const maxBitBytes = 9

// Header flags (HeadFlags). The two versions number them differently; the
// decoder turns them into Header's booleans, so these are for reading spans
// and for tests.
const (
	HeadAnswer          Bits = 1 << 0 // 0.0 in both versions
	HeadChallenge       Bits = 1 << 1 // 1.0x 0.1 bChallengeNumber
	HeadRequestID       Bits = 1 << 2 // 1.0x 0.2 bRequestID
	HeadSplit           Bits = 1 << 3 // 0.3 in both versions
	HeadUTF8            Bits = 1 << 4 // 1.0x 0.4 bUTF8 (1.01; bPassword in 0.91)
	Head004RequestID    Bits = 1 << 1 // v0.04 0.1 bRequestID
	Head004Challenge    Bits = 1 << 2 // v0.04 0.2 bChallengeNumber
	headKnown1          Bits = HeadAnswer | HeadChallenge | HeadRequestID | HeadSplit | HeadUTF8
	headKnown004        Bits = HeadAnswer | Head004RequestID | Head004Challenge | HeadSplit
	challengeRequest1        = 0          // 1.0x: challenge number that asks for a new one
	challengeRequest004      = 0xffffffff // v0.04: challenge number that asks for a new one
)

// Requests of a 1.0x Default query v1 (query and answer alike).
const (
	ReqServerInfo   Bits = 1 << 0 // 0.0 ServerInfoFields and the server fields follow
	ReqTeams        Bits = 1 << 1 // 0.1 TEAMLIST
	ReqPlayers      Bits = 1 << 2 // 0.2 PLAYERLIST
	ReqRules        Bits = 1 << 3 // 0.3 RULELIST
	ReqAddOns       Bits = 1 << 4 // 0.4 ADDONLIST
	ReqLimits       Bits = 1 << 5 // 0.5 LIMITLIST
	ReqColoredNames Bits = 1 << 7 // 1.0 a StringColorInfo follows host, team and player names
)

// ServerInfoFields of 1.0x, in wire order of the fields they select.
const (
	InfoGameName      Bits = 1 << 0  // 0.0 SzString
	InfoServerFlags   Bits = 1 << 1  // 0.1 VarBitArray (SF* constants)
	InfoHostName      Bits = 1 << 2  // 0.2 SzString [StringColorInfo]
	InfoConnectPort   Bits = 1 << 3  // 0.3 UINT16
	InfoMod           Bits = 1 << 7  // 1.0 SzString ModName; if not empty VarBitArray ModFields + mod fields
	InfoGameType      Bits = 1 << 8  // 1.1 SzString
	InfoGameMode      Bits = 1 << 9  // 1.2 SzString
	InfoMap           Bits = 1 << 10 // 1.3 VarBitArray MapFields, SzString MapName, map fields
	InfoNextMap       Bits = 1 << 11 // 1.4 with InfoMap only: SzString, map fields (same MapFields)
	InfoPlayerCount   Bits = 1 << 14 // 2.0 VarUINT
	InfoSlotMax       Bits = 1 << 15 // 2.1 VarUINT
	InfoBotCount      Bits = 1 << 16 // 2.2 VarUINT
	InfoReservedSlots Bits = 1 << 17 // 2.3 VarUINT
)

// ModFields of 1.0x.
const (
	ModIdentifier Bits = 1 << 0 // 0.0 SzString
	ModSize       Bits = 1 << 1 // 0.1 UINT32
	ModVersion    Bits = 1 << 2 // 0.2 SzString
	ModURL        Bits = 1 << 3 // 0.3 SzString
	ModAuthor     Bits = 1 << 4 // 0.4 SzString
)

// MapFields of 1.0x (they apply to the map and to the next map).
const (
	MapFileName Bits = 1 << 0 // 0.0 SzString
	MapFileSize Bits = 1 << 1 // 0.1 UINT32
	MapFileMD5  Bits = 1 << 2 // 0.2 16 bytes
	MapVersion  Bits = 1 << 3 // 0.3 SzString
	MapURL      Bits = 1 << 4 // 0.4 SzString
	MapAuthor   Bits = 1 << 5 // 0.5 SzString
)

// Requests of a v0.04 Default query v1: the lists, then the server fields.
const (
	Req004Teams         Bits = 1 << 0  // 0.0 TEAMLIST
	Req004Players       Bits = 1 << 1  // 0.1 PLAYERLIST
	Req004Rules         Bits = 1 << 2  // 0.2 RULELIST
	Req004AddOns        Bits = 1 << 3  // 0.3 ADDONLIST
	Req004Limits        Bits = 1 << 4  // 0.4 LIMITLIST
	Req004GameName      Bits = 1 << 7  // 1.0 SzString
	Req004ServerFlags   Bits = 1 << 8  // 1.1 VarBitArray (SF004* constants)
	Req004Mod           Bits = 1 << 9  // 1.2 SzString ModName, SzString ModDir
	Req004HostName      Bits = 1 << 14 // 2.0 SzString
	Req004Map           Bits = 1 << 15 // 2.1 SzString MapName, SzString MapFile
	Req004NextMap       Bits = 1 << 16 // 2.2 SzString NextMapName, SzString NextMapFile
	Req004GameType      Bits = 1 << 17 // 2.3 SzString
	Req004PlayerCount   Bits = 1 << 21 // 3.0 VarUINT8-32
	Req004SlotMax       Bits = 1 << 22 // 3.1 VarUINT8-32
	Req004BotCount      Bits = 1 << 23 // 3.2 VarUINT8-32
	Req004ReservedSlots Bits = 1 << 24 // 3.3 VarUINT8-32
)

// TeamFields. Types are 1.0x / v0.04.
const (
	TeamName        Bits = 1 << 0 // 0.0 SzString [StringColorInfo]
	TeamScore       Bits = 1 << 1 // 0.1 VarSINT / SINT32
	TeamAveragePing Bits = 1 << 2 // 0.2 UINT16
	TeamAverageLoss Bits = 1 << 3 // 0.3 UINT16
	TeamPlayerCount Bits = 1 << 4 // 0.4 VarUINT / UINT8
	TeamColor       Bits = 1 << 5 // 0.5 UINT16, 1.0x only
)

// PlayerFields. Types are 1.0x / v0.04.
const (
	PlayerFlags     Bits = 1 << 0  // 0.0 VarBitArray (Flag* constants)
	PlayerSlot      Bits = 1 << 1  // 0.1 VarUINT / UINT8
	PlayerName      Bits = 1 << 2  // 0.2 SzString [StringColorInfo]
	PlayerTeam      Bits = 1 << 3  // 0.3 VarSINT (-1: no team) / UINT8 (0xFF: spectator)
	PlayerClass     Bits = 1 << 4  // 0.4 SzString
	PlayerRace      Bits = 1 << 5  // 0.5 SzString
	PlayerScore     Bits = 1 << 7  // 1.0 VarSINT / SINT32
	PlayerFrags     Bits = 1 << 8  // 1.1 VarSINT / SINT16
	PlayerKills     Bits = 1 << 9  // 1.2 VarUINT
	PlayerDeath     Bits = 1 << 10 // 1.3 VarUINT
	PlayerSuicides  Bits = 1 << 11 // 1.4 VarUINT
	PlayerTeamKills Bits = 1 << 12 // 1.5 VarUINT
	PlayerID        Bits = 1 << 14 // 2.0 UINT32
	PlayerGlobalID  Bits = 1 << 15 // 2.1 SzString
	PlayerPing      Bits = 1 << 16 // 2.2 UINT16
	PlayerLoss      Bits = 1 << 17 // 2.3 UINT16
	PlayerModel     Bits = 1 << 18 // 2.4 SzString
	PlayerTime      Bits = 1 << 19 // 2.5 UINT16, seconds on the server
	PlayerAddress   Bits = 1 << 21 // 3.0 VarUINT length + bytes, 1.0x only
)

// AddOnFields.
const (
	AddOnFlags     Bits = 1 << 0 // 0.0 VarBitArray (AddOn* flag constants)
	AddOnShortName Bits = 1 << 1 // 0.1 SzString
	AddOnLongName  Bits = 1 << 2 // 0.2 SzString
	AddOnVersion   Bits = 1 << 3 // 0.3 SzString
)

// Player flags (the PlayerFlags field), both versions.
const (
	FlagAlive Bits = 1 << 0 // 0.0
	FlagDead  Bits = 1 << 1 // 0.1
	FlagBot   Bits = 1 << 2 // 0.2
	FlagBomb  Bits = 1 << 7 // 1.0 ("bBomp")
	FlagVIP   Bits = 1 << 8 // 1.1
)

// Add-on flags (the AddOn.Flags field), both versions.
const (
	AddOnActive    Bits = 1 << 0
	AddOnAntiCheat Bits = 1 << 1
	AddOnMutator   Bits = 1 << 2
	AddOnAdminTool Bits = 1 << 3
)

// 1.0x server flags: bits 0.0-0.1 the server type, 0.2 password, 0.3 proxy,
// 0.4-0.6 the operating system.
const (
	SFListen      Bits = 1 << 0 // server type 1
	SFDedicated   Bits = 2 << 0 // server type 2
	SFPassword    Bits = 1 << 2
	SFProxy       Bits = 1 << 3
	SFWindows     Bits = 1 << 4 // operating system 1
	SFLinux       Bits = 2 << 4 // operating system 2
	SFMac         Bits = 3 << 4 // operating system 3
	sfTypeMask    Bits = 3 << 0
	sfOSMask      Bits = 7 << 4
	sfOSShift          = 4
	limitLeftFlag Bits = 1 << 0 // 1.0x LimitType 0.0 bLimitLeft; 0.1-0.4 the type
)

// v0.04 server flags.
const (
	SF004Linux     Bits = 1 << 0
	SF004Windows   Bits = 1 << 1
	SF004Mac       Bits = 1 << 2
	SF004Dedicated Bits = 1 << 3
	SF004Proxy     Bits = 1 << 4
)

// Limit types.
const (
	LimitTime      = 0 // seconds
	LimitScore     = 1 // player score
	LimitRound     = 2
	LimitTeamScore = 3
)

// Header is the OGP header of either version. Decoding sets the booleans
// from HeadFlags in the version's bit numbering; encoding does the reverse.
type Header struct {
	Version Version
	Type    Type
	// Answer is HeadFlags 0.0. AppendRequest and AppendResponse set it.
	Answer bool
	// HasChallenge: ChallengeNumber is present. A query sends 0 (1.0x) or
	// 0xFFFFFFFF (v0.04) to ask for a new one.
	HasChallenge bool
	Challenge    uint32
	HasRequestID bool
	RequestID    uint32
	// Split: a query carries MaxBytesPerPacket (1.0x: 0 = off, else >= 500;
	// v0.04: 500..1500); an answer is part SplitNo (from 0) of SplitCount.
	Split             bool
	MaxBytesPerPacket uint16
	SplitCount        uint8
	SplitNo           uint8
	// UTF8 is 1.0x HeadFlags 0.4: strings are UTF-8, not Latin-1.
	UTF8 bool
	// OtherFlags holds HeadFlags bits the version gives no meaning, as sent.
	OtherFlags Bits
	// Padding holds 1.0x header bytes that HeadSize covers beyond the known
	// fields (it aliases the decoded datagram).
	Padding []byte
}

// Request is a query datagram. Only TypeDefault has a defined body.
type Request struct {
	Header
	// Body says a Default query v1 body follows the header. 1.0x queries
	// may stop after the header (the challenge request); v0.04 always has one.
	Body bool
	// Requests selects what the answer holds (Req* for 1.0x, Req004* for v0.04).
	Requests Bits
	// 1.0x only: what the server info, the mod and the maps carry. The 1.0x
	// body always sends all seven bit arrays, as the official client does.
	ServerInfoFields Bits
	ModFields        Bits
	MapFields        Bits
	// What each team, player and add-on entry carries. v0.04 sends each only
	// when its list is requested.
	TeamFields   Bits
	PlayerFields Bits
	AddOnFields  Bits
	// Raw is the body of other types, as sent (aliases the datagram).
	Raw []byte
}

// Response is one answer datagram, or a split answer after Reassemble.
// Which fields are meaningful is said by the bit arrays that came back:
// Requests, Server.Fields, TeamFields, PlayerFields, AddOnFields, and for
// 1.0x Server.ModFields and Server.MapFields. Byte slices alias the decoded
// datagram; strings are Latin-1 unless Header.UTF8.
type Response struct {
	Header
	ErrorID ErrorID // TypeError

	// TypeDefault:
	GameID       uint16
	Requests     Bits
	Server       ServerInfo
	TeamFields   Bits
	Teams        []Team
	PlayerFields Bits
	Players      []Player
	Rules        []Rule
	AddOnFields  Bits
	AddOns       []AddOn
	Limits       []Limit

	// Raw is the body of types with no defined layout (ping, rcon, master
	// uplink, banned), as sent.
	Raw []byte
}

// ServerInfo holds the server fields. In 1.0x they are selected by Fields
// (ServerInfoFields, Info*); in v0.04 by the answer's Requests (Req004*).
type ServerInfo struct {
	Fields         Bits // 1.0x ServerInfoFields
	GameName       []byte
	Flags          Bits // ServerFlags: SF* (1.0x) or SF004* (v0.04)
	HostName       []byte
	HostNameColors Colors // 1.0x with ReqColoredNames
	ConnectPort    uint16 // 1.0x

	ModName []byte
	ModDir  []byte // v0.04
	// 1.0x, when ModName is not empty:
	ModFields     Bits
	ModIdentifier []byte
	ModSize       uint32
	ModVersion    []byte
	ModURL        []byte
	ModAuthor     []byte

	GameType  []byte
	GameMode  []byte // 1.0x
	MapFields Bits   // 1.0x
	Map       MapInfo
	NextMap   MapInfo

	PlayerCount   uint32 // everyone connected, bots included
	SlotMax       uint32
	BotCount      uint32
	ReservedSlots uint32
}

// MapInfo is a map or the next map. v0.04 carries Name and File; 1.0x
// carries Name and what MapFields selects.
type MapInfo struct {
	Name     []byte
	File     []byte
	FileSize uint32
	FileMD5  [16]byte
	Version  []byte
	URL      []byte
	Author   []byte
}

// Colors is a 1.0x StringColorInfo without its VarUINT size: entries of
// VarUINT DeltaPosition, UINT8 ColorValue and, for ColorValue 0x90..0x9F,
// a UINT16 ColorValue16. It aliases the decoded datagram.
type Colors []byte

// Team is one TEAMLIST entry; TeamFields says which fields it has.
type Team struct {
	Name        []byte
	NameColors  Colors
	Score       int32
	AveragePing uint16
	AverageLoss uint16
	PlayerCount uint32 // UINT8 in v0.04
	Color       uint16 // 1.0x
}

// Player is one PLAYERLIST entry; PlayerFields says which fields it has.
type Player struct {
	Flags      Bits
	Slot       uint32 // UINT8 in v0.04
	Name       []byte
	NameColors Colors
	// Team is the team number: -1 is no team in 1.0x; v0.04 sends a UINT8
	// (0..255) where 255 is a spectator.
	Team      int32
	Class     []byte
	Race      []byte
	Score     int32
	Frags     int32 // SINT16 in v0.04
	Kills     uint32
	Deaths    uint32
	Suicides  uint32
	TeamKills uint32
	ID        uint32
	GlobalID  []byte
	Ping      uint16
	Loss      uint16
	Model     []byte
	Time      uint16
	Address   []byte // 1.0x
}

// Rule is one RULELIST entry.
type Rule struct{ Key, Value []byte }

// AddOn is one ADDONLIST entry; AddOnFields says which fields it has.
type AddOn struct {
	Flags     Bits
	ShortName []byte
	LongName  []byte
	Version   []byte
}

// Limit is one LIMITLIST entry. Type is LimitTime, LimitScore, ... (0..15
// in 1.0x, 0..127 in v0.04); Left is the amount left when HasLeft.
type Limit struct {
	Type    uint8
	HasLeft bool
	Limit   uint32
	Left    uint32
	// OtherFlags holds 1.0x LimitType bits beyond 0.0-0.4, as sent.
	OtherFlags Bits
}
