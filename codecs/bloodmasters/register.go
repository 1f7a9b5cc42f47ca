package bloodmasters

import "github.com/querylens/querylens/codecs"

// The protocol says little beyond its codec: no master, no join link,
// every row field, its list asked with the codec's defaults; its replies
// list every player (codecs.Description).
func init() {
	codecs.Register(&Codec{})
	codecs.Describe(codecs.Description{
		Name: Protocol,
		// The extended status lists every client.
		AllPlayers: true,
	})
}
