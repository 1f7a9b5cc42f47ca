package main

import (
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// cpuHog is a bounded busy loop on one core, the load of the browser
// section's loaded runs: a Go goroutine locked to its OS thread, that
// thread pinned to CPU 0, spinning until stop is called or limit passes,
// whichever comes first, so that a failed run cannot leave it running.
type cpuHog struct {
	quit  atomic.Bool
	done  chan struct{}
	spins atomic.Uint64
	pin   error // why pinning failed, if it did (the loop still runs)
}

// hogCPU is the core the hog spins on.
const hogCPU = 0

func startCPUHog(limit time.Duration) *cpuHog {
	h := &cpuHog{done: make(chan struct{})}
	pinned := make(chan error, 1)
	go func() {
		defer close(h.done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var set unix.CPUSet
		set.Set(hogCPU)
		pinned <- unix.SchedSetaffinity(0, &set) // 0: this thread
		end := time.Now().Add(limit)
		x := uint64(1)
		for n := uint64(0); ; n++ {
			x = x*6364136223846793005 + 1442695040888963407 // some work the compiler keeps
			if n&0xfffff == 0 {
				h.spins.Add(0x100000)
				if h.quit.Load() || time.Now().After(end) {
					break
				}
			}
		}
		if x == 0 {
			h.spins.Add(1)
		}
	}()
	h.pin = <-pinned
	return h
}

// stop ends the loop and waits for it.
func (h *cpuHog) stop() {
	h.quit.Store(true)
	<-h.done
}
