package unreal2

import "github.com/querylens/querylens/codecs"

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of Unreal Engine 2 beyond
// its codec (codecs.Description).
//
// No join link: UT2004 registers ut2004:// with Windows (ut2004://HOST:PORT
// starts the game and joins), but it takes the game port, while {addr} is
// the query port (the game port plus one), and it would start UT2004 for
// a Killing Floor or Red Orchestra server too.
var description = codecs.Description{
	Name: Protocol,
	// Killing Floor (7708), UT2003 and Darkest Hour (7758), Red Orchestra
	// (7759): GameDig's game ports plus one.
	Ports: []int{DefaultPort, 7708, 7758, 7759},
	// A row needs the rules (the password) but not the players.
	List: map[string]string{"players": "false"},
	// Every player is listed, bots too (ping 0).
	AllPlayers: true,
	// qstat's reading of the stats id's team bits.
	Teams:    []string{"Red", "Blue"},
	ReplyCap: codecs.ReplyCap{Bytes: MaxReplyBytes, Datagrams: MaxDatagrams},
}
