package ogp

import "github.com/querylens/querylens/codecs"

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of OGP beyond its codec
// (codecs.Description).
var description = codecs.Description{
	Name: Protocol,
	// The player list has every player.
	AllPlayers: true,
	// A row shows the server fields and the players; the team, rule,
	// add-on and limit lists are the status page's.
	List: map[string]string{"teams": "false", "rules": "false", "addons": "false", "limits": "false"},
}
