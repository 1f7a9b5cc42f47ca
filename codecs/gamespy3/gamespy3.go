package gamespy3

import "strconv"

// Wire constants of the GameSpy v3/v4 query exchange.
const (
	Magic0 = 0xfe // request byte 0
	Magic1 = 0xfd // request byte 1

	// TypeStat is the packet type of the full stat query and of each
	// packet of its reply (reply byte 0, echoed).
	//
	//	request: fe fd 00 <session:4> [<challenge:i32be>] <payload:4>
	//	reply:   00 <session:4> "splitnum" 00 <id:1> <extra:1> <payload…>
	TypeStat Type = 0x00

	// TypeChallenge is the packet type of the challenge request and its
	// reply (GameSpy v4 and Minecraft).
	//
	//	request: fe fd 09 <session:4> [00 00 00 00]
	//	reply:   09 <session:4> <challenge as signed decimal text> 00
	TypeChallenge Type = 0x09

	// SectionPlayers and SectionTeams are the section marker bytes that
	// may precede a group of player fields ("name_") or team fields
	// ("name_t"). Any byte <= 2 where a field name belongs is a marker;
	// 0 is an empty field name, the end of a section.
	SectionPlayers = 0x01
	SectionTeams   = 0x02

	// LastPacket is the bit of the split header's id byte set on the last
	// packet of a reply; the low 7 bits are the packet number from 0.
	LastPacket = 0x80

	// MaxPackets and MaxReplyBytes bound the reassembly of one reply:
	// packets numbered 16 or more, or more bytes in all than 32 KiB, are
	// refused (a real server sends a few packets of about 1400 bytes).
	MaxPackets    = 16
	MaxReplyBytes = 32 << 10

	// MaxQueryLen is the longest query CheckQuery accepts: the stat query
	// with a challenge and the 4-byte payload.
	MaxQueryLen = 15

	// DefaultPort is Minecraft's: its Query (enable-query, query.port
	// defaulting to server-port 25565) is by far the most common server
	// that still answers this protocol. The GameSpy games each use their
	// own (Battlefield 2 and 2142 29900, Unreal Tournament 3 6500, Crysis
	// 64087), and GameSpy's own master servers closed in 2014.
	DefaultPort = 25565

	splitTag  = "splitnum"
	headerLen = 5 // reply: type + session
)

// Payloads of the stat query. FullPayload asks a GameSpy v3/v4 server for
// the server keys, the players and the teams (FF each) and allows a
// split reply (01). Minecraft reads only the length of its payload and
// answers its full stat to MinecraftPayload, the one its clients send.
var (
	FullPayload      = [4]byte{0xff, 0xff, 0xff, 0x01}
	MinecraftPayload = [4]byte{0x00, 0x00, 0x00, 0x00}

	// ChallengePadding is what GameDig sends after the session id of a
	// challenge request (it writes a challenge of 0 when it has none yet).
	// The servers it reads (Unreal Tournament 3, Battlefield 2142,
	// Minecraft) read the type and the session id and ignore the rest, so
	// a padded request is answered as a bare one. Other padding is
	// refused: no client sends it.
	ChallengePadding = [4]byte{0x00, 0x00, 0x00, 0x00}
)

// Type is a packet type (request byte 2, reply byte 0).
type Type uint8

// String names the type: "stat", "challenge", or its number.
func (t Type) String() string {
	switch t {
	case TypeStat:
		return "stat"
	case TypeChallenge:
		return "challenge"
	}
	return "type " + strconv.Itoa(int(t))
}

// Request is a query: the challenge request (Type TypeChallenge, 7
// bytes, 11 when Padded) or the full stat query (TypeStat), with or
// without a challenge.
type Request struct {
	Type    Type
	Session uint32 // opaque, echoed in the reply (Minecraft: masked by 0x0F0F0F0F)
	// Padded: the challenge request carries ChallengePadding after the
	// session id (GameDig's form); only a challenge request may.
	Padded bool
	// HasChallenge says Challenge is sent (v4, Minecraft); a v3 query and
	// a v4 query to a server whose challenge is "0" (Battlefield 2) carry
	// none.
	HasChallenge bool
	Challenge    int32
	// Minecraft: the stat payload is MinecraftPayload, not FullPayload.
	Minecraft bool
}

// Rule is one server key and its value. Stray holds "p" + digits tokens
// found where the value belonged (some Unreal Tournament 3 servers send
// them); they are skipped, as GameDig does, and kept here so that nothing
// read is lost.
type Rule struct {
	Key, Value string
	Stray      []string
}

// Field is one run of a player or team field in one packet: its name
// ("player_", "score_", "team_t"), the index of its first item in this
// packet, and the items' values. A field may continue in a later packet
// with a larger Offset.
type Field struct {
	Name   string
	Offset int
	Values []string
}

// Team reports whether the field belongs to the teams ("_t" names).
func (f *Field) Team() bool { return len(f.Name) >= 2 && f.Name[len(f.Name)-2:] == "_t" }

// Section is a group of fields, started by a marker byte (SectionPlayers
// or SectionTeams; Marker 0 when the packet's fields come without one)
// and ended, optionally, by an empty field name (End).
type Section struct {
	Marker byte
	Fields []Field
	End    bool
}

// Response is one datagram of a reply: a challenge reply (Type
// TypeChallenge) or one packet of a stat reply (TypeStat). Text is UTF-8
// (Latin-1 on the wire).
type Response struct {
	Type    Type
	Session uint32

	// Challenge is the challenge reply's decimal text as sent ("0":
	// send the stat query without a challenge).
	Challenge string

	// Split: the packet carries the "splitnum" header with Number (from
	// 0), Last and Extra (the byte after the id, 0 in every server seen).
	// A packet without it is a whole reply (packet 0, last).
	Split  bool
	Number int
	Last   bool
	Extra  byte

	// Rules are the server keys, in packet 0 only (HasRules), ended by an
	// empty key.
	HasRules bool
	Rules    []Rule
	// Sections are the player and team fields of this packet.
	Sections []Section
	// Truncated: the packet ends inside a key, a value or a field's list
	// of values (what came before is kept).
	Truncated bool
}

// ChallengeValue is the challenge reply's number as a stat query carries
// it: the decimal text read as a signed 32-bit number; text above
// 2147483647 (up to 4294967295) wraps, as the servers that print it
// unsigned mean. ok is false for text that is no such number.
func (r *Response) ChallengeValue() (v int32, ok bool) { return parseChallenge(r.Challenge) }

// Rule returns the value of the first rule named key.
func (r *Response) Rule(key string) (string, bool) {
	for _, kv := range r.Rules {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

func parseChallenge(s string) (int32, bool) {
	neg := len(s) > 0 && s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || len(d) > 10 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n > 1<<31:
		return 0, false
	case neg:
		return int32(-int64(n)), true
	case n > 1<<32-1:
		return 0, false
	}
	return int32(uint32(n)), true
}
