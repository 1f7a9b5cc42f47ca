package bloodmasters

import "github.com/querylens/querylens/codecs"

// The protocol says nothing beyond its codec: no master, no join link,
// every row field, its list asked with the codec's defaults
// (codecs.Description).
func init() {
	codecs.Register(&Codec{})
	codecs.Describe(codecs.Description{Name: Protocol})
}
