package quake3

import "strings"

// Protocol is the registry name of the codec.
const Protocol = "quake3"

// DefaultPort is the game's usual query port; masters listen on
// DefaultMasterPort.
const (
	DefaultPort       = 27960
	DefaultMasterPort = 27950
)

// MaxQueryLen is the longest query CheckQuery accepts: the longest
// getserversExt a browser sends (game name, protocol and a few filters) is
// well under it.
const MaxQueryLen = 160

// Magic starts every connectionless datagram.
const Magic = "\xff\xff\xff\xff"

// The commands.
const (
	CmdGetInfo        = "getinfo"               // → infoResponse
	CmdGetStatus      = "getstatus"             // → statusResponse
	CmdGetServers     = "getservers"            // → getserversResponse (IPv4 entries)
	CmdGetServersExt  = "getserversExt"         // → getserversExtResponse (IPv4 and IPv6)
	CmdInfoResponse   = "infoResponse"          // "\n" infostring
	CmdStatusResponse = "statusResponse"        // "\n" infostring "\n" player lines
	CmdServers        = "getserversResponse"    // entries
	CmdServersExt     = "getserversExtResponse" // entries
)

// Request is a query: getinfo or getstatus to a game server, getservers or
// getserversExt to a master.
type Request struct {
	Command string
	// Challenge is echoed by the server as the "challenge" key (getinfo,
	// getstatus); "" sends none.
	Challenge string
	// Game is the game name of a master query: required by getserversExt,
	// optional for getservers (Quake III itself sends none).
	Game string
	// Version is the network protocol number of a master query (68 for
	// Quake III 1.32).
	Version int
	// Filters are the master query's words: "empty", "full", "gametype=4",
	// "ipv4", "ipv6", ….
	Filters []string
	// End is what follows the last word: "", "\n" or "\x00" (some
	// clients end their queries so).
	End string
}

// IsMaster reports whether the request is for a master server.
func (q *Request) IsMaster() bool {
	return q.Command == CmdGetServers || q.Command == CmdGetServersExt
}

// Var is one \key\value pair of an infostring, in wire order.
type Var struct {
	Key, Value string
}

// Player is one player line of a statusResponse.
type Player struct {
	Score, Ping int
	// Team is the team number some games add (DarkPlaces before the name,
	// Warsow after it); HasTeam says whether the line had one.
	Team    int
	HasTeam bool
	Name    string // as sent, colour codes kept
}

// Response is a reply: an infoResponse or statusResponse from a game
// server, or one datagram of a master's list.
type Response struct {
	Command string
	Vars    []Var
	Players []Player
	// Servers are a master reply's entries, in wire order.
	Servers []Addr
	// End says a master reply carried the end-of-list marker.
	End bool
}

// Var returns the value of the first key named key (ASCII case-insensitive,
// as the engines compare keys).
func (r *Response) Var(key string) (string, bool) {
	for _, v := range r.Vars {
		if strings.EqualFold(v.Key, key) {
			return v.Value, true
		}
	}
	return "", false
}

// StripColors removes the colour codes of the id Tech 3 games from s:
//
//   - '^' followed by an ASCII letter or digit (ioquake3's rule: ^0–^9 are
//     the classic eight colours and two more, letters are used by mods such
//     as CPMA and by Call of Duty);
//   - '^x' followed by three hex digits (DarkPlaces and Xonotic's RGB
//     colours).
//
// "^^" is one literal '^' (DarkPlaces' escape; without it "^^1" would
// lose the 1). Any other '^' stays: before punctuation, a space or at the
// end. Control characters are dropped and the result is trimmed.
func StripColors(s string) string {
	if !strings.ContainsAny(s, "^") && !hasControl(s) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '^' && i+1 < len(s) {
			n := s[i+1]
			if n == 'x' && i+4 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) {
				i += 4
				continue
			}
			if isAlnum(n) {
				i++
				continue
			}
			if n == '^' {
				i++ // write one '^'
			}
		}
		if c < 0x20 || c == 0x7f {
			continue
		}
		b.WriteByte(c)
	}
	return strings.TrimSpace(b.String())
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
