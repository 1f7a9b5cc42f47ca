//go:build !js

package zandronum

import "sync"

var scratchPool = sync.Pool{New: func() any { return newScratch() }}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func putScratch(s *scratch) {
	if keep(s) {
		scratchPool.Put(s)
	}
}
