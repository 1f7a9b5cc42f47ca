package ase

import "github.com/querylens/querylens/codecs"

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of ASE beyond its codec
// (codecs.Description). No master (the All-Seeing Eye's own is long gone;
// MTA's server list is HTTP), no row options (there is one query).
//
// No join link: the protocol serves several games, and the one with a
// link scheme, Multi Theft Auto (mtasa://HOST:PORT), wants the game port,
// which is the query port less QueryPortOffset (or the reply's port
// field), while a join template's {addr} is the address queried. The
// link belongs to the game (docs/protocols/ase.md, "Join links").
var description = codecs.Description{
	Name: Protocol,
	// The full reply lists every player in the game.
	AllPlayers: true,
	// Query ports of the protocol's games, the game port plus 123 where
	// the game has one (GameDig's games table): MTA (22003), Far Cry
	// (49001), Painkiller (3455), Chrome (27015), Xpand Rally (28015),
	// Cross Racing Championship (12321); Far Cry 2's fixed 14001.
	Ports: []int{DefaultPort, 49001 + QueryPortOffset, 3455 + QueryPortOffset, 27015 + QueryPortOffset,
		28015 + QueryPortOffset, 12321 + QueryPortOffset, 14001},
}
