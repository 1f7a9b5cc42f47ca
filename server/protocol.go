package server

import (
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server/ident"
)

// Protocol is what the pages and the commands know of a protocol beyond
// its codec: a view of its codecs.Description (said once, in the codec's
// package: the checklist in codecs/doc.go), as the pages receive it in
// JSON. Its Name is the codec's.
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
	// MinAskMs is the least time between two asks of one server, in
	// milliseconds (0: none).
	MinAskMs int `json:"minAskMs,omitempty"`
	// AntiCheat labels a row's anti-cheat tag ("VAC"); "": a generic one.
	AntiCheat string `json:"antiCheat,omitempty"`
	// Transport is "udp" or "tcp".
	Transport string `json:"transport"`

	desc codecs.Description
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
	// Games says a filter picks one game's servers by its id (the browser
	// page's game picker, Games).
	Games bool `json:"games,omitempty"`
	// Filter says the master takes a filter.
	Filter bool `json:"filter,omitempty"`
}

// Description is the codec's description the view was made from.
func (p Protocol) Description() codecs.Description { return p.desc }

// Teams are the protocol's team names by index, for a reply that numbers
// its players' teams without naming them.
func (p Protocol) Teams() []string { return p.desc.Teams }

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

// LookupProtocol returns the view of the codec registered as name.
func LookupProtocol(name string) (Protocol, bool) {
	c, err := codecs.Lookup(name)
	if err != nil {
		return Protocol{}, false
	}
	return protocolOf(c), true
}

func protocolOf(c codecs.Codec) Protocol {
	d := codecs.DescriptionOf(c)
	p := Protocol{Name: c.Name(), Title: c.Title(), Ports: d.Ports, Join: d.Join, Row: d.Row, List: d.List,
		MinAskMs: d.MinAskMs, AntiCheat: d.AntiCheat, Transport: d.Transport.String(), desc: d}
	if m := d.Master; m != nil {
		p.Master = &Master{Options: m.Options, Default: m.Default, Port: m.Port, Kept: m.Kept, Games: m.Games, Filter: m.Filter != nil}
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
