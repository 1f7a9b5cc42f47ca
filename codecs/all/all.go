// Package all registers every querylens protocol codec with package codecs.
// Import it for its side effect:
//
//	import _ "github.com/querylens/querylens/codecs/all"
package all

import (
	// One line per protocol package; each registers itself in init.
	_ "github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/a2s"
	_ "github.com/querylens/querylens/codecs/ase"
	_ "github.com/querylens/querylens/codecs/bloodmasters"
	_ "github.com/querylens/querylens/codecs/doom3"
	_ "github.com/querylens/querylens/codecs/gamespy1"
	_ "github.com/querylens/querylens/codecs/gamespy2"
	_ "github.com/querylens/querylens/codecs/gamespy3"
	_ "github.com/querylens/querylens/codecs/minecraft"
	_ "github.com/querylens/querylens/codecs/mumble"
	_ "github.com/querylens/querylens/codecs/ogp"
	_ "github.com/querylens/querylens/codecs/quake2"
	_ "github.com/querylens/querylens/codecs/quake3"
	_ "github.com/querylens/querylens/codecs/samp"
	_ "github.com/querylens/querylens/codecs/unreal2"
	_ "github.com/querylens/querylens/codecs/zandronum"
)
