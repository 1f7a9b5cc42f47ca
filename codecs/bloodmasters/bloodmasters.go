package bloodmasters

import (
	"errors"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs/internal/wire"
)

// Wire constants (spec §6.1–6.3).
const (
	// HeaderLen is the fixed part of every message: USHORT length (LE) +
	// BYTE command. Reliable messages and confirmations add a BE UINT32
	// packet id.
	HeaderLen = 3
	// RequestLen is the length of the query: header + 4 token bytes.
	RequestLen = 7
	// MaxQueryLen is the longest query CheckQuery accepts: the request is
	// the only query there is.
	MaxQueryLen = RequestLen
	// MaxMessageLen is the largest length the 16-bit length field can say.
	MaxMessageLen = 0xffff
	// DefaultPort is the game port, which also answers queries.
	DefaultPort = 6969
	// ProtocolVersion is the only protocol in the public history of the
	// game; the official launcher reads the extended block only for it.
	ProtocolVersion = 29
	// ExtendedSince is the first protocol whose reply carries the extended
	// block (limits, join-smallest-team and the client records).
	ExtendedSince = 27
	// BuildSince is the first protocol whose reply ends with the build
	// description.
	BuildSince = 28
)

// Command is a message's command byte. Bit 0x80 marks a reliable message;
// reliable messages and command 0 (a confirmation) carry a packet id after
// the command.
type Command uint8

const (
	CmdPingOrConfirm Command = 0    // packet id only
	CmdServerInfo    Command = 13   // request: UINT32 token; reply: see Response
	ReliableBit      Command = 0x80 // flag: a BE UINT32 packet id follows the command
)

// Base returns the command without the reliable bit.
func (c Command) Base() Command { return c &^ ReliableBit }

// HasPacketID reports whether a message with this command carries a packet id.
func (c Command) HasPacketID() bool { return c == CmdPingOrConfirm || c&ReliableBit != 0 }

// headerLen is the length of a message header with command c.
func (c Command) headerLen() int {
	if c.HasPacketID() {
		return HeaderLen + 4
	}
	return HeaderLen
}

// commandNames are the game's message commands (MsgCmd), by number.
var commandNames = [...]string{
	"PingOrConfirm", "ConnectRequest", "ConnectConfirm", "ConnectRefused", "Disconnect",
	"PlayerLogin", "StartGameInfo", "GameStarted", "GameSnapshot", "Command",
	"SayMessage", "ShowMessage", "ClientUpdate", "ServerInfo", "ChangeTeam",
	"ClientDisposed", "SpawnActor", "Snapshot", "SectorMovement", "ClientMove",
	"ClientCorrection", "ItemPickup", "StatusUpdate", "TakeDamage", "ClientDead",
	"RespawnRequest", "GameStateChange", "TeleportClient", "Suicide", "SwitchWeapon",
	"SpawnProjectile", "UpdateProjectile", "TeleportProjectile", "DestroyProjectile", "ShieldHit",
	"DamageGiven", "PowerupCountUpdate", "FireIntensity", "ScoreFlag", "ReturnFlag",
	"", "MapChange", "FirePowerup", "SayTeamMessage", "PlayerNameChange",
	"NeedActor", "CallvoteStatus", "CallvoteEnd", "CallvoteSubmit", "CallvoteRequest",
}

// String returns the command's name, with ", reliable" when the reliable
// bit is set (command 128 is the game's ping).
func (c Command) String() string {
	b := c.Base()
	s := ""
	if int(b) < len(commandNames) {
		s = commandNames[b]
	}
	if s == "" {
		s = wire.Msg("unknown (%d)", int64(b))
	}
	if c&ReliableBit != 0 {
		s += ", reliable"
	}
	return s
}

// GameType is the reply's game type byte.
type GameType uint8

const (
	DM            GameType = 0 // deathmatch
	TDM           GameType = 1 // team deathmatch
	CTF           GameType = 2 // capture the flag
	Scavenger     GameType = 3
	TeamScavenger GameType = 4
)

var gameTypeNames = [...]string{"DM", "TDM", "CTF", "Scavenger", "Team Scavenger"}

