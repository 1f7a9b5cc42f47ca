package quake2

import "strconv"

// The registry names of the package's three codecs, one per dialect.
const (
	Protocol           = "quake2"     // Quake II
	ProtocolQuakeWorld = "quakeworld" // QuakeWorld
	ProtocolHexen2     = "hexen2"     // HexenWorld (Hexen II's internet play)
)

// The usual ports: a server's query port, and a master's.
const (
	DefaultPort           = 27910 // Quake II
	DefaultPortQuakeWorld = 27500
	DefaultPortHexen2     = 26950 // HexenWorld; the game port is 26900
	DefaultMasterPort     = 27900 // Quake II masters
	DefaultMasterPortQW   = 27000 // QuakeWorld masters
)

// MaxQueryLen is the longest query CheckQuery accepts: qstat's
// "\xff\xff\xff\xffstatus 23\n" is 14 bytes.
const MaxQueryLen = 32

// Magic starts every connectionless datagram of the id engines.
const Magic = "\xff\xff\xff\xff"

// Dialect is the game whose flavour of the protocol a message is in.
type Dialect uint8

const (
	Quake2     Dialect = iota // status → "print\n", players `score ping "name"`
	QuakeWorld                // status → 'n', players `id frags time ping "name" "skin" top bottom`
	Hexen2                    // a fifth 0xFF before status and before the 'n'
)

// Protocol is the dialect's registry name.
func (d Dialect) Protocol() string {
	switch d {
	case QuakeWorld:
		return ProtocolQuakeWorld
	case Hexen2:
		return ProtocolHexen2
	}
	return Protocol
}

// The commands, with the layout of what follows them.
const (
	CmdStatus  = "status" // [" " flags] end: to a server (HexenWorld: after a fifth FF)
	CmdQWList  = "c"      // end: to a QuakeWorld master, no magic
	CmdQ2List  = "query"  // end: to a Quake II master, no magic
	HdrPrint   = "print\n"
	HdrQWPrint = "n"       // QuakeWorld's A2C_PRINT; HexenWorld's is FF 'n'
	HdrQWList  = "d\n"     // magic, then 6-byte entries
	HdrQ2List  = "servers" // magic, then ' ' or '\n', then 6-byte entries
)

// Request is a query: status to a game server, or a master's list query.
type Request struct {
	Dialect Dialect
	// Command is CmdStatus, or CmdQWList / CmdQ2List to a master.
	Command string
	// Flags is status's argument as qstat sends it ("23"); "" sends none.
	Flags string
	// End is what follows the last word: "", "\n", "\x00" or "\n\x00".
	End string
}

// IsMaster reports whether the request is for a master server.
func (q *Request) IsMaster() bool { return q.Command != CmdStatus }

// Var is one \key\value pair of the serverinfo, in wire order.
type Var struct {
	Key, Value string
}

// Player is one player line. Quake II fills Score, Ping, Name and, from
// the servers that add it, Address; QuakeWorld and HexenWorld fill every
// field but Address (Team only from the servers that add it).
type Player struct {
	ID, Score, Time, Ping int // Time: minutes connected
	// Name and Skin are as sent, each byte one Latin-1 code point (the
	// high-bit Quake characters kept: Readable maps them).
	Name, Skin  string
	Top, Bottom int // shirt and pants colours
	// Team is the team MVDSV adds after the colours when asked with
	// status's flag 16 (qstat's "status 23"); HasTeam says it did.
	Team       string
	HasTeam    bool
	Address    string
	HasAddress bool
}

// Addr is one master-list entry: an IPv4 address and a port.
type Addr struct {
	IP   [4]byte
	Port uint16
}

// String is "a.b.c.d:port".
func (a Addr) String() string {
	b := make([]byte, 0, 21)
	for i, c := range a.IP {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(c), 10)
	}
	return string(strconv.AppendUint(append(b, ':'), uint64(a.Port), 10))
}

// Response is a reply: a server's status or a master's list.
type Response struct {
	Dialect Dialect
	Master  bool
	Vars    []Var
	Players []Player
	Servers []Addr
	// Sep is the byte after a Quake II master's "servers": ' ' or '\n'.
	Sep byte
	// Nul says the reply ends with a NUL, as QuakeWorld's do.
	Nul bool
}

// Var returns the value of the first key named key (exact match, as the
// engines' Info_ValueForKey compares).
func (r *Response) Var(key string) (string, bool) {
	for _, v := range r.Vars {
		if v.Key == key {
			return v.Value, true
		}
	}
	return "", false
}

// readable maps the first 32 characters of the Quake character set (and
// the same glyphs again at 0x80) to the ASCII look-alikes players read
// them as: dots, brackets, the gold digits 0x12-0x1B and the pieces of
// the bar (0x1D-0x1F) that servers draw lines with.
const readable = ".____.____ _ >..[]0123456789.<->"

// Readable maps text in the Quake character set, as decoded (each byte one
// code point, Latin-1), to what it shows: the high bit selects the
// coloured (red or gold) half of the font and is dropped, the glyphs
// below 0x20 become their ASCII look-alikes, and the result is trimmed.
// Newlines and tabs become spaces. QuakeWorld, HexenWorld and Quake II
// share the font's layout.
func Readable(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return trim(s)
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			b = append(b, '?')
			continue
		}
		c := byte(r) & 0x7f
		switch {
		case c == '\n' || c == '\t' || c == '\r':
			c = ' '
		case c < 0x20:
			c = readable[c]
		case c == 0x7f:
			c = '_'
		}
		b = append(b, c)
	}
	return trim(string(b))
}

func trim(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
