package zandronum

import "sync/atomic"

// spare is the one scratch kept between decodes: the browser runs them
// one at a time.
var spare atomic.Pointer[scratch]

func getScratch() *scratch {
	if s := spare.Swap(nil); s != nil {
		return s
	}
	return newScratch()
}

func putScratch(s *scratch) {
	if keep(s) {
		spare.Store(s)
	}
}
