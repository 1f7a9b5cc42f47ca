package samp

// The names the package registers: SA-MP and open.mp share one, VC:MP has
// its own (another magic, another port, another info reply).
const (
	Protocol     = "samp"
	ProtocolVCMP = "vcmp"
)

// Usual query ports: the game port, on which the server also answers
// queries.
const (
	DefaultPort     = 7777
	DefaultPortVCMP = 8192
)

// The magics: a query starts with the client's, a reply with the server's
// (SA-MP echoes its query's; VC:MP answers "VCMP" with "MP04").
const (
	MagicSAMP      = "SAMP"
	MagicVCMP      = "VCMP"
	MagicVCMPReply = "MP04"
)

// Sizes (docs/protocols/samp.md "Datagrams").
const (
	// HeaderLen is the header every query and reply starts with: magic
	// (4), IPv4 address (4), port (u16le), opcode (1).
	HeaderLen = 11
	// PingLen is the ping query and its echo: the header and 4 bytes.
	PingLen = HeaderLen + 4
	// MaxQueryLen is the longest query CheckQuery accepts: the ping.
	// Every other query is the header alone.
	MaxQueryLen = PingLen
	// VCMPVersionLen is the version field that opens VC:MP's info reply.
	VCMPVersionLen = 12
	// NoPlayerList is the player count from which SA-MP servers answer
	// neither 'c' nor 'd' (the list would not fit a datagram); the
	// conversation does not ask them then.
	NoPlayerList = 100
)

// Opcode is a header's last byte: which question, or which answer.
type Opcode byte

const (
	OpInfo     Opcode = 'i' // reply: [VC:MP version:12] password:1 players:u16 max:u16 hostname:s32 gamemode:s32 language:s32
	OpRules    Opcode = 'r' // reply: count:u16 { name:s8 value:s8 }
	OpClients  Opcode = 'c' // reply: count:u16 { name:s8 score:i32 }
	OpDetailed Opcode = 'd' // reply: count:u16 { id:u8 name:s8 score:i32 ping:u32 }
	OpPing     Opcode = 'p' // query and reply: header + 4 bytes echoed
)

// String names the opcode as the fields do.
func (o Opcode) String() string {
	switch o {
	case OpInfo:
		return "info"
	case OpRules:
		return "rules"
	case OpClients:
		return "clients"
	case OpDetailed:
		return "detailed"
	case OpPing:
		return "ping"
	}
	return "opcode " + string(rune(o))
}

// Header is the 11 bytes that open every query and reply. The address and
// port are the server's as the client addressed it; the server echoes them
// and (as far as the servers we know go) does not check them.
type Header struct {
	Magic  [4]byte
	IP     [4]byte
	Port   uint16
	Opcode Opcode
}

// VCMP reports whether the header is VC:MP's (either magic).
func (h Header) VCMP() bool {
	return string(h.Magic[:]) == MagicVCMP || string(h.Magic[:]) == MagicVCMPReply
}

// Request is a query: the header, and the ping's 4 bytes.
type Request struct {
	Header
	Ping [4]byte // with OpPing
}

// Response is one reply datagram: its header and the body its opcode
// says. Text is decoded to UTF-8 from Charset.
type Response struct {
	Header
	Charset Charset // how the text was decoded (not on the wire)
	Ping    [4]byte // OpPing
	Info    ServerInfo
	Rules   []Rule   // OpRules
	Players []Player // OpClients, OpDetailed
}

// ServerInfo is the body of the info reply.
type ServerInfo struct {
	Version    string // VC:MP only: its 12-byte version field, up to the first NUL
	Password   bool
	Players    uint16
	MaxPlayers uint16
	Hostname   string
	Gamemode   string
	// Language is the third string: the server's language to open.mp
	// (and SA-MP 0.3.7-R2 on), its map to older clients and to VC:MP
	// (docs/protocols/samp.md "The third string").
	Language string
}

// Rule is one server rule (SA-MP's "rules": version, mapname, weburl, …).
type Rule struct {
	Name, Value string
}

// Player is one entry of a player list: the 'c' list carries the name and
// score, the 'd' list an id and the ping too. Scores are signed.
type Player struct {
	ID    uint8
	Name  string
	Score int32
	Ping  uint32
}
