package zandronum

import "github.com/querylens/querylens/codecs"

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of Zandronum beyond its
// codec (codecs.Description).
var description = codecs.Description{
	Name: Protocol,
	// SQF_PLAYERDATA lists every client.
	AllPlayers: true,
	// The page asks the master itself, through the relay: one request,
	// a list in a few segments (docs/protocols/zandronum.md 2.9).
	Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"},
		Default: "master.zandronum.com:15300", Port: DefaultMasterPort},
	// Doomseeker registers zds:// and reads the game from the suffix.
	Join: "zds://{addr}/za",
	// A server answers one address once per 10 s and ignores it in
	// between (sv_queryignoretime; docs/protocols/zandronum.md).
	MinAskMs: 10_000,
	// Every datagram is its payload Huffman-coded (package huffman).
	Wrapped: map[string]string{"payload": "huffman"},
	// Team numbers without a team list name the defaults (spec 2.6).
	Teams: []string{"Blue", "Red", "Green", "Gold"},
}
