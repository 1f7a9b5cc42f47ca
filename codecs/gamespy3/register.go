package gamespy3

import "github.com/querylens/querylens/codecs"

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of GameSpy v3 beyond its
// codec (codecs.Description). Its masters speak TCP with a challenge.
var description = codecs.Description{
	Name: Protocol,
	// The full stat lists every player.
	AllPlayers: true,
	// More of its games' usual query ports: Battlefield 2 (29900) and
	// Unreal Tournament 3 (6500).
	Ports: []int{DefaultPort, 29900, 6500},
}
