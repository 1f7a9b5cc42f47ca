package ase

// Protocol is the registry name of the codec.
const Protocol = "ase"

// DefaultPort is the query port of a Multi Theft Auto server: its game
// port 22003 plus QueryPortOffset. The other games of the protocol answer
// on their own game port plus the same offset (Far Cry 49001 → 49124,
// Painkiller 3455 → 3578, …) or on a fixed port (Far Cry 2: 14001).
const DefaultPort = 22003 + QueryPortOffset

// QueryPortOffset is what most ASE games add to their game port to answer
// queries on (MTA's documentation: the query port is the server port plus
// 123; GameDig's games table gives the same offset for ten of its twelve
// ASE games). A reply's Port field is the game port.
const QueryPortOffset = 123

// Magic starts every reply to the full query.
const Magic = "EYE1"

// QueryFull is the one query byte: the full status (server, rules and
// players). MTA's server has lighter queries of its own for its in-game
// browser; they are not part of what the other games answer, and not
// decoded here.
const QueryFull = 's'

// Limits.
const (
	// MaxQueryLen is the longest query CheckQuery accepts: the one byte.
	MaxQueryLen = 1
	// MaxStringLen is the longest string a length byte can count: the
	// byte counts itself, so 255 says 254 bytes.
	MaxStringLen = 254
)

// Flags say which fields of a player entry follow its flags byte. A field
// whose bit is off is absent from the wire: not an empty string, not zero.
type Flags uint8

const (
	FlagName  Flags = 1 << iota // the player's name
	FlagTeam                    // a team name (text)
	FlagSkin                    // a skin or model name
	FlagScore                   // score, decimal text
	FlagPing                    // ping in milliseconds, decimal text
	FlagTime                    // time on the server, decimal text

	// FlagsKnown are the bits with a meaning; a reader ignores the others
	// (a warning), as GameDig and qstat do.
	FlagsKnown = FlagName | FlagTeam | FlagSkin | FlagScore | FlagPing | FlagTime
)

// flagFields names the field of each flag bit, in wire order: the fields
// of a player entry follow in this order, each only when its bit is set.
var flagFields = [...]string{"name", "team", "skin", "score", "ping", "time"}

// String lists the bits set by their field names ("name score ping"), and
// the unknown ones as "0x40".
func (f Flags) String() string {
	s := ""
	for i, n := range flagFields {
		if f&(1<<i) != 0 {
			if s != "" {
				s += " "
			}
			s += n
		}
	}
	if u := f &^ FlagsKnown; u != 0 {
		if s != "" {
			s += " "
		}
		s += "0x" + string("0123456789abcdef"[u>>4]) + string("0123456789abcdef"[u&15])
	}
	return s
}

// Request is the query datagram: the one byte QueryFull.
type Request struct{}

// Rule is one key/value pair of a reply's rules, in wire order.
type Rule struct {
	Key, Value string
}

// Player is one entry of a reply's player list. Fields whose bit is off in
// Flags are absent from the wire and "" here; Has tells them apart from a
// field sent empty.
type Player struct {
	// Flags are the bits as sent, unknown ones included.
	Flags Flags
	Name  string
	Team  string
	Skin  string
	Score string
	Ping  string
	Time  string
}

// Has reports whether the entry carries the field of bit f.
func (p *Player) Has(f Flags) bool { return p.Flags&f != 0 }

// field returns the field of flag bit i (0: name … 5: time).
func (p *Player) field(i int) *string {
	switch i {
	case 0:
		return &p.Name
	case 1:
		return &p.Team
	case 2:
		return &p.Skin
	case 3:
		return &p.Score
	case 4:
		return &p.Ping
	}
	return &p.Time
}

// Response is the reply to the full query. Every value is text as the
// server sent it (bytes in a Go string: UTF-8 from MTA, the code page of
// older games); the neutral view (Codec.Decode) reads numbers out of them and
// converts text that is not UTF-8 from Latin-1.
type Response struct {
	Game       string // the game's short name: "mta", "farcry", …
	Port       string // the game port, decimal
	Name       string // the server's name
	GameType   string // the mode: "Freeroam", "ASSAULT", …
	Map        string
	Version    string
	Password   string // "1" when a password is needed, else "0"
	NumPlayers string // decimal
	MaxPlayers string // decimal
	Rules      []Rule
	Players    []Player
}

// header lists the fixed strings of r in wire order with their field
// names.
func (r *Response) header() [9]struct {
	name string
	v    *string
} {
	return [9]struct {
		name string
		v    *string
	}{
		{"game", &r.Game}, {"port", &r.Port}, {"hostname", &r.Name}, {"gametype", &r.GameType},
		{"map", &r.Map}, {"version", &r.Version}, {"password", &r.Password},
		{"numplayers", &r.NumPlayers}, {"maxplayers", &r.MaxPlayers},
	}
}

// Rule returns the value of the first rule named key.
func (r *Response) Rule(key string) (string, bool) {
	for _, x := range r.Rules {
		if x.Key == key {
			return x.Value, true
		}
	}
	return "", false
}
