package samp

import "github.com/querylens/querylens/codecs"

// Two registrations, one family: SA-MP with open.mp, and VC:MP, whose
// query is SA-MP's with another magic and another info reply.
func init() {
	codecs.Register(&Codec{})
	codecs.Describe(descriptionSAMP)
	codecs.Register(&Codec{VCMP: true})
	codecs.Describe(descriptionVCMP)
}

// descriptionSAMP: the game's own link (the SA-MP and open.mp launchers
// register samp://); a row asks the info and the rules (which tell open.mp,
// whose third string is a language, from SA-MP, and carry the map name
// and version), not the player list; a listed player list is every
// player.
var descriptionSAMP = codecs.Description{
	Name:       Protocol,
	Join:       "samp://{addr}",
	List:       map[string]string{"players": "none"},
	AllPlayers: true,
}

// descriptionVCMP: no link scheme we know of; a row asks the info alone.
var descriptionVCMP = codecs.Description{
	Name:       ProtocolVCMP,
	List:       map[string]string{"players": "none"},
	AllPlayers: true,
}
