package server

import (
	"sync"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server/ident"
)

// Protocol is what the pages, the commands and the sampler know of a
// protocol beyond its codec: one registration per protocol (the checklist
// in codecs/doc.go). Its Name is the codec's.
type Protocol struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Ports are the usual query ports, the codec's DefaultPort first; a
	// server on one of them is guessed to speak this protocol.
	Ports []int `json:"ports"`
	// Master, if set, says how the protocol lists servers from a master.
	Master *Master `json:"master,omitempty"`
	// Join is a link that starts the game on a server, with {addr}
	// standing for host:port ("zds://{addr}/za"); "" when there is none.
	Join string `json:"join,omitempty"`
	// Row names the row fields (RowFields) a reply of the protocol fills;
	// the browser page leaves the others blank instead of showing zeros.
	Row []string `json:"row"`
	// List are the NewQuery options the server list asks each server
	// with when the server has none of its own: what a row shows, leaving
	// what only the status page shows (which asks with the codec's
	// defaults, everything) to it. Nil asks with the codec's defaults.
	List map[string]string `json:"list,omitempty"`
}

// Master is how a protocol asks a master server for its list.
type Master struct {
	// Options are the NewQuery options that ask a master for its list
	// instead of a server for its status.
	Options map[string]string `json:"options"`
	// Default is the public master (host:port) asked when none is given.
	Default string `json:"default,omitempty"`
	// Port is the masters' usual port, for guessing the protocol of an
	// address.
	Port int `json:"port,omitempty"`
	// Kept says the querylens server keeps this master's lists (see
	// MasterSpec) instead of the page asking the master through the relay.
	Kept bool `json:"kept,omitempty"`
}

// RowFields are the names of the row positions of codecs.AppendSummaryJSON
// (codecs.RowName…), in order: the browser page reads a row through them
// (static/model.js, generated from this list).
var RowFields = []string{
	codecs.RowName:      "name",
	codecs.RowMap:       "map",
	codecs.RowMode:      "mode",
	codecs.RowPlayers:   "players",
	codecs.RowBots:      "bots",
	codecs.RowMax:       "max",
	codecs.RowPassword:  "password",
	codecs.RowCountry:   "country",
	codecs.RowHay:       "hay",
	codecs.RowAntiCheat: "anticheat",
	codecs.RowOS:        "os",
	codecs.RowKeywords:  "keywords",
}

var (
	protoMu sync.Mutex
	protos  = map[string]Protocol{}
)

// Register adds p to the protocol table, for a codec registered (or to be
// registered) under p.Name. Protocols without a registration get one
// derived from their codec. Registering a name twice panics, as it is a
// programming error.
func Register(p Protocol) {
	protoMu.Lock()
	defer protoMu.Unlock()
	if _, dup := protos[p.Name]; dup {
		panic("server: Register called twice for " + p.Name)
	}
	protos[p.Name] = p
}

// LookupProtocol returns the registration of the codec named name, filled
// in from the codec where the registration leaves a field empty.
func LookupProtocol(name string) (Protocol, bool) {
	c, err := codecs.Lookup(name)
	if err != nil {
		return Protocol{}, false
	}
	return protocolOf(c), true
}

func protocolOf(c codecs.Codec) Protocol {
	protoMu.Lock()
	p, ok := protos[c.Name()]
	protoMu.Unlock()
	if !ok {
		p = Protocol{Name: c.Name()}
	}
	if p.Title == "" {
		p.Title = c.Title()
	}
	if len(p.Ports) == 0 && c.DefaultPort() != 0 {
		p.Ports = []int{c.DefaultPort()}
	}
	if p.Ports == nil {
		p.Ports = []int{}
	}
	if p.Row == nil {
		p.Row = RowFields
	}
	return p
}

// Protocols returns the table: every registered codec, sorted by name.
func Protocols() []Protocol {
	var out []Protocol
	for _, c := range codecs.Protocols() {
		out = append(out, protocolOf(c))
	}
	return out
}

// JoinURL is the link that starts the game on the server of r, or "".
func (p Protocol) JoinURL(addr string) string { return ident.JoinURL(p.Join, addr) }

// GuessProtocol guesses the protocol of a "host:port" from the usual ports
// of the protocols and of their masters; "" when no port matches.
func GuessProtocol(port int) string {
	for _, p := range Protocols() {
		for _, q := range p.Ports {
			if q == port {
				return p.Name
			}
		}
	}
	for _, p := range Protocols() {
		if p.Master != nil && p.Master.Port == port {
			return p.Name
		}
	}
	return ""
}

// The registrations of querylens's protocols. A protocol that lists no
// master, has no join link, fills every row field and has its list asked
// with the codec's defaults needs none.
func init() {
	Register(Protocol{
		Name: "zandronum",
		Master: &Master{Options: map[string]string{"master": "true"},
			Default: "master.zandronum.com:15300", Port: 15300},
		// Doomseeker registers zds:// and reads the game from the suffix.
		Join: "zds://{addr}/za",
	})
	Register(Protocol{
		Name: "a2s",
		// The Steam master (Valve Developer Community, "Master Server
		// Query Protocol"); its list is paged, see docs/protocols/a2s.md.
		Master: &Master{Options: map[string]string{"master": "true"},
			Default: "hl2master.steampowered.com:27011", Port: 27011, Kept: true},
		// The Steam client's own link: it starts the game the server runs.
		Join: "steam://connect/{addr}",
		// A row shows INFO and the player names (the search reads them);
		// RULES, up to 64 datagrams on a big server, is the status
		// page's. Steam's own browser asks its list the same way.
		List: map[string]string{"rules": "false"},
	})
	Register(Protocol{
		Name: "quake3",
		// ioquake3's own master (its sv_master2; sv_master1 is id's); other games' masters
		// take a game name and protocol number: querylens master -p quake3
		// -o game=Xonotic -o protocol=3 -o ext=true HOST:PORT.
		Master: &Master{Options: map[string]string{"master": "true"},
			Default: "master.ioquake3.org:27950", Port: 27950, Kept: true},
	})
	// GameSpy v1 and v3 masters speak TCP with a challenge: out of reach
	// of a UDP relay. More of their games' usual query ports: Battlefield
	// 1942 (23000) and Medal of Honor (12300); Battlefield 2 (29900) and
	// Unreal Tournament 3 (6500). GameSpy v1's list asks the default,
	// \status\: UT's password is in the rules section, so no cheaper query
	// (\info\\players\) fills the row.
	Register(Protocol{Name: "gamespy1", Ports: []int{7778, 23000, 12300}})
	Register(Protocol{Name: "gamespy3", Ports: []int{25565, 29900, 6500}})
	// A row shows the server fields and the players; the team, rule,
	// add-on and limit lists are the status page's.
	Register(Protocol{Name: "ogp",
		List: map[string]string{"teams": "false", "rules": "false", "addons": "false", "limits": "false"}})
}