// Known reports whether g is in the spec's table.
func (g GameType) Known() bool { return int(g) < len(gameTypeNames) }

// Teams reports whether players of this game type play on teams.
func (g GameType) Teams() bool { return g == TDM || g == CTF || g == TeamScavenger }

// String returns the spec's name for g ("DM", "Team Scavenger"), or
// "unknown (N)".
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (g GameType) String() string {
	if g.Known() {
		return gameTypeNames[g]
	}
	return wire.Msg("unknown (%d)", int64(g))
}

// Team is a client's team byte.
type Team uint8

const (
	NoTeam   Team = 0
	TeamRed  Team = 1
	TeamBlue Team = 2
)

var teamNames = [...]string{"none", "red", "blue"}

// Known reports whether t is none, red or blue.
func (t Team) Known() bool { return int(t) < len(teamNames) }

// String returns "none", "red", "blue" or "unknown (N)".
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (t Team) String() string {
	if t.Known() {
		return teamNames[t]
	}
	return wire.Msg("unknown (%d)", int64(t))
}

// Request is the query: the 4-byte token the server echoes.
type Request struct {
	Token uint32
}

// Response is the server's reply to a query (the ServerInfo message).
//
// String fields are UTF-8, decoded from the bytes as sent read as
// Latin-1 (a real server sends ASCII, with colour codes already stripped
// from Title and client names), as in the other protocol packages; they do
// not alias the decoded datagram. AppendResponse writes them back as
// Latin-1.
type Response struct {
	// Reliable is set when the message was sent with the reliable bit
	// (command 0x8d), which a server does when answering a connected
	// client's reliable query; it then carries PacketID.
	Reliable bool
	PacketID uint32

	Token      uint32 // the request's 4 bytes, echoed (read big-endian)
	Title      string
	Locked     bool // the server has a password
	Website    string
	MaxClients uint8
	MaxPlayers uint8
	GameType   GameType
	Map        string // short map name
	NumClients uint8  // connected clients, spectators included
	NumPlayers uint8  // clients actually playing
	Protocol   uint8

	// The extended block, present when Protocol >= ExtendedSince.
	ScoreLimit       int16
	TimeLimit        int16
	JoinSmallestTeam bool
	Clients          []Client // NumClients records

	// HasBuild is set when the message carries a build description after
	// the extended block. The game writes one since protocol 28; decoding
	// follows the bytes, not the protocol number.
	HasBuild bool
	Build    string

	// Extra holds bytes the message's length covers after the last field
	// (for protocols before 27, everything after the protocol byte).
	Extra []byte
}

// Extended reports whether r's protocol carries the extended block.
func (r *Response) Extended() bool { return r.Protocol >= ExtendedSince }

// Client is one connected client of a Response.
type Client struct {
	Name      string
	Team      Team
	Spectator bool
	Ping      int16 // milliseconds; signed on the wire
}

// RawMessage is one message of a datagram, as framed by its length field.
type RawMessage struct {
	Offset   int // where the message starts in the datagram
	Command  Command
	PacketID uint32 // when Command.HasPacketID()
	Data     []byte // the bytes after the header; aliases the datagram
}

// Len is the message's length field: header plus data.
func (m RawMessage) Len() int { return m.Command.headerLen() + len(m.Data) }

// ErrDone is returned by Parser.Next after the last message.
var ErrDone = errors.New("bloodmasters: no more messages")

// StripColors removes the game's colour codes the way the server does
// before it sends titles and names: every '^' is dropped together with the
// character after it, unless that character is another '^' (which then
// starts the next code) or there is none.
func StripColors(s string) string {
	i := 0
	for i < len(s) && s[i] != '^' {
		i++
	}
	if i == len(s) {
		return s
	}
	out := make([]byte, 0, len(s))
	out = append(out, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] != '^' {
			out = append(out, s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] != '^' {
			_, n := utf8.DecodeRuneInString(s[i+1:])
			i += n // the code character, which may take more than one byte in UTF-8
		}
	}
	return string(out)
}
