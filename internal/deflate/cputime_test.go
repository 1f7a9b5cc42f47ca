//go:build unix

package deflate

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system, all threads) used so far by
// this process: unlike wall time, other processes' load does not inflate it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
