// Package games is the table of every game GameDig knows, by GameDig's id:
// the querylens protocol that answers what GameDig answers for the game,
// its query options, its query port and, where a master lists its
// servers, the master's filter. `querylens query -g ID`, `querylens
// games` and the browse page's game picker read it.
//
// The table (gamedig.go) is generated from GameDig's own games list at a
// pinned version by scripts/gen-games.mjs (go tool task gen:games), with
// docs/games.md; it names protocols as data, which the lint allows in that
// file only. Whether a game is served is not in the data: it is whether
// its protocol is registered in this binary (codecs.Lookup), so the table
// stays right as protocols are added.
//
// Server data: the browser module never carries it.
package games

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
)

// Game is one game of GameDig's list.
type Game struct {
	// ID is GameDig's id for the game ("rust", "teamfortress2").
	ID string
	// OldIDs are ids GameDig took for the game before (its extra.old_id),
	// which Lookup takes too.
	OldIDs []string
	Name   string
	Year   int // the release year GameDig gives; 0: none
	// GameDig is the protocol GameDig asks the game's servers with.
	GameDig string
	// Protocol is the querylens protocol that answers what GameDig's
	// answers for the game; "" when querylens has none (Why says why).
	Protocol string
	// Options are the query options the game needs beyond its protocol's
	// defaults (Doom 3's engine: the game).
	Options map[string]string
	// Port is the game's usual game port; 0 when GameDig gives none.
	Port int
	// QueryPort, when not 0, is the game's query port whatever its game
	// port.
	QueryPort int
	// Offsets: the query port is the game port plus an offset (GameDig
	// tries each in turn; querylens asks with the first).
	Offsets []int
	// Master is the protocol whose master lists the game's servers with
	// Filter (a2s: Steam's, by app id); MasterAddr the master (host:port)
	// when it is not that protocol's default one.
	Master, MasterAddr, Filter string
	// Why is why the game is not served while Protocol is not built in
	// (or, with no Protocol, at all): "HTTP only: …", "a TCP protocol not
	// done yet: …", "a UDP protocol not done yet: …".
	Why string
	// Note says where querylens's reading differs from GameDig's.
	Note string
}

// All returns every game, sorted by id. The slice is shared: do not
// modify it.
func All() []Game { return table }

// Lookup returns the game GameDig calls id (or called, an old id),
// ignoring case.
func Lookup(id string) (Game, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, g := range table {
		if g.ID == id {
			return g, true
		}
	}
	for _, g := range table {
		for _, o := range g.OldIDs {
			if o == id {
				return g, true
			}
		}
	}
	return Game{}, false
}

// Served says whether this binary answers what GameDig answers for the
// game: its protocol is registered.
func (g Game) Served() bool {
	if g.Protocol == "" {
		return false
	}
	_, err := codecs.Lookup(g.Protocol)
	return err == nil
}

// WhyNot is why the game is not served, "" when it is.
func (g Game) WhyNot() string {
	switch {
	case g.Served():
		return ""
	case g.Why != "":
		return g.Why
	default:
		return "querylens has no " + g.Protocol + " protocol built in"
	}
}

// DefaultQueryPort is the port a server of the game answers queries on
// when it runs on its usual ports; 0 when GameDig gives no port.
func (g Game) DefaultQueryPort() int {
	switch {
	case g.QueryPort != 0:
		return g.QueryPort
	case g.Port != 0:
		return g.QueryPortFor(g.Port)
	}
	return 0
}

// QueryPortFor is the query port of a server whose game port is port, as
// GameDig's first attempt picks it: the game port plus the game's offset;
// the game's fixed query port when port is its usual game port; else port
// itself (a query port given as such).
func (g Game) QueryPortFor(port int) int {
	switch {
	case len(g.Offsets) > 0:
		return port + g.Offsets[0]
	case g.QueryPort != 0 && port == g.Port:
		return g.QueryPort
	}
	return port
}

// QueryPortText says how the query port follows from the game port, for
// tables: "27015", "2303 (2302 + 1)", "game port + 123".
func (g Game) QueryPortText() string {
	if g.QueryPort != 0 {
		return strconv.Itoa(g.QueryPort)
	}
	off := ""
	for i, o := range g.Offsets {
		if i > 0 {
			off += " or "
		}
		if o < 0 {
			off += "− " + strconv.Itoa(-o)
		} else {
			off += "+ " + strconv.Itoa(o)
		}
	}
	switch {
	case off != "" && g.Port != 0:
		return strconv.Itoa(g.Port+g.Offsets[0]) + " (" + strconv.Itoa(g.Port) + " " + off + ")"
	case off != "":
		return "game port " + off
	case g.Port != 0:
		return strconv.Itoa(g.Port)
	}
	return ""
}

// Counts are how many games the table has and how many this binary
// serves.
func Counts() (served, all int) {
	for _, g := range table {
		if g.Served() {
			served++
		}
	}
	return served, len(table)
}
