package codecs

// Kind says what a decoded datagram or message is (docs/protocols/json.md "kind").
type Kind string

const (
	KindQuery        Kind = "query"         // a request a client sends to a game server
	KindResponse     Kind = "response"      // a server's answer with data
	KindChallenge    Kind = "challenge"     // OGP: the server wants the query again with a number
	KindDenied       Kind = "denied"        // the server refused (see Message.Denied)
	KindMasterQuery  Kind = "master-query"  // a request a client sends to a master server
	KindMasterList   Kind = "master-list"   // a master's list of servers
	KindMasterDenied Kind = "master-denied" // the master refused (see Message.Denied)
)

// Reasons a server or master refused, for Message.Denied.
const (
	DeniedRateLimited  = "rate-limited"
	DeniedBanned       = "banned"
	DeniedWrongVersion = "wrong-version"
)

// Warnings a decoder may attach to a message that still decoded.
const (
	WarnTruncated     = "truncated"
	WarnTrailing      = "trailing bytes"
	WarnUnknownFlags  = "unknown flag bits"
	WarnLegacyHuffman = "legacy huffman form"
	// WarnUnlisted: the reply counts more players than it lists (A2S:
	// players still connecting are counted, not listed). The players
	// listed are decoded; the count is the server's.
	WarnUnlisted = "players counted but not listed"
)

// Message is one decoded message in the protocol-neutral shape of docs/protocols/json.md.
// Decoders fill Fields with every decoded field of the protocol; Info is the
// neutral view for kind "response"; Servers for kind "master-list".
type Message struct {
	Protocol string
	Kind     Kind
	Denied   string   // with KindDenied / KindMasterDenied
	Info     *Info    // with KindResponse
	Servers  []string // with KindMasterList, "ip:port" in the order received
	Fields   Object
	Warnings []string

	// Layers and Spans are filled only when the caller asked for spans.
	Layers []Layer
	Spans  []Span
}

// Warn adds w to the warnings unless it is already there.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (m *Message) Warn(w string) {
	for _, x := range m.Warnings {
		if x == w {
			return
		}
	}
	m.Warnings = append(m.Warnings, w)
}

// Info is the protocol-neutral server view every page uses (docs/protocols/json.md "info").
// A key is present in the JSON only when its Has bit is set.
type Info struct {
	Has        InfoHas
	Name       string
	Map        string
	GameType   string
	Version    string
	Password   bool
	NumPlayers int
	MaxPlayers int
	MaxClients int
	// NumBots is how many of NumPlayers are bots, when the server counts
	// them itself (A2S's info reply); without it the players flagged Bot
	// are the bots.
	NumBots int
	// AntiCheat says the server runs the anti-cheat its protocol reports
	// (A2S: VAC).
	AntiCheat bool
	// OS names the server's operating system ("Linux", "Windows", "macOS").
	OS string
	// Keywords are the server's own tags, one string as sent (A2S's
	// keywords, comma-separated by convention only).
	Keywords string
	Players  []Player
	Teams    []Team
	Rules    [][2]string
}

// InfoHas marks which keys of Info the protocol carried.
type InfoHas uint16

const (
	HasName InfoHas = 1 << iota
	HasMap
	HasGameType
	HasVersion
	HasPassword
	HasNumPlayers
	HasMaxPlayers
	HasMaxClients
	HasPlayers
	HasTeams
	HasRules
	HasNumBots
	HasAntiCheat
	HasOS
	HasKeywords
)

// Player is one entry of Info.Players. Team is the protocol's team number;
// HasTeam false means the player is on no team (JSON null).
type Player struct {
	Name      string
	Score     int
	Ping      int
	Team      int
	HasTeam   bool
	Spectator bool
	Bot       bool
}

// Team is one entry of Info.Teams.
type Team struct {
	Name  string
	Score int
}

// Rule returns the value of the first rule named key.
func (in *Info) Rule(key string) (string, bool) {
	for _, r := range in.Rules {
		if r[0] == key {
			return r[1], true
		}
	}
	return "", false
}
