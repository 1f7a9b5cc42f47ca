package mumble

import "github.com/querylens/querylens/codecs"

// The ping says how many users are on a server and how many may be, and
// its version: no name, no map, no list of users (which only a connected
// client sees). Mumble's own links open the client on the server; the
// version parameter tells a client of 1.2 or later that the server is not
// a 1.1 one (docs/protocols/mumble.md "Join link").
func init() {
	codecs.Register(&Codec{})
	codecs.Describe(codecs.Description{
		Name: Protocol,
		Row:  []string{"players", "max"},
		Join: "mumble://{addr}/?version=1.2.0",
	})
}
