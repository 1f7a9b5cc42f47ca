//go:build !js

package zandronum

import "sync"

var scratchPool = sync.Pool{New: func() any { return newScratch() }}

//go:noinline
func getScratch() *scratch { return scratchPool.Get().(*scratch) }

//go:noinline
func putScratch(s *scratch) {
	if keep(s) {
		scratchPool.Put(s)
	}
}
