package doom3

import "github.com/querylens/querylens/codecs"

// description is what the generic code knows of id Tech 4 beyond its
// codec: the games' usual ports (Doom 3 first; Wolfenstein shares it and
// qstat's own 27758), a reply that lists every client.
var description = codecs.Description{
	Name:       Protocol,
	Ports:      []int{DefaultPort, PortQuake4, PortPrey, PortETQW, PortWolfenstein},
	AllPlayers: true,
}

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}
